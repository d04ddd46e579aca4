"""Feature gate: which models (and which contacts) the closed-form recipe covers.

Model features outside the recipe make the provider fall back to finite differences for the
whole model, with one warning naming them. Contact geometry is checked per knot instead: a
model may contain boxes or meshes that never touch anything; only a knot where a contact other
than a static plane against a sphere, capsule or box, a static height field against a sphere or
capsule, a moving sphere against a static box (any orientation: its faces, edges and corners,
:mod:`.box`), or a sphere or capsule against a sphere or capsule, is active falls back (see
:func:`uncovered_contact_pairs` for the warning issued up front). A covered height-field
contact that the exact geometry does not reproduce falls back too (:mod:`.hfield`).
"""

from __future__ import annotations

import mujoco
import numpy as np

from derivatives.analytic.sensor import FRAME_OBJECTS, SUPPORTED
from derivatives.analytic.tables import tree_is_depth_first

_I = mujoco.mjtIntegrator
_G = mujoco.mjtGeom
_S = mujoco.mjtSensor
_FRAME_SENSORS = {int(t) for t in (
    _S.mjSENS_FRAMEPOS, _S.mjSENS_FRAMEQUAT, _S.mjSENS_FRAMEXAXIS, _S.mjSENS_FRAMEYAXIS,
    _S.mjSENS_FRAMEZAXIS, _S.mjSENS_FRAMELINVEL, _S.mjSENS_FRAMEANGVEL,
)}
_SCALAR_JOINTS = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
_COVERED_GEOMS = (int(_G.mjGEOM_SPHERE), int(_G.mjGEOM_CAPSULE), int(_G.mjGEOM_BOX))
#: Geoms covered against each other (moving or static): spheres and capsules.
_ROUND_GEOMS = (int(_G.mjGEOM_SPHERE), int(_G.mjGEOM_CAPSULE))


def _disabled(m: mujoco.MjModel, flag) -> bool:
    return bool(m.opt.disableflags & int(flag))


def _enabled(m: mujoco.MjModel, flag) -> bool:
    return bool(m.opt.enableflags & int(flag))


def _standalone_free_body(m: mujoco.MjModel) -> bool:
    for j in range(m.njnt):
        b = m.jnt_bodyid[j]
        if (m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE and m.body_jntnum[b] == 1
                and m.body_subtreemass[b] == m.body_mass[b]):
            return True
    return False


def unsupported_features(m: mujoco.MjModel) -> list[str]:
    """Model features the analytic backend does not cover (empty: covered)."""
    out: list[str] = []
    if m.opt.integrator not in (int(_I.mjINT_EULER), int(_I.mjINT_IMPLICITFAST)):
        out.append(f"integrator {_I(m.opt.integrator).name}")
    elif m.opt.integrator == _I.mjINT_IMPLICITFAST and _standalone_free_body(m):
        out.append("implicitfast with a standalone free body (MuJoCo solves it unsymmetrically)")
    counts = {"equality constraints": m.neq, "tendons": m.ntendon, "flexes": m.nflex,
              "plugins": m.nplugin, "actuator activations (na > 0)": m.na,
              "actuator or sensor history": m.nhistory}
    out += [name for name, n in counts.items() if n]
    if m.opt.noslip_iterations > 0:
        out.append("noslip solver")
    for flag in (mujoco.mjtEnableBit.mjENBL_SLEEP, mujoco.mjtEnableBit.mjENBL_DIAGEXACT,
                 mujoco.mjtEnableBit.mjENBL_IPC, mujoco.mjtEnableBit.mjENBL_SPECULATIVE):
        if _enabled(m, flag):
            out.append(f"option {flag.name}")
    if m.opt.density > 0 or m.opt.viscosity > 0:
        out.append("fluid forces")
    if np.any(m.body_gravcomp != 0):
        out.append("gravity compensation")
    if m.flg_surfacevel or m.flg_adhesion:
        out.append("contact surface velocity or adhesion")
    if np.any(m.dof_dampingpoly != 0) or np.any(m.jnt_stiffnesspoly != 0):
        out.append("polynomial joint springs or dampers")
    if np.any(m.jnt_actfrclimited):
        out.append("joint actuator-force limits")
    for j in range(m.njnt):
        if m.jnt_type[j] not in _SCALAR_JOINTS:
            if m.jnt_stiffness[j] != 0:
                out.append("springs on ball or free joints")
            if m.jnt_limited[j] and m.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL:
                out.append("ball joint limits")
    out += _actuator_issues(m)
    out += _sensor_issues(m)
    if not tree_is_depth_first(m):
        out.append("bodies not in depth-first order")
    return sorted(set(out))


