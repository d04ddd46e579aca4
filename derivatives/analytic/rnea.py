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

**Evaluation.** A column visits only the dofs of body(j)'s subtree and those above it. Since Î_b
and Q̂_b are symmetric and cdof_k · (u ×* F) = −(cdof_k ×* F) · u, the entry of a dof k that j
turns is

    cdof_k · G_b = (Î_b cdof_k) · (u ×ₘ W₀ − s ×ₘ A₀) + Z_k · u,
    Z_k = cdof_k ×* Σ(IV)_b + Q̂_b cdof_k

(b = body(k); likewise (Î_b cdof_k) · (−s ×ₘ X₀) for M x and (Î_b cdof_k) · (ċdof_j − s ×ₘ P_j)
− Z_k · s for the velocity), with Î_b cdof_k and Z_k computed once per dof: a few dot products
per entry instead of three 6x6 products per body of the subtree and column. The other dofs read
the one vector dF_body(j).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from derivatives.analytic.bundles import P_GRAVITY
from derivatives.analytic.spatial import (
    FASTMATH,
    add6,
    axpy6,
    cross_force,
    cross_motion,
    dot_row6,
    inert_mul,
    row6,
    store6,
    sub6,
)


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def rnea(m, d):
    """τ = RNEA(q, v, a) with MuJoCo's recursion (``mj_rne`` with ``flg_acc=1``) at a = d.qacc.

    Returns (cacc, I A, I V, cfrc, τ): the body accelerations (world at −gravity), I_b A_b,
    I_b V_b and the subtree forces (each (nbody, 6)), which the derivatives reuse, and τ (nv).
    """
    body_parentid = m.body_parentid
    body_dofadr = m.body_dofadr
    body_dofnum = m.body_dofnum
    dof_bodyid = m.dof_bodyid
    gravity = m.params[P_GRAVITY : P_GRAVITY + 3]
    cdof = d.cdof
    cdof_dot = d.cdof_dot
    cinert = d.cinert
    cvel = d.cvel
    qvel = d.qvel
    qacc = d.qacc
    nbody = cinert.shape[0]
    cacc = np.empty((nbody, 6))
    inert_acc = np.empty((nbody, 6))
    inert_vel = np.empty((nbody, 6))
    cfrc = np.empty((nbody, 6))
    tau = np.empty(cdof.shape[0])
    zero = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    store6(cacc, 0, (0.0, 0.0, 0.0, -gravity[0], -gravity[1], -gravity[2]))
    store6(cfrc, 0, zero)
    store6(inert_acc, 0, zero)
    store6(inert_vel, 0, zero)
    for b in range(1, nbody):
        acc = row6(cacc, body_parentid[b])
        adr = body_dofadr[b]
        for k in range(adr, adr + body_dofnum[b]):
            acc = axpy6(axpy6(acc, qvel[k], row6(cdof_dot, k)), qacc[k], row6(cdof, k))
        store6(cacc, b, acc)
        ia = inert_mul(cinert, b, acc)
        vel = row6(cvel, b)
        iv = inert_mul(cinert, b, vel)
        store6(inert_acc, b, ia)
        store6(inert_vel, b, iv)
        store6(cfrc, b, add6(ia, cross_force(vel, iv)))
    _subtree_sum(body_parentid, cfrc)
    for k in range(cdof.shape[0]):
        tau[k] = dot_row6(cdof, k, row6(cfrc, dof_bodyid[k]))
    return cacc, inert_acc, inert_vel, cfrc, tau


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _subtree_sum(body_parentid, x):
    """Rows of body quantities summed over subtrees, in place (the world collects nothing)."""
    for b in range(x.shape[0] - 1, 0, -1):
        p = body_parentid[b]
        if p > 0:
            for i in range(x.shape[1]):
                x[p, i] += x[b, i]


