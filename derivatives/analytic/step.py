"""One integrator step: the implicit-function-theorem solve and the discrete Jacobians.

**Continuous part.** From M(a − a₀) − Jᵀf = 0 (see :mod:`.constraint`),

    (M + JᵀHJ) [da/dq, da/dv, da/du] = [rhs_q, rhs_v, rhs_u],
    rhs_q = −∂RNEA(q, v, a)/∂q + ∂(qfrc_passive + qfrc_actuator)/∂q + ∂(Jᵀf)/∂q|_f
            + Jᵀ (−H E + (f ρ) ⊙ dpos),
    rhs_v = ∂qfrc_smooth/∂v − (HJ)ᵀ diag(B) J,       rhs_u = ∂qfrc_actuator/∂u

(E and ρ as in :mod:`.constraint`).

**Discrete part.** Euler (with MuJoCo's implicit joint damping) and implicitfast both advance
v' = v + h a_e with W a_e = M a (= qfrc_smooth + qfrc_constraint) and W = M + h diag(d): d is the
dof damping for Euler, the damping plus the actuators' velocity gains for implicitfast. Since
∂W/∂q = ∂M/∂q,

    dv'/dq = h W⁻¹ (M da/dq + ∂(M y)/∂q),  y = a − a_e,
    dv'/dv = I + h W⁻¹ M da/dv,            dv'/du = h W⁻¹ M da/du,

computed as h X + h W⁻¹ ([∂(M y)/∂q | 0 | 0] − h diag(d) X) with X = [da/dq | da/dv | da/du]
(W⁻¹ M = I − h W⁻¹ diag(d): no product with M).

Positions follow q' = q ⊕ h v'. For scalar dofs dq'/dq = I + h dv'/dq; for a three-dof rotation
(ball, free-joint orientation) q' = q exp(h ω'), so with θ = h ω' and t = ‖θ‖

    dq'/dq = exp(−[θ]ₓ) + h J_r(θ) dv'/dq,
    J_r(θ) = I − (1 − cos t)/t² [θ]ₓ + (t − sin t)/t³ [θ]ₓ²,

the blocks of ``mjd_quatIntegrate``. The state is (dq, dv) in ``mjd_transitionFD``'s tangent
space (no activations: the gate excludes them).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from derivatives.analytic.actuation import implicit_damping
from derivatives.analytic.bundles import P_ACTUATION, P_IMPLICITFAST, P_TIMESTEP
from derivatives.analytic.linalg import cholesky, cholesky_solve, dense_from_sparse


@njit(cache=True, nogil=True)
def so3_blocks(theta, rot, jac):
    """rot = exp(−[θ]ₓ) and jac = J_r(θ), the right Jacobian of SO(3)."""
    t2 = theta[0] * theta[0] + theta[1] * theta[1] + theta[2] * theta[2]
    t = np.sqrt(t2)
    if t < 1e-4:
        # series: sin t / t, (1 − cos t)/t², (t − sin t)/t³
        a = 1.0 - t2 / 6.0
        b = 0.5 - t2 / 24.0
        c = 1.0 / 6.0 - t2 / 120.0
    else:
        a = np.sin(t) / t
        b = (1.0 - np.cos(t)) / t2
        c = (t - np.sin(t)) / (t2 * t)
    kx = np.zeros((3, 3))
    kx[0, 1], kx[0, 2] = -theta[2], theta[1]
    kx[1, 0], kx[1, 2] = theta[2], -theta[0]
    kx[2, 0], kx[2, 1] = -theta[1], theta[0]
    for i in range(3):
        for j in range(3):
            k2 = kx[i, 0] * kx[0, j] + kx[i, 1] * kx[1, j] + kx[i, 2] * kx[2, j]
            eye = 1.0 if i == j else 0.0
            rot[i, j] = eye - a * kx[i, j] + b * k2
            jac[i, j] = eye - b * kx[i, j] + c * k2


@njit(cache=True, nogil=True)
def integration_matrix(m, d, M, damping, damping_factor, acc_e):
    """The dense mass matrix ``M``, the damping d of W = M + h diag(d) (``damping`` holds the
    model's share on entry; implicitfast adds the actuators'), the Cholesky factor of W and
    a_e = W⁻¹ M a into ``acc_e`` (nv, 1). False if W is not positive definite."""
    nv = M.shape[0]
    params = m.params
    h = params[P_TIMESTEP]
    qacc = d.qacc
    dense_from_sparse(d.M, m.M_rownnz, m.M_rowadr, m.M_colind, M)
    if params[P_IMPLICITFAST] != 0.0 and params[P_ACTUATION] != 0.0:
        implicit_damping(m, d, damping)
    W = M.copy()
    for i in range(nv):
        W[i, i] += h * damping[i]
    if not cholesky(W, damping_factor):
        return False
    for i in range(nv):
        s = 0.0
        for k in range(nv):
            s += M[i, k] * qacc[k]
        acc_e[i, 0] = s
    cholesky_solve(damping_factor, acc_e)
    return True


@njit(cache=True, nogil=True)
def discrete_jacobians(m, d, system_factor, rhs, damping, damping_factor, acc_e, dmy_dq, A, B):
    """A (2nv, 2nv) and B (2nv, nu) of one step.

    ``system_factor``: Cholesky factor of M + JᵀHJ; ``rhs``: [rhs_q | rhs_v | rhs_u], solved in
    place; ``damping``: d and ``damping_factor``: the Cholesky factor of W = M + h diag(d);
    ``acc_e``: the integrated acceleration a_e; ``dmy_dq``: ∂(M y)/∂q with y = a − a_e.
    """
    h = m.params[P_TIMESTEP]
    qvel = d.qvel
    rotation_dofs = m.rotation_dofs
    nv = rhs.shape[0]
    ncol = rhs.shape[1]
    cholesky_solve(system_factor, rhs)
    # Y = h X + h W⁻¹ ([∂(My)/∂q | 0 | 0] − h diag(d) X) + [0 | I | 0]
    y = np.empty((nv, ncol))
    for i in range(nv):
        hd = h * damping[i]
        for c in range(ncol):
            y[i, c] = -hd * rhs[i, c]
        for c in range(nv):
            y[i, c] += dmy_dq[i, c]
    cholesky_solve(damping_factor, y)
    for i in range(nv):
        for c in range(ncol):
            y[i, c] = h * (y[i, c] + rhs[i, c])
        y[i, nv + i] += 1.0

    # velocity rows
    for i in range(nv):
        for c in range(2 * nv):
            A[nv + i, c] = y[i, c]
        for c in range(ncol - 2 * nv):
            B[nv + i, c] = y[i, 2 * nv + c]
    # position rows, scalar dofs first: dq' = dq + h dv'
    for i in range(nv):
        for c in range(2 * nv):
            A[i, c] = h * y[i, c]
        A[i, i] += 1.0
        for c in range(ncol - 2 * nv):
            B[i, c] = h * y[i, 2 * nv + c]
    # three-dof rotations
    theta = np.empty(3)
    rot = np.empty((3, 3))
    jac = np.empty((3, 3))
    for r in rotation_dofs:
        for e in range(3):
            theta[e] = h * (qvel[r + e] + h * acc_e[r + e])
        so3_blocks(theta, rot, jac)
        for e in range(3):
            for c in range(2 * nv):
                A[r + e, c] = h * (jac[e, 0] * y[r, c] + jac[e, 1] * y[r + 1, c]
                                   + jac[e, 2] * y[r + 2, c])
            for c in range(ncol - 2 * nv):
                B[r + e, c] = h * (jac[e, 0] * y[r, 2 * nv + c] + jac[e, 1] * y[r + 1, 2 * nv + c]
                                   + jac[e, 2] * y[r + 2, 2 * nv + c])
            for f in range(3):
                A[r + e, r + f] += rot[e, f]