def _actuator_issues(m: mujoco.MjModel) -> list[str]:
    out = []
    gain_ok = (int(mujoco.mjtGain.mjGAIN_FIXED), int(mujoco.mjtGain.mjGAIN_AFFINE))
    bias_ok = (int(mujoco.mjtBias.mjBIAS_NONE), int(mujoco.mjtBias.mjBIAS_AFFINE))
    trn_ok = (int(mujoco.mjtTrn.mjTRN_JOINT), int(mujoco.mjtTrn.mjTRN_JOINTINPARENT))
    for i in range(m.nu):
        if m.actuator_dyntype[i] != mujoco.mjtDyn.mjDYN_NONE:
            out.append(f"actuator dynamics {mujoco.mjtDyn(m.actuator_dyntype[i]).name}")
        if m.actuator_gaintype[i] not in gain_ok:
            out.append(f"actuator gain {mujoco.mjtGain(m.actuator_gaintype[i]).name}")
        if m.actuator_biastype[i] not in bias_ok:
            out.append(f"actuator bias {mujoco.mjtBias(m.actuator_biastype[i]).name}")
        if m.actuator_trntype[i] not in trn_ok:
            out.append(f"actuator transmission {mujoco.mjtTrn(m.actuator_trntype[i]).name}")
        elif m.jnt_type[m.actuator_trnid[i, 0]] not in _SCALAR_JOINTS:
            out.append("actuators on ball or free joints")
        if m.actuator_damping[i] != 0 or np.any(m.actuator_dampingpoly[i] != 0):
            out.append("actuator damping")
        if m.actuator_delay[i] != 0 or m.actuator_plugin[i] >= 0:
            out.append("actuator delay or plugin")
        if (m.opt.integrator == _I.mjINT_IMPLICITFAST
                and m.actuator_gaintype[i] == mujoco.mjtGain.mjGAIN_AFFINE
                and m.actuator_gainprm[i, 2] != 0):
            out.append("velocity-dependent actuator gain with implicitfast")
    if m.nu != m.nactuator:
        out.append("multi-input actuators")
    return out


def _sensor_issues(m: mujoco.MjModel) -> list[str]:
    out = []
    for i in range(m.nsensor):
        t = m.sensor_type[i]
        if t not in SUPPORTED:
            out.append(f"sensor type {_S(t).name}")
            continue
        if t in _FRAME_SENSORS:
            if m.sensor_reftype[i] != 0 or m.sensor_refid[i] >= 0:
                out.append("frame sensors with a reference frame")
            if m.sensor_objtype[i] not in FRAME_OBJECTS:
                out.append(f"frame sensors on {mujoco.mjtObj(m.sensor_objtype[i]).name}")
        if (t in (int(_S.mjSENS_JOINTPOS), int(_S.mjSENS_JOINTVEL))
                and m.jnt_type[m.sensor_objid[i]] not in _SCALAR_JOINTS):
            out.append("joint sensors on ball or free joints")
        if m.sensor_delay[i] != 0 or np.any(m.sensor_interval[i] != 0):
            out.append("sensor delay or interval")
    return out


def uncovered_contact_pairs(m: mujoco.MjModel) -> list[str]:
    """Geom-type pairs that may collide (contype/conaffinity, parent filter, exclusions and
    explicit pairs) but are neither a static plane against a sphere, capsule or box, a static
    height field against a sphere or capsule, a moving sphere against a static box, nor a
    sphere or capsule against a sphere or capsule."""
    static = m.body_weldid[m.geom_bodyid] == 0
    filterparent = not _disabled(m, mujoco.mjtDisableBit.mjDSBL_FILTERPARENT)
    excluded = set(int(s) for s in m.exclude_signature)
    pairs = set()

    def add(g1: int, g2: int) -> None:
        t1, t2 = sorted((int(m.geom_type[g1]), int(m.geom_type[g2])))
        s1, s2 = (static[g1], static[g2]) if m.geom_type[g1] == t1 else (static[g2], static[g1])
        covered = ((t1 == _G.mjGEOM_PLANE and s1 and t2 in _COVERED_GEOMS)
                   or (t1 == _G.mjGEOM_HFIELD and s1 and t2 in _ROUND_GEOMS)
                   or (t1 == _G.mjGEOM_SPHERE and t2 == _G.mjGEOM_BOX and s2)
                   or (t1 in _ROUND_GEOMS and t2 in _ROUND_GEOMS))
        if not covered:
            pairs.add(f"{_G(t1).name[7:].lower()}-{_G(t2).name[7:].lower()}")

    for g1 in range(m.ngeom):
        for g2 in range(g1 + 1, m.ngeom):
            b1, b2 = m.geom_bodyid[g1], m.geom_bodyid[g2]
            w1, w2 = m.body_weldid[b1], m.body_weldid[b2]
            if w1 == w2 or (static[g1] and static[g2]):
                continue
            if not ((m.geom_contype[g1] & m.geom_conaffinity[g2])
                    or (m.geom_contype[g2] & m.geom_conaffinity[g1])):
                continue
            p1, p2 = m.body_weldid[m.body_parentid[w1]], m.body_weldid[m.body_parentid[w2]]
            if filterparent and w1 and w2 and (w1 == p2 or w2 == p1):
                continue
            if ((min(b1, b2) << 16) + max(b1, b2)) in excluded:
                continue
            add(g1, g2)
    for p in range(m.npair):
        add(int(m.pair_geom1[p]), int(m.pair_geom2[p]))
    return sorted(pairs)