@njit(inline="always")
def _velocity_coupling(out, b, inert, vel):
    """Row b of ``out`` = Q = I [V]ₘ + [V]ₘᵀ I for the inertia in row b of ``inert`` and the
    twist V = (w, v), in the block form Q = [[S, [z]ₓ], [[z]ₓᵀ, 0]] with the symmetric
    S = Î[w]ₓ − [w]ₓÎ + h vᵀ + v hᵀ − 2 (h·v) 1 and z = h × w − m v; stored as (S row-major, z).
    """
    w0, w1, w2, v0, v1, v2 = vel
    ixx, iyy, izz = inert[b, 0], inert[b, 1], inert[b, 2]
    ixy, ixz, iyz = inert[b, 3], inert[b, 4], inert[b, 5]
    h0, h1, h2, m = inert[b, 6], inert[b, 7], inert[b, 8], inert[b, 9]
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
    s01 = a01 + a10 + h0 * v1 + v0 * h1
    s02 = a02 + a20 + h0 * v2 + v0 * h2
    s12 = a12 + a21 + h1 * v2 + v1 * h2
    out[b, 0] = 2.0 * a00 + 2.0 * h0 * v0 - hv2
    out[b, 1] = s01
    out[b, 2] = s02
    out[b, 3] = s01
    out[b, 4] = 2.0 * a11 + 2.0 * h1 * v1 - hv2
    out[b, 5] = s12
    out[b, 6] = s02
    out[b, 7] = s12
    out[b, 8] = 2.0 * a22 + 2.0 * h2 * v2 - hv2
    out[b, 9] = h1 * w2 - h2 * w1 - m * v0
    out[b, 10] = h2 * w0 - h0 * w2 - m * v1
    out[b, 11] = h0 * w1 - h1 * w0 - m * v2


