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

    dV_b = s ×ₘ (V_b − W₀),
    dA_b = s ×ₘ (A_b − A₀) − (s ×ₘ W₀) ×ₘ (V_b − W₀),
    dI_b x = s ×* (I_b x) − I_b (s ×ₘ x),

for every b in the subtree. Collecting terms,

    df_b = s ×* (I A) + I y + dV ×* (I V) + V ×* z,
    y = −s ×ₘ A₀ − (s ×ₘ W₀) ×ₘ (V − W₀),    z = s ×* (I V) − I (s ×ₘ W₀),

and dτ_k = cdof_k · dF_body(k) + [k turned by j] (s ×ₘ cdof_k) · F_body(k), where
(s ×ₘ c) · F = −c · (s ×* F) lets the turned dofs read G_b = dF_b − s ×* F_b.

The discrete step also needs ∂(M(q) x)/∂q for a fixed x: the same derivative of RNEA(q, 0, x)
without gravity, where W₀ = 0 leaves df_b = s ×* (I A) − I (s ×ₘ A₀). It shares the geometry, so
it is computed in the same sweep.

**Velocity derivative.** Raising v_j by one changes V_b by cdof_j and A_b by
ċdof_j + cdof_j ×ₘ (V_b − P_j) below body(j), where P_j is the velocity of body(j) up to the end
of j's group (the later dofs whose ċdof sees v_j), so
df_b = I dA + cdof_j ×* (I V) + V ×* (I cdof_j).

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


@njit(cache=True, nogil=True, inline="always")
def _subtree_sum(body_parentid, first, end, frc):
    """Accumulate body forces of the subtree [first, end) into subtree forces, in place (the
    world, body 0, collects nothing)."""
    for b in range(end - 1, first, -1):
        p = body_parentid[b]
        if p > 0:
            for i in range(6):
                frc[p, i] += frc[b, i]


@njit(cache=True, nogil=True, inline="always")
def _partial_motion(body_parentid, body_dofadr, cdof, cdof_dot, cvel, cacc, qvel, qacc, b, end,
                    vel, acc):
    """Velocity and acceleration of body b counting its parent and its dofs before ``end``."""
    vel[:] = cvel[body_parentid[b]]
    acc[:] = cacc[body_parentid[b]]
    for k in range(body_dofadr[b], end):
        for i in range(6):
            vel[i] += cdof[k, i] * qvel[k]
            acc[i] += cdof_dot[k, i] * qvel[k] + cdof[k, i] * qacc[k]


