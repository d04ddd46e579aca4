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
from derivatives.analytic.spatial import cross3, cross_motion, dot6, point_velocity

PLANE, SPHERE, CAPSULE, BOX = 0, 2, 3, 6


@njit(cache=True, nogil=True)
def contact_supported(geom_type, geom_static, g1, g2):
    """True if the pair (g1, g2) is a static plane against a sphere, capsule or box."""
    return (geom_type[g1] == PLANE and geom_static[g1] == 1 and geom_static[g2] == 0
            and geom_type[g2] in (SPHERE, CAPSULE, BOX))


@njit(cache=True, nogil=True)
def contact_jacobian_derivatives(dof_parentid, dof_group_start, body_chain_end, body_rootid,
                                 geom_type, geom_bodyid, geom_size, geom_xmat, cdof,
                                 subtree_com, qacc, qvel, efc_type, efc_pos, efc_force,
                                 contact_geom, contact_pos, contact_frame, contact_friction,
                                 contact_adr, contact_dim, dja, djv, djtf):
    """dja = (∂J/∂q) a, djv = (∂J/∂q) v (nefc, nv; rows of other constraints untouched) and
    djtf += ∂(Jᵀf)/∂q with f fixed (nv, nv), for all contacts.

    Returns the index of a contact whose turning frame is singular (a capsule within a
    millidegree of upright under a pyramidal or anisotropic cone, where MuJoCo's frame itself
    jumps), else −1.
    """
    nv = cdof.shape[0]
    chain = np.empty(nv, dtype=np.int64)
    prefix_a = np.empty((nv + 1, 6))
    prefix_v = np.empty((nv + 1, 6))
    c_pt = np.empty(3)
    rel = np.empty(3)
    axis = np.empty(3)
    dt1 = np.zeros(3)
    dt2 = np.zeros(3)
    dc = np.empty(3)
    dp = np.empty(3)
    vp_a = np.empty(3)
    vp_v = np.empty(3)
    moved = np.empty(6)
    dvel = np.empty(6)
    dvp = np.empty(3)
    d6 = np.empty(6)
    ff = np.empty(6)
    frc = np.empty(3)
    trq = np.empty(3)
    wrench = np.empty(6)
    dwrench = np.empty(6)
    turned = np.empty(6)
    tmp = np.empty(3)
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
            chain[n] = k
            n += 1
            k = dof_parentid[k]
        chain[:n] = chain[:n][::-1].copy()
        c0 = subtree_com[body_rootid[b]]
        prefix_a[0, :] = 0.0
        prefix_v[0, :] = 0.0
        for i in range(n):
            k = chain[i]
            for e in range(6):
                prefix_a[i + 1, e] = prefix_a[i, e] + cdof[k, e] * qacc[k]
                prefix_v[i + 1, e] = prefix_v[i, e] + cdof[k, e] * qvel[k]
        frame = contact_frame[c]
        nrm = frame[0:3]
        t1 = frame[3:6]
        t2 = frame[6:9]
        p = contact_pos[c]
        dist = efc_pos[adr]
        radius = geom_size[g2, 0] if geom_type[g2] != BOX else 0.0
        for e in range(3):
            c_pt[e] = p[e] + nrm[e] * (radius + 0.5 * dist)
            rel[e] = p[e] - c0[e]
        # the turning frame matters to pyramids and anisotropic friction only; for isotropic
        # elliptic cones it cancels exactly, and leaving it out avoids 1/‖ℓ − n (n·ℓ)‖ for a
        # capsule standing upright
        fr = contact_friction[c]
        rotating = geom_type[g2] == CAPSULE and dim > 1 and (
            pyramidal or fr[0] != fr[1] or (dim == 6 and fr[3] != fr[4]))
        perp = 1.0
        if rotating:
            for e in range(3):
                axis[e] = geom_xmat[g2, 3 * e + 2]
            na = nrm[0] * axis[0] + nrm[1] * axis[1] + nrm[2] * axis[2]
            perp = np.sqrt(max(1.0 - na * na, 0.0))
            if perp < 1e-5:
                return c

        # contact force in the frame: (normal, t1, t2, spin, roll1, roll2)
        ff[:] = 0.0
        if pyramidal:
            for e in range(2 * (dim - 1)):
                ff[0] += efc_force[adr + e]
            for e in range(1, dim):
                mu = contact_friction[c, e - 1]
                ff[e] = mu * (efc_force[adr + 2 * e - 2] - efc_force[adr + 2 * e - 1])
        else:
            for e in range(dim):
                ff[e] = efc_force[adr + e]
        for e in range(3):
            frc[e] = nrm[e] * ff[0] + t1[e] * ff[1] + t2[e] * ff[2]
            trq[e] = nrm[e] * ff[3] + t1[e] * ff[4] + t2[e] * ff[5]
        cross3(tmp, rel, frc)
        for e in range(3):
            wrench[e] = trq[e] + tmp[e]
            wrench[3 + e] = frc[e]
        point_velocity(vp_a, prefix_a[n], p, c0)
        point_velocity(vp_v, prefix_v[n], p, c0)

        for i in range(n):
            j = chain[i]
            s = cdof[j]
            first = i - (j - dof_group_start[j])
            point_velocity(dc, s, c_pt, c0)
            dn = nrm[0] * dc[0] + nrm[1] * dc[1] + nrm[2] * dc[2]
            for e in range(3):
                dp[e] = dc[e] - 0.5 * nrm[e] * dn
            if rotating:
                cross3(tmp, s[0:3], axis)
                nd = nrm[0] * tmp[0] + nrm[1] * tmp[1] + nrm[2] * tmp[2]
                for e in range(3):
                    tmp[e] -= nrm[e] * nd
                td = t1[0] * tmp[0] + t1[1] * tmp[1] + t1[2] * tmp[2]
                for e in range(3):
                    dt1[e] = (tmp[e] - t1[e] * td) / perp
                cross3(dt2, nrm, dt1)

            for which in range(2):
                prefix = prefix_a if which == 0 else prefix_v
                vp = vp_a if which == 0 else vp_v
                out = dja if which == 0 else djv
                vel = prefix[n]
                for e in range(6):
                    moved[e] = vel[e] - prefix[first, e]
                cross_motion(dvel, s, moved)
                # dvp = dV_v + dV_ω × (p − c₀) + ω × dp
                point_velocity(dvp, dvel, p, c0)
                cross3(tmp, vel[0:3], dp)
                for e in range(3):
                    dvp[e] += tmp[e]
                d6[0] = nrm[0] * dvp[0] + nrm[1] * dvp[1] + nrm[2] * dvp[2]
                d6[1] = t1[0] * dvp[0] + t1[1] * dvp[1] + t1[2] * dvp[2]
                d6[2] = t2[0] * dvp[0] + t2[1] * dvp[1] + t2[2] * dvp[2]
                d6[3] = nrm[0] * dvel[0] + nrm[1] * dvel[1] + nrm[2] * dvel[2]
                d6[4] = t1[0] * dvel[0] + t1[1] * dvel[1] + t1[2] * dvel[2]
                d6[5] = t2[0] * dvel[0] + t2[1] * dvel[1] + t2[2] * dvel[2]
                if rotating:
                    d6[1] += dt1[0] * vp[0] + dt1[1] * vp[1] + dt1[2] * vp[2]
                    d6[2] += dt2[0] * vp[0] + dt2[1] * vp[1] + dt2[2] * vp[2]
                    d6[4] += dt1[0] * vel[0] + dt1[1] * vel[1] + dt1[2] * vel[2]
                    d6[5] += dt2[0] * vel[0] + dt2[1] * vel[1] + dt2[2] * vel[2]
                if pyramidal:
                    for e in range(1, dim):
                        mu = contact_friction[c, e - 1]
                        out[adr + 2 * e - 2, j] = d6[0] + mu * d6[e]
                        out[adr + 2 * e - 1, j] = d6[0] - mu * d6[e]
                else:
                    for e in range(dim):
                        out[adr + e, j] = d6[e]

            # dW = (dτ + dp × F + (p − c₀) × dF, dF) with dF = dRᵀ f_t, dτ = dRᵀ f_r
            for e in range(3):
                dwrench[3 + e] = dt1[e] * ff[1] + dt2[e] * ff[2] if rotating else 0.0
                dwrench[e] = dt1[e] * ff[4] + dt2[e] * ff[5] if rotating else 0.0
            cross3(tmp, dp, frc)
            for e in range(3):
                dwrench[e] += tmp[e]
            cross3(tmp, rel, dwrench[3:6])
            for e in range(3):
                dwrench[e] += tmp[e]
            # turned dofs: dW − s ×* W
            for e in range(6):
                turned[e] = dwrench[e]
            turned[0] -= s[1] * wrench[2] - s[2] * wrench[1] + s[4] * wrench[5] - s[5] * wrench[4]
            turned[1] -= s[2] * wrench[0] - s[0] * wrench[2] + s[5] * wrench[3] - s[3] * wrench[5]
            turned[2] -= s[0] * wrench[1] - s[1] * wrench[0] + s[3] * wrench[4] - s[4] * wrench[3]
            turned[3] -= s[1] * wrench[5] - s[2] * wrench[4]
            turned[4] -= s[2] * wrench[3] - s[0] * wrench[5]
            turned[5] -= s[0] * wrench[4] - s[1] * wrench[3]
            for i2 in range(n):
                k = chain[i2]
                if i2 >= first:
                    djtf[k, j] += dot6(cdof[k], turned)
                else:
                    djtf[k, j] += dot6(cdof[k], dwrench)
    return -1
