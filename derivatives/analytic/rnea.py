"""Recursive Newton-Euler inverse dynamics and its derivatives, in MuJoCo's conventions.

τ = RNEA(q, v, a) = M(q) a + c(q, v) (armature excluded, as ``mj_rne``): with the world moving
at −g, body accelerations and forces

    A_b = A_parent + Σ_{k∈b} (ċdof_k v_k + cdof_k a_k),    f_b = I_b A_b + V_b ×* (I_b V_b),

subtree forces F_b = Σ_{c ∈ subtree(b)} f_c and τ_k = cdof_k · F_body(k). Everything is a
spatial vector about the tree's centre of mass c₀ (see :mod:`.spatial`); c₀ moves with q but τ
does not depend on the point chosen, so the derivatives hold c₀ fixed.

**Configuration derivative.** Perturbing dof j moves its body's subtree rigidly with twist
s = cdof_j. Velocities split into an unmoved part W₀ (parent velocity plus the dofs of body(j)
before j's group) and a moved part V − W₀ whose axes turn with the motion; likewise the
acceleration into A₀ and A − A₀. Using ċdof_k = V_before(k) ×ₘ cdof_k and the Jacobi identity,

    dV_c = s ×ₘ (V_c − W₀),
    dA_c = s ×ₘ (A_c − A₀) − (s ×ₘ W₀) ×ₘ (V_c − W₀),
    dI_c x = s ×* (I_c x) − I_c (s ×ₘ x),

for every c in the subtree. A rigidly moved body's force would just turn, df_c = s ×* f_c; what
the unmoved W₀ and A₀ add is, with u = s ×ₘ W₀,

    df_c − s ×* f_c = I_c (u ×ₘ W₀ − s ×ₘ A₀) − u ×* (I_c V_c) + Q_c u,
    Q_c u = I_c (V_c ×ₘ u) − V_c ×* (I_c u),      Q_c = I_c [V_c]ₘ + [V_c]ₘᵀ I_c (symmetric).

Every term is linear in per-body quantities, so summing over a subtree uses the composite
inertia Î_b = Σ I_c, Σ I_c V_c and Q̂_b = Σ Q_c, computed once per state:

    G_b = dF_b − s ×* F_b = Î_b (u ×ₘ W₀ − s ×ₘ A₀) − u ×* Σ(I V)_b + Q̂_b u,

and dτ_k = cdof_k · G_body(k) for the dofs that j turns (since (s ×ₘ cdof_k) · F = −cdof_k ·
(s ×* F)), dτ_k = cdof_k · dF_body(j) for the others above and in body(j).

The discrete step also needs ∂(M(q) x)/∂q for a fixed x: the same derivative of RNEA(q, 0, x)
without gravity, where W₀ = 0 leaves G_b = −Î_b (s ×ₘ X₀).

**Velocity derivative.** Raising v_j by one changes V_c by cdof_j and A_c by
ċdof_j + cdof_j ×ₘ (V_c − P_j) below body(j), where P_j is the velocity of body(j) up to the end
of j's group (the later dofs whose ċdof sees v_j); summed over a subtree,

    dF_b = Î_b (ċdof_j − cdof_j ×ₘ P_j) + cdof_j ×* Σ(I V)_b − Q̂_b cdof_j.

Free-joint translations move a whole tree along world axes: τ is translation invariant and the
bias forces are Galilean invariant, so their columns of both derivatives are exactly zero and are
skipped.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from derivatives.analytic.spatial import add_cross_force, cross_motion, dot6, inert_mul


@njit(cache=True, nogil=True)
def rnea(body_parentid, body_dofadr, body_dofnum, dof_bodyid, cdof, cdof_dot, cinert, cvel,
         qvel, qacc, gravity, cacc, inert_acc, inert_vel, cfrc, tau):
    """τ = RNEA(q, v, a) with MuJoCo's recursion (``mj_rne`` with ``flg_acc=1``).

    Also returns the body accelerations ``cacc`` (world at −gravity), I_b A_b, I_b V_b and the
    subtree forces ``cfrc`` (each (nbody, 6)), which the derivatives reuse.
    """
    nbody = cinert.shape[0]
    nv = cdof.shape[0]
    cacc[0, :] = 0.0
    cacc[0, 3] = -gravity[0]
    cacc[0, 4] = -gravity[1]
    cacc[0, 5] = -gravity[2]
    cfrc[0, :] = 0.0
    inert_acc[0, :] = 0.0
    inert_vel[0, :] = 0.0
    for b in range(1, nbody):
        acc = cacc[b]
        acc[:] = cacc[body_parentid[b]]
        adr = body_dofadr[b]
        for k in range(adr, adr + body_dofnum[b]):
            for i in range(6):
                acc[i] += cdof_dot[k, i] * qvel[k] + cdof[k, i] * qacc[k]
        inert_mul(inert_acc[b], cinert[b], acc)
        inert_mul(inert_vel[b], cinert[b], cvel[b])
        cfrc[b, :] = inert_acc[b]
        add_cross_force(cfrc[b], cvel[b], inert_vel[b])
    _subtree_sum(body_parentid, 0, nbody, cfrc)
    for k in range(nv):
        tau[k] = dot6(cdof[k], cfrc[dof_bodyid[k]])


@njit(cache=True, nogil=True)
def _subtree_sum(body_parentid, first, end, frc):
    """Accumulate body forces of the subtree [first, end) into subtree forces, in place (the
    world, body 0, collects nothing)."""
    for b in range(end - 1, first, -1):
        p = body_parentid[b]
        if p > 0:
            for i in range(6):
                frc[p, i] += frc[b, i]


@njit(cache=True, nogil=True)
def _partial_motion(body_parentid, body_dofadr, cdof, cdof_dot, cvel, cacc, qvel, qacc, b, end,
                    vel, acc):
    """Velocity and acceleration of body b counting its parent and its dofs before ``end``."""
    vel[:] = cvel[body_parentid[b]]
    acc[:] = cacc[body_parentid[b]]
    for k in range(body_dofadr[b], end):
        for i in range(6):
            vel[i] += cdof[k, i] * qvel[k]
            acc[i] += cdof_dot[k, i] * qvel[k] + cdof[k, i] * qacc[k]


@njit(cache=True, nogil=True)
def _velocity_coupling(out, inert, vel):
    """Q = I [V]ₘ + [V]ₘᵀ I for a 10-number inertia I = [[Î, [h]ₓ], [[h]ₓᵀ, m]] and a twist
    V = (w, v), in the block form Q = [[S, [z]ₓ], [[z]ₓᵀ, 0]] with the symmetric
    S = Î[w]ₓ − [w]ₓÎ + h vᵀ + v hᵀ − 2 (h·v) 1 and z = h × w − m v; ``out`` = (S row-major, z).
    """
    w0, w1, w2, v0, v1, v2 = vel[0], vel[1], vel[2], vel[3], vel[4], vel[5]
    ixx, iyy, izz, ixy, ixz, iyz = inert[0], inert[1], inert[2], inert[3], inert[4], inert[5]
    h0, h1, h2, m = inert[6], inert[7], inert[8], inert[9]
    # Î[w]ₓ (rows of Î times the columns of [w]ₓ); [w]ₓÎ is its negative transpose
    a00 = ixy * w2 - ixz * w1
    a01 = ixz * w0 - ixx * w2
    a02 = ixx * w1 - ixy * w0
    a10 = iyy * w2 - iyz * w1
    a11 = iyz * w0 - ixy * w2
    a12 = ixy * w1 - iyy * w0
    a20 = iyz * w2 - izz * w1
    a21 = izz * w0 - ixz * w2
    a22 = ixz * w1 - iyz * w0
    hv2 = 2.0 * (h0 * v0 + h1 * v1 + h2 * v2)
    out[0] = 2.0 * a00 + 2.0 * h0 * v0 - hv2
    out[1] = a01 + a10 + h0 * v1 + v0 * h1
    out[2] = a02 + a20 + h0 * v2 + v0 * h2
    out[3] = out[1]
    out[4] = 2.0 * a11 + 2.0 * h1 * v1 - hv2
    out[5] = a12 + a21 + h1 * v2 + v1 * h2
    out[6] = out[2]
    out[7] = out[5]
    out[8] = 2.0 * a22 + 2.0 * h2 * v2 - hv2
    out[9] = h1 * w2 - h2 * w1 - m * v0
    out[10] = h2 * w0 - h0 * w2 - m * v1
    out[11] = h0 * w1 - h1 * w0 - m * v2


@njit(cache=True, nogil=True)
def _add_coupling(out, q, u, sign):
    """out += sign · Q u for Q in the block form of :func:`_velocity_coupling`."""
    a0, a1, a2, l0, l1, l2 = u[0], u[1], u[2], u[3], u[4], u[5]
    z0, z1, z2 = q[9], q[10], q[11]
    out[0] += sign * (q[0] * a0 + q[1] * a1 + q[2] * a2 + z1 * l2 - z2 * l1)
    out[1] += sign * (q[3] * a0 + q[4] * a1 + q[5] * a2 + z2 * l0 - z0 * l2)
    out[2] += sign * (q[6] * a0 + q[7] * a1 + q[8] * a2 + z0 * l1 - z1 * l0)
    out[3] += sign * (a1 * z2 - a2 * z1)
    out[4] += sign * (a2 * z0 - a0 * z2)
    out[5] += sign * (a0 * z1 - a1 * z0)


@njit(cache=True, nogil=True)
def _columns(body_dofadr, body_dof_end, dof_bodyid, dof_parentid, cdof, turned, unturned, j,
             first_turned, out):
    """Column j: dτ_k = cdof_k · turned[body(k)] for dofs of body(j)'s subtree from
    ``first_turned`` on, cdof_k · unturned for the other dofs of body(j) and those above it."""
    bj = dof_bodyid[j]
    for k in range(body_dofadr[bj], body_dof_end[bj]):
        if k >= first_turned:
            out[k, j] = dot6(cdof[k], turned[dof_bodyid[k]])
        else:
            out[k, j] = dot6(cdof[k], unturned)
    k = dof_parentid[body_dofadr[bj]]
    while k >= 0:
        out[k, j] = dot6(cdof[k], unturned)
        k = dof_parentid[k]


@njit(cache=True, nogil=True)
def rnea_derivatives(body_parentid, body_dofadr, body_dofnum, body_subtree_end, body_dof_end,
                     dof_bodyid, dof_parentid, dof_group_start, dof_group_end,
                     dof_free_translation, cdof, cdof_dot, cinert, cvel, qvel, qacc, gravity, x,
                     dtau_dq, dmx_dq, dtau_dv):
    """Derivatives of τ = RNEA(q, v, a) in MuJoCo's tangent space:

    dtau_dq = ∂τ/∂q (v, a fixed), dmx_dq = ∂(M(q) x)/∂q, dtau_dv = ∂τ/∂v = ∂qfrc_bias/∂v.
    """
    nbody = cinert.shape[0]
    nv = cdof.shape[0]
    cacc = np.empty((nbody, 6))
    inert_acc = np.empty((nbody, 6))
    inert_vel = np.empty((nbody, 6))
    cfrc = np.empty((nbody, 6))
    tau = np.empty(nv)
    rnea(body_parentid, body_dofadr, body_dofnum, dof_bodyid, cdof, cdof_dot, cinert, cvel,
         qvel, qacc, gravity, cacc, inert_acc, inert_vel, cfrc, tau)
    # subtree sums: composite inertia, Σ I V, Q̂, and the forces of M x
    composite = cinert.copy()
    inert_vel_sum = inert_vel.copy()
    coupling = np.zeros((nbody, 12))
    xacc = np.zeros((nbody, 6))
    xfrc = np.zeros((nbody, 6))
    for b in range(1, nbody):
        _velocity_coupling(coupling[b], cinert[b], cvel[b])
        xacc[b] = xacc[body_parentid[b]]
        adr = body_dofadr[b]
        for k in range(adr, adr + body_dofnum[b]):
            for i in range(6):
                xacc[b, i] += cdof[k, i] * x[k]
        inert_mul(xfrc[b], cinert[b], xacc[b])
    for b in range(nbody - 1, 0, -1):
        p = body_parentid[b]
        if p > 0:
            composite[p] += composite[b]
            inert_vel_sum[p] += inert_vel_sum[b]
            coupling[p] += coupling[b]
            xfrc[p] += xfrc[b]

    turned = np.empty((nbody, 6))
    unturned = np.empty(6)
    w0 = np.empty(6)
    a0 = np.empty(6)
    u = np.empty(6)
    p_acc = np.empty(6)
    p_x = np.empty(6)
    tmp = np.empty(6)
    dtau_dq[:, :] = 0.0
    dmx_dq[:, :] = 0.0
    dtau_dv[:, :] = 0.0
    for j in range(nv):
        if dof_free_translation[j]:
            continue
        bj = dof_bodyid[j]
        g = dof_group_start[j]
        end = body_subtree_end[bj]
        s = cdof[j]
        # ∂τ/∂q: G_b = Î_b (u × W₀ − s × A₀) − u ×* Σ(IV)_b + Q̂_b u
        _partial_motion(body_parentid, body_dofadr, cdof, cdof_dot, cvel, cacc, qvel, qacc, bj,
                        g, w0, a0)
        cross_motion(u, s, w0)
        cross_motion(p_acc, u, w0)
        cross_motion(tmp, s, a0)
        for i in range(6):
            p_acc[i] -= tmp[i]
        for b in range(bj, end):
            t = turned[b]
            inert_mul(t, composite[b], p_acc)
            _sub_cross_force(t, u, inert_vel_sum[b])
            _add_coupling(t, coupling[b], u, 1.0)
        unturned[:] = turned[bj]
        add_cross_force(unturned, s, cfrc[bj])
        _columns(body_dofadr, body_dof_end, dof_bodyid, dof_parentid, cdof, turned, unturned, j,
                 g, dtau_dq)

        # ∂(M x)/∂q: G_b = −Î_b (s × X₀)
        p_x[:] = xacc[body_parentid[bj]]
        for k in range(body_dofadr[bj], g):
            for i in range(6):
                p_x[i] += cdof[k, i] * x[k]
        cross_motion(tmp, s, p_x)
        for i in range(6):
            tmp[i] = -tmp[i]
        for b in range(bj, end):
            inert_mul(turned[b], composite[b], tmp)
        unturned[:] = turned[bj]
        add_cross_force(unturned, s, xfrc[bj])
        _columns(body_dofadr, body_dof_end, dof_bodyid, dof_parentid, cdof, turned, unturned, j,
                 g, dmx_dq)

        # ∂τ/∂v: dF_b = Î_b (ċdof_j − cdof_j × P_j) + cdof_j ×* Σ(IV)_b − Q̂_b cdof_j
        w0[:] = cvel[body_parentid[bj]]
        for k in range(body_dofadr[bj], dof_group_end[j]):
            for i in range(6):
                w0[i] += cdof[k, i] * qvel[k]
        cross_motion(tmp, s, w0)
        for i in range(6):
            tmp[i] = cdof_dot[j, i] - tmp[i]
        for b in range(bj, end):
            t = turned[b]
            inert_mul(t, composite[b], tmp)
            add_cross_force(t, s, inert_vel_sum[b])
            _add_coupling(t, coupling[b], s, -1.0)
        # velocities turn no axes: every dof reads dF
        _columns(body_dofadr, body_dof_end, dof_bodyid, dof_parentid, cdof, turned, turned[bj],
                 j, body_dofadr[bj], dtau_dv)


@njit(cache=True, nogil=True)
def _sub_cross_force(out, a, f):
    """out −= a ×* f."""
    out[0] -= a[1] * f[2] - a[2] * f[1] + a[4] * f[5] - a[5] * f[4]
    out[1] -= a[2] * f[0] - a[0] * f[2] + a[5] * f[3] - a[3] * f[5]
    out[2] -= a[0] * f[1] - a[1] * f[0] + a[3] * f[4] - a[4] * f[3]
    out[3] -= a[1] * f[5] - a[2] * f[4]
    out[4] -= a[2] * f[3] - a[0] * f[5]
    out[5] -= a[0] * f[4] - a[1] * f[3]
