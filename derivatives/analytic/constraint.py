"""The constraint solve and its implicit-function-theorem terms.

MuJoCo's solver returns the acceleration a minimising ½(a − a₀)ᵀM(a − a₀) + s(J a − a_ref),
so at the optimum M a − τ − Jᵀf = 0 with f = −∇s(jar), jar = J a − a_ref. Differentiating,

    df = −H djar + f ⊙ dD/D,         djar = J da + dJ a − da_ref,

with H the Hessian of s (block diagonal, one block per constraint):

* QUADRATIC rows: D_i; SATISFIED and frictionloss LINEARNEG/POS rows: 0;
* an elliptic contact in the CONE state (U = (μ jar₀, μ_k jar_k), N = U₀, T = ‖U₁:‖,
  D_m = D₀ / (μ² (1 + μ²)), S = diag(μ, μ_k)):
  H = D_m S [[1, −μ Uᵀ/T], [−μ U/T, μ N/T³ U Uᵀ + (μ² − μ N/T) I]] S (U restricted to 1:).

Every D of a constraint is proportional to imp/(1 − imp) of its one position (contact distance,
joint-limit distance), so dD/D = ρ dpos with ρ = imp'/(imp (1 − imp)); and every force is
proportional to D (quadratic rows, cone blocks) or independent of it (linear rows), hence the
f ⊙ dD/D term. The reference acceleration a_ref = −B J v − K imp (pos − margin) gives

    da_ref/dv = −B J,      da_ref/dq = −B (dJ v) − K (imp + imp' (pos − margin)) dpos/dq,

where dpos/dq is the contact's normal Jacobian row (shared by all rows of a contact, pyramid
edges included) or the joint-limit row itself, and 0 for frictionloss rows.

Constraint types and states follow ``mjtConstraint`` and ``mjtConstraintState``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

EQUALITY, FRICTION_DOF, FRICTION_TENDON, LIMIT_JOINT, LIMIT_TENDON = 0, 1, 2, 3, 4
CONTACT_FRICTIONLESS, CONTACT_PYRAMIDAL, CONTACT_ELLIPTIC = 5, 6, 7
SATISFIED, QUADRATIC, LINEARNEG, LINEARPOS, CONE = 0, 1, 2, 3, 4


@njit(cache=True, nogil=True)
def contact_rows(d, efc):
    """``efc.contact_adr``, ``efc.contact_dim``: first efc row and cone dimension
    (``mjContact.dim``) of each contact; −1 if the contact has no rows (excluded)."""
    efc_type = d.efc_type
    efc_id = d.efc_id
    ncon = d.contact_geom.shape[0]
    contact_adr = efc.contact_adr
    contact_dim = efc.contact_dim
    contact_adr[:ncon] = -1
    contact_dim[:ncon] = 0
    nefc = efc_type.shape[0]
    r = 0
    while r < nefc:
        t = efc_type[r]
        if t < CONTACT_FRICTIONLESS:
            r += 1
            continue
        k = efc_id[r]
        n = 1
        while r + n < nefc and efc_type[r + n] == t and efc_id[r + n] == k:
            n += 1
        contact_adr[k] = r
        if t == CONTACT_PYRAMIDAL:
            contact_dim[k] = n // 2 + 1
        else:
            contact_dim[k] = n
        r += n


@njit(cache=True, nogil=True)
def constraint_update(m, d, efc):
    """``efc.jar`` = J a − a_ref, ``efc.state`` and ``efc.force`` as ``mj_constraintUpdate`` at
    a = ``d.qacc``, and the exact Hessian of s into ``efc.hessian`` (nefc, nefc; only the diagonal
    blocks are written) with each row's block [block_start, block_start + block_size).

    Reads the contacts' cone dimensions and scaled friction ``efc.contact_mu`` (μ/√impratio).
    """
    efc_type = d.efc_type
    efc_id = d.efc_id
    efc_J = d.efc_J
    efc_D = d.efc_D
    efc_aref = d.efc_aref
    dof_frictionloss = m.dof_frictionloss
    qacc = d.qacc
    contact_dim = efc.contact_dim
    jar = efc.jar
    state = efc.state
    force = efc.force
    hessian = efc.hessian
    block_start = efc.block_start
    block_size = efc.block_size
    nefc = efc_type.shape[0]
    nv = qacc.shape[0]
    for r in range(nefc):
        s = -efc_aref[r]
        for k in range(nv):
            s += efc_J[r, k] * qacc[k]
        jar[r] = s
        force[r] = -efc_D[r] * s
        block_start[r] = r
        block_size[r] = 1
    r = 0
    while r < nefc:
        t = efc_type[r]
        if t == CONTACT_ELLIPTIC:
            k = efc_id[r]
            dim = contact_dim[k]
            _elliptic(d, efc, k, r)
            for i in range(r, r + dim):
                block_start[i] = r
                block_size[i] = dim
            r += dim
            continue
        if t == FRICTION_DOF:
            floss = dof_frictionloss[efc_id[r]]
            bound = floss / efc_D[r]
            if jar[r] <= -bound:
                state[r], force[r], hessian[r, r] = LINEARNEG, floss, 0.0
            elif jar[r] >= bound:
                state[r], force[r], hessian[r, r] = LINEARPOS, -floss, 0.0
            else:
                state[r], hessian[r, r] = QUADRATIC, efc_D[r]
        elif t == EQUALITY:
            state[r], hessian[r, r] = QUADRATIC, efc_D[r]
        elif jar[r] >= 0.0:
            state[r], force[r], hessian[r, r] = SATISFIED, 0.0, 0.0
        else:
            state[r], hessian[r, r] = QUADRATIC, efc_D[r]
        r += 1


@njit(cache=True, nogil=True)
def _elliptic(d, efc, k, r):
    """State, force and Hessian block of elliptic contact k, whose rows start at r."""
    jar = efc.jar
    efc_D = d.efc_D
    mu = efc.contact_mu[k]
    friction = d.contact_friction[k]
    dim = efc.contact_dim[k]
    state = efc.state
    force = efc.force
    hessian = efc.hessian
    u = np.empty(6)
    scale = np.empty(6)
    scale[0] = mu
    for j in range(1, dim):
        scale[j] = friction[j - 1]
    for j in range(dim):
        u[j] = jar[r + j] * scale[j]
    n = u[0]
    tt = 0.0
    for j in range(1, dim):
        tt += u[j] * u[j]
    t = np.sqrt(tt)
    for i in range(dim):
        for j in range(dim):
            hessian[r + i, r + j] = 0.0
    if n >= mu * t or (t <= 0.0 and n >= 0.0):
        # top zone: inside the dual cone, no force
        for j in range(dim):
            state[r + j] = SATISFIED
            force[r + j] = 0.0
        return
    if mu * n + t <= 0.0 or (t <= 0.0 and n < 0.0):
        # bottom zone: every row quadratic (forces already −D jar)
        for j in range(dim):
            state[r + j] = QUADRATIC
            hessian[r + j, r + j] = efc_D[r + j]
        return
    # middle zone: cost ½ D_m (N − μ T)²
    dm = efc_D[r] / (mu * mu * (1.0 + mu * mu))
    nmt = n - mu * t
    force[r] = -dm * nmt * mu
    for j in range(1, dim):
        force[r + j] = -force[r] / t * u[j] * scale[j]
    for j in range(dim):
        state[r + j] = CONE
    hessian[r, r] = 1.0
    for j in range(1, dim):
        hessian[r, r + j] = -mu / t * u[j]
        hessian[r + j, r] = hessian[r, r + j]
    c_outer = mu * n / (t * t * t)
    c_diag = mu * mu - mu * n / t
    for i in range(1, dim):
        for j in range(1, dim):
            hessian[r + i, r + j] = c_outer * u[i] * u[j]
        hessian[r + i, r + i] += c_diag
    for i in range(dim):
        for j in range(dim):
            hessian[r + i, r + j] *= dm * scale[i] * scale[j]


@njit(cache=True, nogil=True)
def impedance_terms(d, efc):
    """Per row: ``efc.rho`` = imp'/(imp (1 − imp)) (dD/D per unit of position), ``efc.kfac`` =
    K (imp + imp' (pos − margin)) (position part of da_ref) and the row's position Jacobian
    dpos/dq, ``efc.pos_jac``."""
    efc_type = d.efc_type
    efc_id = d.efc_id
    efc_J = d.efc_J
    efc_pos = d.efc_pos
    efc_margin = d.efc_margin
    efc_KBIP = d.efc_KBIP
    contact_adr = efc.contact_adr
    rho = efc.rho
    kfac = efc.kfac
    pos_jac = efc.pos_jac
    nefc = efc_type.shape[0]
    nv = efc_J.shape[1]
    for r in range(nefc):
        t = efc_type[r]
        k_, imp, imp_p = efc_KBIP[r, 0], efc_KBIP[r, 2], efc_KBIP[r, 3]
        rho[r] = imp_p / (imp * (1.0 - imp)) if imp_p != 0.0 else 0.0
        kfac[r] = k_ * (imp + imp_p * (efc_pos[r] - efc_margin[r]))
        if t in (FRICTION_DOF, FRICTION_TENDON):
            pos_jac[r, :] = 0.0
        elif t == CONTACT_PYRAMIDAL:
            # edges are J_n ± μ_k J_k: the first pair averages to the normal row
            a = contact_adr[efc_id[r]]
            for k in range(nv):
                pos_jac[r, k] = 0.5 * (efc_J[a, k] + efc_J[a + 1, k])
        elif t in (CONTACT_ELLIPTIC, CONTACT_FRICTIONLESS):
            a = contact_adr[efc_id[r]]
            pos_jac[r, :] = efc_J[a]
        else:
            pos_jac[r, :] = efc_J[r]


@njit(cache=True, nogil=True)
def ift_terms(d, efc, system, rhs_q, rhs_v):
    """Constraint terms of the implicit-function-theorem system (M + JᵀHJ) da = rhs:

    system += JᵀHJ,    rhs_q += Jᵀ (−H E + (f ρ) ⊙ dpos),    rhs_v += −(HJ)ᵀ diag(B) J,

    with E = djar/dq at fixed a = (dJ/dq) a + B ⊙ (dJ/dq) v + K(imp + imp'(pos − margin)) ⊙ dpos.

    H is block diagonal, so the sums run block by block (a contact, or a single row) over the
    block's columns: those where some row of the block has a nonzero in J, dpos, (dJ/dq) a or
    (dJ/dq) v, i.e. the dofs that move the body (J alone is not enough, its entries can vanish
    where their derivatives do not). Each block is gathered into small dense matrices, its
    products formed there and added into the outputs once: scattering every row's outer
    products straight into the (nv, nv) outputs cost about three times as much. Blocks without
    curvature or impedance force (satisfied rows, frictionloss in its linear zone) add nothing
    and are skipped.

    dJ/dq a and dJ/dq v are ``efc.dja`` and ``efc.djv`` (:mod:`.contact_jacobian`).
    """
    efc_J = d.efc_J
    efc_KBIP = d.efc_KBIP
    hessian = efc.hessian
    block_start = efc.block_start
    block_size = efc.block_size
    force = efc.force
    rho = efc.rho
    kfac = efc.kfac
    pos_jac = efc.pos_jac
    dja = efc.dja
    djv = efc.djv
    nefc, nv = efc_J.shape
    cols = np.empty(nv, dtype=np.int64)
    jb = np.empty((6, nv))
    hj = np.empty((6, nv))
    g = np.empty((6, nv))
    bj = np.empty((6, nv))
    r = 0
    while r < nefc:
        first, size = block_start[r], block_size[r]
        r = first + size
        active = False
        for i in range(first, first + size):
            active = active or force[i] * rho[i] != 0.0
            for c in range(first, first + size):
                active = active or hessian[i, c] != 0.0
        if not active:
            continue
        n = 0
        for k in range(nv):
            for i in range(first, first + size):
                if (efc_J[i, k] != 0.0 or pos_jac[i, k] != 0.0 or dja[i, k] != 0.0
                        or djv[i, k] != 0.0):
                    cols[n] = k
                    n += 1
                    break
        # gather J and E of the block; G starts as (f ρ) ⊙ dpos, E is kept in bj for now
        for i in range(size):
            row = first + i
            b = efc_KBIP[row, 1]
            fr = force[row] * rho[row]
            kf = kfac[row]
            for a in range(n):
                k = cols[a]
                jb[i, a] = efc_J[row, k]
                bj[i, a] = dja[row, k] + b * djv[row, k] + kf * pos_jac[row, k]
                g[i, a] = fr * pos_jac[row, k]
        # HJ and G −= H E (H is symmetric within the block)
        for i in range(size):
            for a in range(n):
                hj[i, a] = 0.0
            for c in range(size):
                h = hessian[first + i, first + c]
                if h != 0.0:
                    for a in range(n):
                        hj[i, a] += h * jb[c, a]
                        g[i, a] -= h * bj[c, a]
        for i in range(size):
            b = efc_KBIP[first + i, 1]
            for a in range(n):
                bj[i, a] = b * jb[i, a]
        # system += JᵀHJ, rhs_q += JᵀG, rhs_v −= (HJ)ᵀ (B J), block columns scattered once
        for a in range(n):
            ka = cols[a]
            for a2 in range(n):
                k = cols[a2]
                s_sys = 0.0
                s_q = 0.0
                s_v = 0.0
                for i in range(size):
                    s_sys += jb[i, a] * hj[i, a2]
                    s_q += jb[i, a] * g[i, a2]
                    s_v += hj[i, a] * bj[i, a2]
                system[ka, k] += s_sys
                rhs_q[ka, k] += s_q
                rhs_v[ka, k] -= s_v
