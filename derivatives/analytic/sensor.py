"""Sensor Jacobians C = ∂s/∂x (x = (dq, dv)) and D = ∂s/∂u in closed form.

Tasks define residuals on sensors, so these are the residual Jacobians' raw material. For a
point p carried by body b and dofs k that move b, the Jacobians are the usual

    ∂p/∂q_k = cdof_k,v + cdof_k,ω × (p − c₀),        ∂R/∂q_k = [cdof_k,ω]ₓ R,

and velocity sensors read V = cvel[b] = Σ_k cdof_k v_k, whose configuration derivative is, as in
:mod:`.rnea`, dV/dq_j = s ×ₘ (V − W₀) with s = cdof_j and W₀ the part of V from dofs j does not
turn. A subtree's centre of mass moves with every dof above it, and with the dofs inside it in
proportion to the mass they carry: ∂com_b/∂q_j = (m_sub(j) / m_sub(b)) (s_v + s_ω × (com_j − c₀)),
with com_j the centre of mass of the part moved by j; its velocity is (∂com_b/∂q) v.

``SUPPORTED`` lists the sensor types computed here (all at the current state, as MuJoCo's
sensors are). Real-valued sensor components clipped by a positive ``cutoff`` get zero rows.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from derivatives.analytic.spatial import cross3, cross_motion, point_velocity

VELOCIMETER, GYRO = 2, 3
JOINTPOS, JOINTVEL, ACTUATORPOS, ACTUATORVEL, ACTUATORFRC = 9, 10, 13, 14, 15
FRAMEPOS, FRAMEQUAT, FRAMEXAXIS, FRAMEYAXIS, FRAMEZAXIS = 26, 27, 28, 29, 30
FRAMELINVEL, FRAMEANGVEL, SUBTREECOM, SUBTREELINVEL = 31, 32, 35, 36

SUPPORTED = {
    VELOCIMETER: "velocimeter", GYRO: "gyro", JOINTPOS: "jointpos", JOINTVEL: "jointvel",
    ACTUATORPOS: "actuatorpos", ACTUATORVEL: "actuatorvel", ACTUATORFRC: "actuatorfrc",
    FRAMEPOS: "framepos", FRAMEQUAT: "framequat", FRAMEXAXIS: "framexaxis",
    FRAMEYAXIS: "frameyaxis", FRAMEZAXIS: "framezaxis", FRAMELINVEL: "framelinvel",
    FRAMEANGVEL: "frameangvel", SUBTREECOM: "subtreecom", SUBTREELINVEL: "subtreelinvel",
}
#: Frame sensors may sit on these objects (``mjtObj``): body (inertial frame), xbody, geom, site.
FRAME_OBJECTS = (1, 2, 5, 6)
_BODY, _XBODY, _GEOM, _SITE = 1, 2, 5, 6


@njit(cache=True, nogil=True)
def _object_pose(objtype, objid, xpos, xmat, xipos, ximat, geom_xpos, geom_xmat, site_xpos,
                 site_xmat):
    if objtype == _SITE:
        return site_xpos[objid], site_xmat[objid]
    if objtype == _GEOM:
        return geom_xpos[objid], geom_xmat[objid]
    if objtype == _BODY:
        return xipos[objid], ximat[objid]
    return xpos[objid], xmat[objid]


@njit(cache=True, nogil=True)
def _chain(body_chain_end, dof_parentid, b, chain):
    """Dofs that move body b, last first; returns their number."""
    n = 0
    k = body_chain_end[b]
    while k >= 0:
        chain[n] = k
        n += 1
        k = dof_parentid[k]
    return n


@njit(cache=True, nogil=True)
def sensor_jacobians(sensor_type, sensor_objtype, sensor_objid, sensor_bodyid, sensor_adr,
                     sensor_dim, sensor_cutoff, dof_parentid, dof_bodyid, dof_group_start,
                     body_parentid, body_chain_end, body_rootid, body_subtree_end, body_dofadr,
                     body_mass, body_subtreemass, jnt_dofadr, actuator_dof, actuator_gear,
                     cdof, cvel, subtree_com, xpos, xmat, xipos, ximat, geom_xpos, geom_xmat,
                     site_xpos, site_xmat, qvel, sensordata, dforce_dlen, dforce_dvel,
                     dforce_dctrl, C, D):
    """Fill C (nsensordata, 2 nv) and D (nsensordata, nu) for the supported sensor types.

    ``sensor_bodyid`` is the body carrying each sensor's object (the body itself for subtree
    sensors); ``sensor_cutoff`` is the cutoff of real-valued sensors (0: none).
    """
    nv = cdof.shape[0]
    C[:, :] = 0.0
    D[:, :] = 0.0
    chain = np.empty(nv, dtype=np.int64)
    suffix = np.empty((nv + 1, 6))
    moved = np.empty(6)
    dvel = np.empty(6)
    vec = np.empty(3)
    dvec = np.empty(3)
    tmp = np.empty(3)
    rot = np.empty(3)
    for i in range(sensor_type.shape[0]):
        t = sensor_type[i]
        adr = sensor_adr[i]
        obj = sensor_objid[i]
        if t == JOINTPOS:
            C[adr, jnt_dofadr[obj]] = 1.0
            continue
        if t == JOINTVEL:
            C[adr, nv + jnt_dofadr[obj]] = 1.0
            continue
        if t in (ACTUATORPOS, ACTUATORVEL):
            C[adr, (0 if t == ACTUATORPOS else nv) + actuator_dof[obj]] = actuator_gear[obj]
            continue
        if t == ACTUATORFRC:
            dof = actuator_dof[obj]
            C[adr, dof] = actuator_gear[obj] * dforce_dlen[obj]
            C[adr, nv + dof] = actuator_gear[obj] * dforce_dvel[obj]
            D[adr, obj] = dforce_dctrl[obj]
            continue

        b = sensor_bodyid[i]
        c0 = subtree_com[body_rootid[b]]
        n = _chain(body_chain_end, dof_parentid, b, chain)
        if t in (SUBTREECOM, SUBTREELINVEL):
            _subtree_rows(t, b, adr, n, chain, body_parentid, dof_bodyid, dof_group_start,
                          body_subtree_end, body_dofadr, body_subtreemass, body_mass, cdof,
                          cvel, xipos, subtree_com, c0, qvel, C)
            continue

        pos, mat = _object_pose(sensor_objtype[i], obj, xpos, xmat, xipos, ximat, geom_xpos,
                                geom_xmat, site_xpos, site_xmat)
        vel = cvel[b]
        # suffix[m] = Σ of cdof_k v_k over the m + 1 last dofs of the chain (the moved parts)
        for e in range(6):
            suffix[0, e] = cdof[chain[0], e] * qvel[chain[0]] if n > 0 else 0.0
        for m in range(1, n):
            k = chain[m]
            for e in range(6):
                suffix[m, e] = suffix[m - 1, e] + cdof[k, e] * qvel[k]
        point_velocity(vec, vel, pos, c0)  # linear velocity of the object's point
        for m in range(n):
            k = chain[m]
            s = cdof[k]
            if t == FRAMEPOS:
                point_velocity(tmp, s, pos, c0)
                for e in range(3):
                    C[adr + e, k] = tmp[e]
            elif t in (FRAMEXAXIS, FRAMEYAXIS, FRAMEZAXIS):
                col = t - FRAMEXAXIS
                for e in range(3):
                    rot[e] = mat[3 * e + col]
                cross3(tmp, s[0:3], rot)
                for e in range(3):
                    C[adr + e, k] = tmp[e]
            elif t == FRAMEQUAT:
                # d quat = ½ (0, ω) ⊗ quat for a world-frame rotation ω
                q = sensordata[adr : adr + 4]
                C[adr, k] = -0.5 * (s[0] * q[1] + s[1] * q[2] + s[2] * q[3])
                cross3(tmp, s[0:3], q[1:4])
                for e in range(3):
                    C[adr + 1 + e, k] = 0.5 * (q[0] * s[e] + tmp[e])
            else:
                # velocity sensors: ∂/∂v columns, then ∂/∂q through the turned twist
                first = m + (k - dof_group_start[k])
                for e in range(6):
                    moved[e] = suffix[first, e]
                cross_motion(dvel, s, moved)
                if t in (FRAMEANGVEL, GYRO):
                    for e in range(3):
                        vec[e] = vel[e]
                        dvec[e] = dvel[e]
                    if t == GYRO:
                        _local(mat, vec, dvec, s, tmp)
                    for e in range(3):
                        C[adr + e, nv + k] = s[e]
                        C[adr + e, k] = dvec[e]
                    if t == GYRO:
                        _rotate_columns_to_local(mat, C, adr, nv + k)
                else:
                    point_velocity(vec, vel, pos, c0)
                    point_velocity(dvec, dvel, pos, c0)
                    point_velocity(rot, s, pos, c0)  # dp of the point
                    cross3(tmp, vel[0:3], rot)
                    for e in range(3):
                        dvec[e] += tmp[e]
                    if t == VELOCIMETER:
                        _local(mat, vec, dvec, s, tmp)
                    for e in range(3):
                        C[adr + e, nv + k] = rot[e]
                        C[adr + e, k] = dvec[e]
                    if t == VELOCIMETER:
                        _rotate_columns_to_local(mat, C, adr, nv + k)
        _apply_cutoff(sensordata, adr, sensor_dim[i], sensor_cutoff[i], C, D)


@njit(cache=True, nogil=True)
def _local(mat, vec, dvec, s, tmp):
    """In place: dvec ← Rᵀ (dvec − s_ω × vec), the change of Rᵀ vec when R turns with s_ω."""
    cross3(tmp, s[0:3], vec)
    for e in range(3):
        tmp[e] = dvec[e] - tmp[e]
    for e in range(3):
        dvec[e] = mat[e] * tmp[0] + mat[3 + e] * tmp[1] + mat[6 + e] * tmp[2]


@njit(cache=True, nogil=True)
def _rotate_columns_to_local(mat, C, adr, col):
    """C[adr:adr+3, col] ← Rᵀ C[adr:adr+3, col]."""
    x, y, z = C[adr, col], C[adr + 1, col], C[adr + 2, col]
    for e in range(3):
        C[adr + e, col] = mat[e] * x + mat[3 + e] * y + mat[6 + e] * z


@njit(cache=True, nogil=True)
def _subtree_rows(t, b, adr, n, chain, body_parentid, dof_bodyid, dof_group_start,
                  body_subtree_end, body_dofadr, body_subtreemass, body_mass, cdof, cvel, xipos,
                  subtree_com, c0, qvel, C):
    """Rows of a subtreecom or subtreelinvel sensor on body b (``chain``: its n moving dofs).

    The velocity's configuration derivative sums, over the bodies c moved by dof k (twist s,
    unmoved velocity W₀, U_c = V_c − W₀, r_c = xipos_c − c₀),

        m_c [(s ×ₘ U_c)_v + (s_ω × U_c,ω) × r_c + V_c,ω × (s_v + s_ω × r_c)],

    which only needs the sums of m, m V, m r and P = Σ m V_ω r_cᵀ over the moved subtree:
    Σ m U_v = mV_v − m W₀_v (likewise ω), Σ (s_ω × U_ω) × r m = (P − W₀_ω (mr)ᵀ) s_ω
    − s_ω (tr P − W₀_ω·mr), Σ m V_ω × (s_ω × r) = s_ω tr P − Pᵀ s_ω.
    """
    nv = cdof.shape[0]
    total = body_subtreemass[b]
    end = body_subtree_end[b]
    jac = np.empty(3)
    w0 = np.empty(6)
    velocity = t == SUBTREELINVEL
    # per-subtree sums over [b, end): m V (6), m r (3), P (9)
    sums = np.zeros((end - b, 18))
    if velocity:
        for c in range(end - 1, b - 1, -1):
            m = body_mass[c]
            row = sums[c - b]
            for e in range(6):
                row[e] += m * cvel[c, e]
            for e in range(3):
                r = xipos[c, e] - c0[e]
                row[6 + e] += m * r
                for f in range(3):
                    row[9 + 3 * f + e] += m * cvel[c, f] * r
            if c > b:
                parent = sums[body_parentid[c] - b]
                for e in range(18):
                    parent[e] += row[e]
    for k in range(nv):
        bk = dof_bodyid[k]
        above = False
        for m in range(n):
            above = above or chain[m] == k
        if not (above or b < bk < end):
            continue
        # dofs above (and in) b move the whole subtree, dofs inside it move their own subtree
        part = b if above else bk
        s = cdof[k]
        point_velocity(jac, s, subtree_com[part], c0)
        mass = body_subtreemass[part]
        share = mass / total
        for e in range(3):
            jac[e] *= share
        if not velocity:
            for e in range(3):
                C[adr + e, k] = jac[e]
            continue
        for e in range(3):
            C[adr + e, nv + k] = jac[e]
        w0[:] = cvel[body_parentid[bk]]
        for kk in range(body_dofadr[bk], dof_group_start[k]):
            for e in range(6):
                w0[e] += cdof[kk, e] * qvel[kk]
        row = sums[part - b]
        ua0, ua1, ua2 = row[0] - mass * w0[0], row[1] - mass * w0[1], row[2] - mass * w0[2]
        ul0, ul1, ul2 = row[3] - mass * w0[3], row[4] - mass * w0[4], row[5] - mass * w0[5]
        sa0, sa1, sa2, sl0, sl1, sl2 = s[0], s[1], s[2], s[3], s[4], s[5]
        mr0, mr1, mr2 = row[6], row[7], row[8]
        # (s ×ₘ Σ m U)_v + (Σ m V_ω) × s_v
        acc0 = sa1 * ul2 - sa2 * ul1 + sl1 * ua2 - sl2 * ua1 + row[1] * sl2 - row[2] * sl1
        acc1 = sa2 * ul0 - sa0 * ul2 + sl2 * ua0 - sl0 * ua2 + row[2] * sl0 - row[0] * sl2
        acc2 = sa0 * ul1 - sa1 * ul0 + sl0 * ua1 - sl1 * ua0 + row[0] * sl1 - row[1] * sl0
        C[adr, k] = acc0
        C[adr + 1, k] = acc1
        C[adr + 2, k] = acc2
        # (P − W₀_ω mrᵀ) s_ω − Pᵀ s_ω + s_ω (W₀_ω·mr)   (the tr P terms cancel)
        dot_w = w0[0] * mr0 + w0[1] * mr1 + w0[2] * mr2
        mrs = mr0 * sa0 + mr1 * sa1 + mr2 * sa2
        for e in range(3):
            ps = row[9 + 3 * e] * sa0 + row[10 + 3 * e] * sa1 + row[11 + 3 * e] * sa2
            pts = row[9 + e] * sa0 + row[12 + e] * sa1 + row[15 + e] * sa2
            C[adr + e, k] = (C[adr + e, k] + ps - w0[e] * mrs - pts + s[e] * dot_w) / total


@njit(cache=True, nogil=True)
def _apply_cutoff(sensordata, adr, dim, cutoff, C, D):
    if cutoff <= 0.0:
        return
    for e in range(adr, adr + dim):
        if sensordata[e] >= cutoff or sensordata[e] <= -cutoff:
            C[e, :] = 0.0
            D[e, :] = 0.0
