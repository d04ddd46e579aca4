"""Configuration derivatives of contact Jacobians: plane against sphere, capsule end or box corner.

A contact between a static plane (geom 1, normal n) and a point-like feature of a body b
(sphere centre, capsule end centre, box corner c, with radius r = 0 for a corner) sits at
p = c − n (r + dist/2). Its Jacobian rows, in the contact frame R = (n, t₁, t₂), are

    translational: R (v_lin + ω × (p − c₀)),      rotational: R ω,

with (ω, v_lin) = Σ_k cdof_k x_k over the dofs that move b. Perturbing dof j moves b with twist
s = cdof_j, so, as in :mod:`.rnea`,

    d(ω, v_lin) = s ×ₘ (V(x) − W₀(x)),     dc = s_v + s_ω × (c − c₀),     dp = (I − n nᵀ/2) dc

(the point slides: half the change of distance moves it along n). The plane's frame is constant
except for capsules, whose first tangent MuJoCo aligns with the capsule axis ℓ:
t₁ = normalize(ℓ − n (n·ℓ)), so dt₁ = (I − t₁t₁ᵀ)(dℓ − n (n·dℓ)) / ‖ℓ − n (n·ℓ)‖, dℓ = s_ω × ℓ,
dt₂ = n × dt₁. Isotropic elliptic cones do not see this rotation (it is left out for them),
pyramidal ones do.

Efc rows are the frame rows (elliptic: the first ``dim``) or pyramid edges J_n ± μ_k J_k. The
transposed product Jᵀf is the wrench W = (τ + (p − c₀) × F, F) of the contact force
(F = Rᵀ f_t, τ = Rᵀ f_r) read by every dof, (Jᵀf)_k = cdof_k · W, whose derivative is
cdof_k · dW for dofs that j does not turn and cdof_k · (dW − s ×* W) for those it turns.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from derivatives.analytic.constraint import CONTACT_PYRAMIDAL
from derivatives.analytic.spatial import (
    FASTMATH,
    axpy6,
    cross3,
    cross_force,
    cross_motion,
    dot3,
    dot_row6,
    point_velocity,
    row3,
    row6,
    store6,
    sub6,
)

PLANE, SPHERE, CAPSULE, BOX = 0, 2, 3, 6


@njit(cache=True, nogil=True)
def contact_supported(geom_type, geom_static, g1, g2):
    """True if the pair (g1, g2) is a static plane against a sphere, capsule or box."""
    return (geom_type[g1] == PLANE and geom_static[g1] == 1 and geom_static[g2] == 0
            and geom_type[g2] in (SPHERE, CAPSULE, BOX))


@njit(inline="always")
def _frame_rows(s, vel, unmoved, rel, dp, nrm, t1, t2):
    """Derivative of the frame rows (normal, t₁, t₂ of the point velocity, then of the angular
    velocity) of the twist ``vel`` along dof twist s, frame held fixed: dV = s ×ₘ (V − W₀),
    d(point velocity) = dV_v + dV_ω × (p − c₀) + V_ω × dp."""
    dvel = cross_motion(s, sub6(vel, unmoved))
    dv = point_velocity(dvel, rel)
    w = cross3((vel[0], vel[1], vel[2]), dp)
    dv = (dv[0] + w[0], dv[1] + w[1], dv[2] + w[2])
    dw = (dvel[0], dvel[1], dvel[2])
    return (dot3(nrm, dv), dot3(t1, dv), dot3(t2, dv), dot3(nrm, dw), dot3(t1, dw), dot3(t2, dw))


@njit(inline="always")
def _store_rows(out, j, d6, adr, dim, pyramidal, friction, c):
    """Column j of the efc rows of one contact from its frame-row derivative ``d6``."""
    if pyramidal:
        for e in range(1, dim):
            mu = friction[c, e - 1]
            out[adr + 2 * e - 2, j] = d6[0] + mu * d6[e]
            out[adr + 2 * e - 1, j] = d6[0] - mu * d6[e]
    else:
        for e in range(dim):
            out[adr + e, j] = d6[e]


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def contact_jacobian_derivatives(m, d, efc, djtf):
    """``efc.dja`` = (∂J/∂q) a, ``efc.djv`` = (∂J/∂q) v (nefc, nv; rows of other constraints
    untouched) and djtf += ∂(Jᵀf)/∂q with f = ``efc.force`` fixed (nv, nv), for all contacts
    (a = ``d.qacc``, v = ``d.qvel``).

    Returns the index of a contact whose turning frame is singular (a capsule within a
    millidegree of upright under a pyramidal or anisotropic cone, where MuJoCo's frame itself
    jumps), else −1.
    """
    dof_parentid = m.dof_parentid
    dof_group_start = m.dof_group_start
    body_chain_end = m.body_chain_end
    body_rootid = m.body_rootid
    geom_type = m.geom_type
    geom_bodyid = m.geom_bodyid
    geom_size = m.geom_size
    geom_xmat = d.geom_xmat
    cdof = d.cdof
    subtree_com = d.subtree_com
    qacc = d.qacc
    qvel = d.qvel
    efc_type = d.efc_type
    efc_pos = d.efc_pos
    efc_force = efc.force
    contact_geom = d.contact_geom
    contact_pos = d.contact_pos
    contact_frame = d.contact_frame
    contact_friction = d.contact_friction
    contact_adr = efc.contact_adr
    contact_dim = efc.contact_dim
    dja = efc.dja
    djv = efc.djv
    nv = cdof.shape[0]
    chain = np.empty(nv, dtype=np.int64)
    # prefix sums of cdof_k a_k and cdof_k v_k along the chain: the motion of the dofs before
    # each one (what it does not turn)
    prefix_a = np.empty((nv + 1, 6))
    prefix_v = np.empty((nv + 1, 6))
    zero3 = (0.0, 0.0, 0.0)
    for c in range(contact_adr.shape[0]):
        adr = contact_adr[c]
        if adr < 0:
            continue
        dim = contact_dim[c]
        pyramidal = efc_type[adr] == CONTACT_PYRAMIDAL
        g2 = contact_geom[c, 1]
        b = geom_bodyid[g2]
        n = 0
        k = body_chain_end[b]
        while k >= 0:
            n += 1
            k = dof_parentid[k]
        k = body_chain_end[b]
        for i in range(n - 1, -1, -1):
            chain[i] = k
            k = dof_parentid[k]
        c0 = row3(subtree_com, body_rootid[b])
        va = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        vv = va
        store6(prefix_a, 0, va)
        store6(prefix_v, 0, vv)
        for i in range(n):
            k = chain[i]
            ck = row6(cdof, k)
            va = axpy6(va, qacc[k], ck)
            vv = axpy6(vv, qvel[k], ck)
            store6(prefix_a, i + 1, va)
            store6(prefix_v, i + 1, vv)
        nrm = (contact_frame[c, 0], contact_frame[c, 1], contact_frame[c, 2])
        t1 = (contact_frame[c, 3], contact_frame[c, 4], contact_frame[c, 5])
        t2 = (contact_frame[c, 6], contact_frame[c, 7], contact_frame[c, 8])
        p = row3(contact_pos, c)
        dist = efc_pos[adr]
        radius = geom_size[g2, 0] if geom_type[g2] != BOX else 0.0
        lift = radius + 0.5 * dist
        rel = (p[0] - c0[0], p[1] - c0[1], p[2] - c0[2])
        crel = (rel[0] + nrm[0] * lift, rel[1] + nrm[1] * lift, rel[2] + nrm[2] * lift)
        # the turning frame matters to pyramids and anisotropic friction only; for isotropic
        # elliptic cones it cancels exactly, and leaving it out avoids 1/‖ℓ − n (n·ℓ)‖ for a
        # capsule standing upright
        fr = contact_friction
        rotating = geom_type[g2] == CAPSULE and dim > 1 and (
            pyramidal or fr[c, 0] != fr[c, 1] or (dim == 6 and fr[c, 3] != fr[c, 4]))
        perp = 1.0
        axis = zero3
        if rotating:
            axis = (geom_xmat[g2, 2], geom_xmat[g2, 5], geom_xmat[g2, 8])
            na = dot3(nrm, axis)
            perp = np.sqrt(max(1.0 - na * na, 0.0))
            if perp < 1e-5:
                return c

        # contact force in the frame: (normal, t1, t2, spin, roll1, roll2)
        f0 = f1 = f2 = f3 = f4 = f5 = 0.0
        if pyramidal:
            for e in range(2 * (dim - 1)):
                f0 += efc_force[adr + e]
            if dim > 1:
                f1 = fr[c, 0] * (efc_force[adr] - efc_force[adr + 1])
            if dim > 2:
                f2 = fr[c, 1] * (efc_force[adr + 2] - efc_force[adr + 3])
            if dim > 3:
                f3 = fr[c, 2] * (efc_force[adr + 4] - efc_force[adr + 5])
            if dim > 4:
                f4 = fr[c, 3] * (efc_force[adr + 6] - efc_force[adr + 7])
                f5 = fr[c, 4] * (efc_force[adr + 8] - efc_force[adr + 9])
        else:
            f0 = efc_force[adr]
            if dim > 1:
                f1 = efc_force[adr + 1]
                f2 = efc_force[adr + 2]
            if dim > 3:
                f3 = efc_force[adr + 3]
            if dim > 4:
                f4 = efc_force[adr + 4]
                f5 = efc_force[adr + 5]
        frc = (nrm[0] * f0 + t1[0] * f1 + t2[0] * f2, nrm[1] * f0 + t1[1] * f1 + t2[1] * f2,
               nrm[2] * f0 + t1[2] * f1 + t2[2] * f2)
        trq = (nrm[0] * f3 + t1[0] * f4 + t2[0] * f5, nrm[1] * f3 + t1[1] * f4 + t2[1] * f5,
               nrm[2] * f3 + t1[2] * f4 + t2[2] * f5)
        moment = cross3(rel, frc)
        wrench = (trq[0] + moment[0], trq[1] + moment[1], trq[2] + moment[2], frc[0], frc[1],
                  frc[2])
        vp_a = point_velocity(va, rel)
        vp_v = point_velocity(vv, rel)

        for i in range(n):
            j = chain[i]
            s = row6(cdof, j)
            first = i - (j - dof_group_start[j])
            # the point slides: dp = (I − n nᵀ/2) dc
            dc = point_velocity(s, crel)
            dn = 0.5 * dot3(nrm, dc)
            dp = (dc[0] - nrm[0] * dn, dc[1] - nrm[1] * dn, dc[2] - nrm[2] * dn)
            dt1 = zero3
            dt2 = zero3
            if rotating:
                da = cross3((s[0], s[1], s[2]), axis)
                nd = dot3(nrm, da)
                da = (da[0] - nrm[0] * nd, da[1] - nrm[1] * nd, da[2] - nrm[2] * nd)
                td = dot3(t1, da)
                dt1 = ((da[0] - t1[0] * td) / perp, (da[1] - t1[1] * td) / perp,
                       (da[2] - t1[2] * td) / perp)
                dt2 = cross3(nrm, dt1)
            d6a = _frame_rows(s, va, row6(prefix_a, first), rel, dp, nrm, t1, t2)
            d6v = _frame_rows(s, vv, row6(prefix_v, first), rel, dp, nrm, t1, t2)
            if rotating:
                d6a = (d6a[0], d6a[1] + dot3(dt1, vp_a), d6a[2] + dot3(dt2, vp_a), d6a[3],
                       d6a[4] + dt1[0] * va[0] + dt1[1] * va[1] + dt1[2] * va[2],
                       d6a[5] + dt2[0] * va[0] + dt2[1] * va[1] + dt2[2] * va[2])
                d6v = (d6v[0], d6v[1] + dot3(dt1, vp_v), d6v[2] + dot3(dt2, vp_v), d6v[3],
                       d6v[4] + dt1[0] * vv[0] + dt1[1] * vv[1] + dt1[2] * vv[2],
                       d6v[5] + dt2[0] * vv[0] + dt2[1] * vv[1] + dt2[2] * vv[2])
            _store_rows(dja, j, d6a, adr, dim, pyramidal, fr, c)
            _store_rows(djv, j, d6v, adr, dim, pyramidal, fr, c)

            # dW = (dτ + dp × F + (p − c₀) × dF, dF) with dF = dRᵀ f_t, dτ = dRᵀ f_r
            dfrc = (dt1[0] * f1 + dt2[0] * f2, dt1[1] * f1 + dt2[1] * f2,
                    dt1[2] * f1 + dt2[2] * f2)
            dtrq = (dt1[0] * f4 + dt2[0] * f5, dt1[1] * f4 + dt2[1] * f5,
                    dt1[2] * f4 + dt2[2] * f5)
            m1 = cross3(dp, frc)
            m2 = cross3(rel, dfrc)
            dwrench = (dtrq[0] + m1[0] + m2[0], dtrq[1] + m1[1] + m2[1],
                       dtrq[2] + m1[2] + m2[2], dfrc[0], dfrc[1], dfrc[2])
            # dofs that j turns read dW − s ×* W, the others dW
            turned = sub6(dwrench, cross_force(s, wrench))
            for i2 in range(n):
                k = chain[i2]
                djtf[k, j] += dot_row6(cdof, k, turned if i2 >= first else dwrench)
    return -1
