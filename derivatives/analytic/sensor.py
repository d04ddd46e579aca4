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

from derivatives.analytic.spatial import (
    FASTMATH,
    axpy6,
    cross3,
    cross_motion,
    point_velocity,
    row3,
    row6,
)

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


@njit(inline="always")
def _object_pose(d, objtype, objid):
    if objtype == _SITE:
        return d.site_xpos[objid], d.site_xmat[objid]
    if objtype == _GEOM:
        return d.geom_xpos[objid], d.geom_xmat[objid]
    if objtype == _BODY:
        return d.xipos[objid], d.ximat[objid]
    return d.xpos[objid], d.xmat[objid]


@njit(inline="always")
def _store3(C, adr, col, v):
    C[adr, col] = v[0]
    C[adr + 1, col] = v[1]
    C[adr + 2, col] = v[2]


@njit(inline="always")
def _local(mat, v):
    """Rᵀ v for a row-major rotation matrix ``mat`` (9,)."""
    return (mat[0] * v[0] + mat[3] * v[1] + mat[6] * v[2],
            mat[1] * v[0] + mat[4] * v[1] + mat[7] * v[2],
            mat[2] * v[0] + mat[5] * v[1] + mat[8] * v[2])


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def sensor_jacobians(m, d, dforce_dlen, dforce_dvel, dforce_dctrl, C, D):
    """Fill C (nsensordata, 2 nv) and D (nsensordata, nu) for the supported sensor types, given
    the actuator force derivatives (:func:`.actuation.actuator_derivatives`).

    ``m.sensor_bodyid`` is the body carrying each sensor's object (the body itself for subtree
    sensors); ``m.sensor_cutoff`` is the cutoff of real-valued sensors (0: none).
    """
    sensor_type = m.sensor_type
    sensor_objtype = m.sensor_objtype
    sensor_objid = m.sensor_objid
    sensor_bodyid = m.sensor_bodyid
    sensor_adr = m.sensor_adr
    sensor_dim = m.sensor_dim
    sensor_cutoff = m.sensor_cutoff
    dof_parentid = m.dof_parentid
    dof_group_start = m.dof_group_start
    body_chain_end = m.body_chain_end
    body_rootid = m.body_rootid
    jnt_dofadr = m.jnt_dofadr
    actuator_dof = m.actuator_dof
    actuator_gear = m.actuator_gear
    cdof = d.cdof
    cvel = d.cvel
    subtree_com = d.subtree_com
    qvel = d.qvel
    sensordata = d.sensordata
    nv = cdof.shape[0]
    C[:, :] = 0.0
    D[:, :] = 0.0
    chain = np.empty(nv, dtype=np.int64)
    suffix = np.empty((nv + 1, 6))
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
        c0 = row3(subtree_com, body_rootid[b])
        # dofs that move body b, last first
        n = 0
        k = body_chain_end[b]
        while k >= 0:
            chain[n] = k
            n += 1
            k = dof_parentid[k]
        if t in (SUBTREECOM, SUBTREELINVEL):
            _subtree_rows(m, d, t, b, adr, n, chain, c0, C)
            continue

        pos, mat = _object_pose(d, sensor_objtype[i], obj)
        rel = (pos[0] - c0[0], pos[1] - c0[1], pos[2] - c0[2])
        vel = row6(cvel, b)
        velocity = t in (FRAMELINVEL, FRAMEANGVEL, GYRO, VELOCIMETER)
        if velocity:
            # suffix[j] = Σ of cdof_k v_k over the j + 1 last dofs of the chain (the moved parts)
            moved = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
            for j in range(n):
                k = chain[j]
                moved = axpy6(moved, qvel[k], row6(cdof, k))
                for e in range(6):
                    suffix[j, e] = moved[e]
        vp = point_velocity(vel, rel)  # linear velocity of the object's point
        w = (vel[0], vel[1], vel[2])
        for j in range(n):
            k = chain[j]
            s = row6(cdof, k)
            sw = (s[0], s[1], s[2])
            if t == FRAMEPOS:
                _store3(C, adr, k, point_velocity(s, rel))
            elif t in (FRAMEXAXIS, FRAMEYAXIS, FRAMEZAXIS):
                col = t - FRAMEXAXIS
                _store3(C, adr, k, cross3(sw, (mat[col], mat[3 + col], mat[6 + col])))
            elif t == FRAMEQUAT:
                # d quat = ½ (0, ω) ⊗ quat for a world-frame rotation ω
                q = sensordata[adr : adr + 4]
                C[adr, k] = -0.5 * (s[0] * q[1] + s[1] * q[2] + s[2] * q[3])
                x = cross3(sw, (q[1], q[2], q[3]))
                for e in range(3):
                    C[adr + 1 + e, k] = 0.5 * (q[0] * s[e] + x[e])
            else:
                # velocity sensors: ∂/∂v columns, then ∂/∂q through the turned twist
                first = j + (k - dof_group_start[k])
                dvel = cross_motion(s, row6(suffix, first))
                if t in (FRAMEANGVEL, GYRO):
                    dv = (dvel[0], dvel[1], dvel[2])
                    col = sw
                    value = w
                else:
                    # d(point velocity) = dV_v + dV_ω × r + V_ω × dp, dp = s_v + s_ω × r
                    col = point_velocity(s, rel)
                    x = cross3(w, col)
                    dv = point_velocity(dvel, rel)
                    dv = (dv[0] + x[0], dv[1] + x[1], dv[2] + x[2])
                    value = vp
                if t in (GYRO, VELOCIMETER):
                    # in the object's frame: d(Rᵀ v) = Rᵀ (dv − s_ω × v)
                    x = cross3(sw, value)
                    dv = _local(mat, (dv[0] - x[0], dv[1] - x[1], dv[2] - x[2]))
                    col = _local(mat, col)
                _store3(C, adr, nv + k, col)
                _store3(C, adr, k, dv)
        _apply_cutoff(sensordata, adr, sensor_dim[i], sensor_cutoff[i], C, D)


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _subtree_rows(m, d, t, b, adr, n, chain, c0, C):
    """Rows of a subtreecom or subtreelinvel sensor on body b (``chain``: its n moving dofs).

    The velocity's configuration derivative sums, over the bodies c moved by dof k (twist s,
    unmoved velocity W₀, U_c = V_c − W₀, r_c = xipos_c − c₀),

        m_c [(s ×ₘ U_c)_v + (s_ω × U_c,ω) × r_c + V_c,ω × (s_v + s_ω × r_c)],

    which only needs the sums of m, m V, m r and P = Σ m V_ω r_cᵀ over the moved subtree:
    Σ m U_v = mV_v − m W₀_v (likewise ω), Σ (s_ω × U_ω) × r m = (P − W₀_ω (mr)ᵀ) s_ω
    − s_ω (tr P − W₀_ω·mr), Σ m V_ω × (s_ω × r) = s_ω tr P − Pᵀ s_ω.
    """
    body_parentid = m.body_parentid
    dof_bodyid = m.dof_bodyid
    dof_group_start = m.dof_group_start
    body_subtree_end = m.body_subtree_end
    body_dofadr = m.body_dofadr
    body_subtreemass = m.body_subtreemass
    body_mass = m.body_mass
    cdof = d.cdof
    cvel = d.cvel
    xipos = d.xipos
    subtree_com = d.subtree_com
    qvel = d.qvel
    nv = cdof.shape[0]
    total = body_subtreemass[b]
    end = body_subtree_end[b]
    velocity = t == SUBTREELINVEL
    # per-subtree sums over [b, end): m V (6), m r (3), P (9)
    sums = np.zeros((end - b, 18))
    if velocity:
        for c in range(end - 1, b - 1, -1):
            mc = body_mass[c]
            row = c - b
            for e in range(6):
                sums[row, e] += mc * cvel[c, e]
            for e in range(3):
                r = xipos[c, e] - c0[e]
                sums[row, 6 + e] += mc * r
                for f in range(3):
                    sums[row, 9 + 3 * f + e] += mc * cvel[c, f] * r
            if c > b:
                parent = body_parentid[c] - b
                for e in range(18):
                    sums[parent, e] += sums[row, e]
    for k in range(nv):
        bk = dof_bodyid[k]
        above = False
        for j in range(n):
            above = above or chain[j] == k
        if not (above or b < bk < end):
            continue
        # dofs above (and in) b move the whole subtree, dofs inside it move their own subtree
        part = b if above else bk
        s = row6(cdof, k)
        mass = body_subtreemass[part]
        share = mass / total
        com = row3(subtree_com, part)
        jac = point_velocity(s, (com[0] - c0[0], com[1] - c0[1], com[2] - c0[2]))
        jac = (jac[0] * share, jac[1] * share, jac[2] * share)
        if not velocity:
            _store3(C, adr, k, jac)
            continue
        _store3(C, adr, nv + k, jac)
        w0 = row6(cvel, body_parentid[bk])
        for kk in range(body_dofadr[bk], dof_group_start[k]):
            w0 = axpy6(w0, qvel[kk], row6(cdof, kk))
        row = part - b
        ua0, ua1, ua2 = (sums[row, 0] - mass * w0[0], sums[row, 1] - mass * w0[1],
                         sums[row, 2] - mass * w0[2])
        ul0, ul1, ul2 = (sums[row, 3] - mass * w0[3], sums[row, 4] - mass * w0[4],
                         sums[row, 5] - mass * w0[5])
        sa0, sa1, sa2, sl0, sl1, sl2 = s
        mw0, mw1, mw2 = sums[row, 0], sums[row, 1], sums[row, 2]
        mr0, mr1, mr2 = sums[row, 6], sums[row, 7], sums[row, 8]
        # (s ×ₘ Σ m U)_v + (Σ m V_ω) × s_v
        acc0 = sa1 * ul2 - sa2 * ul1 + sl1 * ua2 - sl2 * ua1 + mw1 * sl2 - mw2 * sl1
        acc1 = sa2 * ul0 - sa0 * ul2 + sl2 * ua0 - sl0 * ua2 + mw2 * sl0 - mw0 * sl2
        acc2 = sa0 * ul1 - sa1 * ul0 + sl0 * ua1 - sl1 * ua0 + mw0 * sl1 - mw1 * sl0
        acc = (acc0, acc1, acc2)
        # (P − W₀_ω mrᵀ) s_ω − Pᵀ s_ω + s_ω (W₀_ω·mr)   (the tr P terms cancel)
        dot_w = w0[0] * mr0 + w0[1] * mr1 + w0[2] * mr2
        mrs = mr0 * sa0 + mr1 * sa1 + mr2 * sa2
        for e in range(3):
            ps = sums[row, 9 + 3 * e] * sa0 + sums[row, 10 + 3 * e] * sa1 \
                + sums[row, 11 + 3 * e] * sa2
            pts = sums[row, 9 + e] * sa0 + sums[row, 12 + e] * sa1 + sums[row, 15 + e] * sa2
            C[adr + e, k] = (acc[e] + ps - w0[e] * mrs - pts + s[e] * dot_w) / total


@njit(cache=True, nogil=True)
def _apply_cutoff(sensordata, adr, dim, cutoff, C, D):
    if cutoff <= 0.0:
        return
    for e in range(adr, adr + dim):
        if sensordata[e] >= cutoff or sensordata[e] <= -cutoff:
            C[e, :] = 0.0
            D[e, :] = 0.0