@njit(inline="always")
def _coupling_mul(q, b, u):
    """Q u for Q in row b of a table in the block form of :func:`_velocity_coupling`."""
    a0, a1, a2, l0, l1, l2 = u
    z0, z1, z2 = q[b, 9], q[b, 10], q[b, 11]
    return (q[b, 0] * a0 + q[b, 1] * a1 + q[b, 2] * a2 + z1 * l2 - z2 * l1,
            q[b, 3] * a0 + q[b, 4] * a1 + q[b, 5] * a2 + z2 * l0 - z0 * l2,
            q[b, 6] * a0 + q[b, 7] * a1 + q[b, 8] * a2 + z0 * l1 - z1 * l0,
            a1 * z2 - a2 * z1,
            a2 * z0 - a0 * z2,
            a0 * z1 - a1 * z0)


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def rnea_derivatives(m, d, x, dtau_dq, dmx_dq, dtau_dv):
    """Derivatives of τ = RNEA(q, v, a) at a = d.qacc in MuJoCo's tangent space:

    dtau_dq = ∂τ/∂q (v, a fixed), dmx_dq = ∂(M(q) x)/∂q, dtau_dv = ∂τ/∂v = ∂qfrc_bias/∂v.
    """
    body_parentid = m.body_parentid
    body_dofadr = m.body_dofadr
    body_dofnum = m.body_dofnum
    body_dof_end = m.body_dof_end
    dof_bodyid = m.dof_bodyid
    dof_parentid = m.dof_parentid
    dof_group_start = m.dof_group_start
    dof_group_end = m.dof_group_end
    dof_free_translation = m.dof_free_translation
    cdof = d.cdof
    cdof_dot = d.cdof_dot
    cinert = d.cinert
    cvel = d.cvel
    qvel = d.qvel
    qacc = d.qacc
    nbody = cinert.shape[0]
    nv = cdof.shape[0]
    cacc, _, inert_vel, cfrc, _ = rnea(m, d)
    # per body, then summed over subtrees: composite inertia Î, Σ I V, Q̂ and the forces of
    # M x (body accelerations X from x alone)
    composite = cinert.copy()
    coupling = np.empty((nbody, 12))
    xacc = np.empty((nbody, 6))
    xfrc = np.empty((nbody, 6))
    store6(xacc, 0, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0))
    for b in range(1, nbody):
        _velocity_coupling(coupling, b, cinert, row6(cvel, b))
        acc = row6(xacc, body_parentid[b])
        adr = body_dofadr[b]
        for k in range(adr, adr + body_dofnum[b]):
            acc = axpy6(acc, x[k], row6(cdof, k))
        store6(xacc, b, acc)
        store6(xfrc, b, inert_mul(cinert, b, acc))
    _subtree_sum(body_parentid, composite)
    _subtree_sum(body_parentid, inert_vel)
    _subtree_sum(body_parentid, coupling)
    _subtree_sum(body_parentid, xfrc)
    # per dof: Î cdof and Z = cdof ×* Σ(IV) + Q̂ cdof of its body
    ic = np.empty((nv, 6))
    z = np.empty((nv, 6))
    for k in range(nv):
        b = dof_bodyid[k]
        c = row6(cdof, k)
        store6(ic, k, inert_mul(composite, b, c))
        store6(z, k, add6(cross_force(c, row6(inert_vel, b)), _coupling_mul(coupling, b, c)))

    dtau_dq[:, :] = 0.0
    dmx_dq[:, :] = 0.0
    dtau_dv[:, :] = 0.0
    for j in range(nv):
        if dof_free_translation[j]:
            continue
        bj = dof_bodyid[j]
        parent = body_parentid[bj]
        g = dof_group_start[j]
        first = body_dofadr[bj]
        s = row6(cdof, j)
        # unmoved motion of body(j): W₀, A₀, X₀ (parent and the dofs before j's group), and
        # the velocity P_j up to the end of j's group
        w0 = row6(cvel, parent)
        a0 = row6(cacc, parent)
        x0 = row6(xacc, parent)
        for k in range(first, g):
            ck = row6(cdof, k)
            w0 = axpy6(w0, qvel[k], ck)
            a0 = axpy6(axpy6(a0, qvel[k], row6(cdof_dot, k)), qacc[k], ck)
            x0 = axpy6(x0, x[k], ck)
        pj = w0
        for k in range(g, dof_group_end[j]):
            pj = axpy6(pj, qvel[k], row6(cdof, k))
        u = cross_motion(s, w0)
        p_acc = sub6(cross_motion(u, w0), cross_motion(s, a0))  # ∂τ/∂q
        p_x = cross_motion(x0, s)  # ∂(M x)/∂q: −s ×ₘ X₀
        p_v = sub6(row6(cdof_dot, j), cross_motion(s, pj))  # ∂τ/∂v
        # dofs of body(j) and its subtree: turned from the group of j on (∂/∂v: all)
        for k in range(first, body_dof_end[bj]):
            dtau_dv[k, j] = dot_row6(ic, k, p_v) - dot_row6(z, k, s)
            if k >= g:
                dtau_dq[k, j] = dot_row6(ic, k, p_acc) + dot_row6(z, k, u)
                dmx_dq[k, j] = dot_row6(ic, k, p_x)
        # dofs before the group and above body(j) read dF_bj = G_bj + s ×* F_bj, and (velocities
        # turn no axes) ∂/∂v reads dF_bj
        ivs = row6(inert_vel, bj)
        f_acc = add6(sub6(add6(inert_mul(composite, bj, p_acc), _coupling_mul(coupling, bj, u)),
                          cross_force(u, ivs)), cross_force(s, row6(cfrc, bj)))
        f_x = add6(inert_mul(composite, bj, p_x), cross_force(s, row6(xfrc, bj)))
        f_v = sub6(add6(inert_mul(composite, bj, p_v), cross_force(s, ivs)),
                   _coupling_mul(coupling, bj, s))
        for k in range(first, g):
            dtau_dq[k, j] = dot_row6(cdof, k, f_acc)
            dmx_dq[k, j] = dot_row6(cdof, k, f_x)
        k = dof_parentid[first]
        while k >= 0:
            dtau_dq[k, j] = dot_row6(cdof, k, f_acc)
            dmx_dq[k, j] = dot_row6(cdof, k, f_x)
            dtau_dv[k, j] = dot_row6(cdof, k, f_v)
            k = dof_parentid[k]