@njit(cache=True, nogil=True, inline="always")
def _generalize(body_dofadr, body_dof_end, body_subtree_end, dof_bodyid, dof_parentid, cdof,
                cfrc, dfrc, s, j, first_turned, turned, out):
    """Column j of a configuration derivative from the subtree-force changes ``dfrc`` of
    body(j)'s subtree (``turned`` is scratch (nbody, 6))."""
    bj = dof_bodyid[j]
    for b in range(bj, body_subtree_end[bj]):
        t = turned[b]
        for i in range(6):
            t[i] = dfrc[b, i]
        # t = dF − s ×* F
        t[0] -= s[1] * cfrc[b, 2] - s[2] * cfrc[b, 1] + s[4] * cfrc[b, 5] - s[5] * cfrc[b, 4]
        t[1] -= s[2] * cfrc[b, 0] - s[0] * cfrc[b, 2] + s[5] * cfrc[b, 3] - s[3] * cfrc[b, 5]
        t[2] -= s[0] * cfrc[b, 1] - s[1] * cfrc[b, 0] + s[3] * cfrc[b, 4] - s[4] * cfrc[b, 3]
        t[3] -= s[1] * cfrc[b, 5] - s[2] * cfrc[b, 4]
        t[4] -= s[2] * cfrc[b, 3] - s[0] * cfrc[b, 5]
        t[5] -= s[0] * cfrc[b, 4] - s[1] * cfrc[b, 3]
    for k in range(body_dofadr[bj], body_dof_end[bj]):
        bk = dof_bodyid[k]
        out[k, j] = dot6(cdof[k], turned[bk]) if k >= first_turned else dot6(cdof[k], dfrc[bk])
    k = dof_parentid[body_dofadr[bj]]
    while k >= 0:
        out[k, j] = dot6(cdof[k], dfrc[bj])
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
    # M x as an RNEA without velocity and gravity: accelerations, I A and subtree forces
    xacc = np.empty((nbody, 6))
    inert_xacc = np.empty((nbody, 6))
    xfrc = np.empty((nbody, 6))
    xacc[0, :] = 0.0
    xfrc[0, :] = 0.0
    for b in range(1, nbody):
        xacc[b] = xacc[body_parentid[b]]
        adr = body_dofadr[b]
        for k in range(adr, adr + body_dofnum[b]):
            for i in range(6):
                xacc[b, i] += cdof[k, i] * x[k]
        inert_mul(inert_xacc[b], cinert[b], xacc[b])
        xfrc[b] = inert_xacc[b]
    _subtree_sum(body_parentid, 0, nbody, xfrc)

    dfrc = np.empty((nbody, 6))
    dxfrc = np.empty((nbody, 6))
    turned = np.empty((nbody, 6))
    w0 = np.empty(6)
    a0 = np.empty(6)
    x0 = np.empty(6)
    s_a0 = np.empty(6)
    s_w0 = np.empty(6)
    s_x0 = np.empty(6)
    moved = np.empty(6)
    dvel = np.empty(6)
    y = np.empty(6)
    z = np.empty(6)
    tmp = np.empty(6)
    dtau_dq[:, :] = 0.0
    dmx_dq[:, :] = 0.0
    for j in range(nv):
        if dof_free_translation[j]:
            continue
        bj = dof_bodyid[j]
        g = dof_group_start[j]
        s = cdof[j]
        _partial_motion(body_parentid, body_dofadr, cdof, cdof_dot, cvel, cacc, qvel, qacc, bj,
                        g, w0, a0)
        x0[:] = xacc[body_parentid[bj]]
        for k in range(body_dofadr[bj], g):
            for i in range(6):
                x0[i] += cdof[k, i] * x[k]
        cross_motion(s_a0, s, a0)
        cross_motion(s_w0, s, w0)
        cross_motion(s_x0, s, x0)
        end = body_subtree_end[bj]
        for b in range(bj, end):
            v = cvel[b]
            for i in range(6):
                moved[i] = v[i] - w0[i]
            cross_motion(dvel, s, moved)
            cross_motion(tmp, s_w0, moved)
            for i in range(6):
                y[i] = -s_a0[i] - tmp[i]
            inert_mul(z, cinert[b], s_w0)
            for i in range(6):
                z[i] = -z[i]
            add_cross_force(z, s, inert_vel[b])
            f = dfrc[b]
            inert_mul(f, cinert[b], y)
            add_cross_force(f, s, inert_acc[b])
            add_cross_force(f, dvel, inert_vel[b])
            add_cross_force(f, v, z)
            fx = dxfrc[b]
            inert_mul(fx, cinert[b], s_x0)
            for i in range(6):
                fx[i] = -fx[i]
            add_cross_force(fx, s, inert_xacc[b])
        _subtree_sum(body_parentid, bj, end, dfrc)
        _subtree_sum(body_parentid, bj, end, dxfrc)
        _generalize(body_dofadr, body_dof_end, body_subtree_end, dof_bodyid, dof_parentid, cdof,
                    cfrc, dfrc, s, j, g, turned, dtau_dq)
        _generalize(body_dofadr, body_dof_end, body_subtree_end, dof_bodyid, dof_parentid, cdof,
                    xfrc, dxfrc, s, j, g, turned, dmx_dq)

    # velocity derivative
    after = moved
    dacc = y
    inert_c = z
    dtau_dv[:, :] = 0.0
    for j in range(nv):
        if dof_free_translation[j]:
            continue
        bj = dof_bodyid[j]
        c = cdof[j]
        w0[:] = cvel[body_parentid[bj]]
        for k in range(body_dofadr[bj], dof_group_end[j]):
            for i in range(6):
                w0[i] += cdof[k, i] * qvel[k]
        end = body_subtree_end[bj]
        for b in range(bj, end):
            v = cvel[b]
            for i in range(6):
                after[i] = v[i] - w0[i]
            cross_motion(dacc, c, after)
            for i in range(6):
                dacc[i] += cdof_dot[j, i]
            f = dfrc[b]
            inert_mul(f, cinert[b], dacc)
            add_cross_force(f, c, inert_vel[b])
            inert_mul(inert_c, cinert[b], c)
            add_cross_force(f, v, inert_c)
        _subtree_sum(body_parentid, bj, end, dfrc)
        # velocities turn no axes: every dof reads dF
        for k in range(body_dofadr[bj], body_dof_end[bj]):
            dtau_dv[k, j] = dot6(cdof[k], dfrc[dof_bodyid[k]])
        k = dof_parentid[body_dofadr[bj]]
        while k >= 0:
            dtau_dv[k, j] = dot6(cdof[k], dfrc[bj])
            k = dof_parentid[k]
