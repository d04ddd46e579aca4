"""Reference states and the finite-difference oracle used to verify the analytic backend.

Test code, outside the packages (the product never uses it): imported by the analytic
backend's tests and by ``scripts/bench_derivatives.py`` (which puts ``tests/`` on its path, as
for :mod:`reference_models`). Every state starts from the model's
first keyframe, lowers the floating base until its lowest geoms press ``depth`` into the floor,
and adds seeded random velocities and controls; then

* ``standing``: as is;
* ``trotting``: mid-stride, walking forward at 0.5 m/s on half its feet (a diagonal pair of a
  quadruped, one foot of a biped);
* ``sliding``: the base moves sideways at 0.4 m/s, so feet slide (elliptic cones in the cone
  state, pyramid edges split between quadratic and satisfied);
* ``airborne``: one leg is folded so that its foot leaves the floor;
* ``joint_limit``: one leg joint is pushed 5 mrad past its range;
* ``fast_rotation``: the base spins at about 4 rad/s.

The oracle is :mod:`derivatives.oracle`'s (centered ``mjd_transitionFD`` with the Newton solver
at tolerance 1e-12). A state is only usable if the contact set and the constraint states do not
change within the difference step; ``is_smooth`` checks that, and the state builders make sure
of it.
"""

from __future__ import annotations

import mujoco
import numpy as np

from derivatives.oracle import (  # noqa: F401  (the tests take the oracle from here)
    centered_fd,
    is_smooth,
    oracle_model,
    relative_error,
    settle_solver,
)

STATES = ("standing", "trotting", "sliding", "airborne", "joint_limit", "fast_rotation")
_COVERED = (int(mujoco.mjtGeom.mjGEOM_SPHERE), int(mujoco.mjtGeom.mjGEOM_CAPSULE),
            int(mujoco.mjtGeom.mjGEOM_BOX))
_ROUND = (int(mujoco.mjtGeom.mjGEOM_SPHERE), int(mujoco.mjtGeom.mjGEOM_CAPSULE))


def contacts_covered(m: mujoco.MjModel, d: mujoco.MjData) -> bool:
    """True if every active contact is a static plane against a sphere, capsule or box, a
    static height field against a sphere or capsule, a moving sphere against a static box, or
    a sphere or capsule against a sphere or capsule."""
    for i in range(d.ncon):
        c = d.contact[i]
        if c.efc_address < 0:
            continue
        g1, g2 = c.geom
        t1, t2 = m.geom_type[g1], m.geom_type[g2]
        static = m.body_weldid[m.geom_bodyid[g1]] == 0
        plane = t1 == mujoco.mjtGeom.mjGEOM_PLANE and static and t2 in _COVERED
        field = t1 == mujoco.mjtGeom.mjGEOM_HFIELD and static and t2 in _ROUND
        box = (t1 == mujoco.mjtGeom.mjGEOM_SPHERE and t2 == mujoco.mjtGeom.mjGEOM_BOX
               and not static and m.body_weldid[m.geom_bodyid[g2]] == 0)
        if not (plane or field or box or (t1 in _ROUND and t2 in _ROUND)):
            return False
    return True


def _floating(m: mujoco.MjModel) -> int:
    free = np.flatnonzero(m.jnt_type == mujoco.mjtJoint.mjJNT_FREE)
    if free.size == 0:
        raise ValueError("reference states need a floating base")
    return int(m.jnt_qposadr[free[0]])


def _press(m: mujoco.MjModel, d: mujoco.MjData, depth: float) -> None:
    """Move the base vertically so that its lowest geom penetrates the floor by ``depth``."""
    mujoco.mj_forward(m, d)
    floors = [g for g in range(m.ngeom) if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_PLANE
              and m.body_weldid[m.geom_bodyid[g]] == 0]
    gap = np.inf
    for floor in floors:
        for g in range(m.ngeom):
            if m.body_weldid[m.geom_bodyid[g]] == 0:
                continue
            if not (m.geom_contype[g] & m.geom_conaffinity[floor]
                    or m.geom_contype[floor] & m.geom_conaffinity[g]):
                continue
            gap = min(gap, mujoco.mj_geomDistance(m, d, floor, g, 10.0, None))
    d.qpos[_floating(m) + 2] -= gap + depth
    mujoco.mj_forward(m, d)


def reference_state(m: mujoco.MjModel, name: str, seed: int = 0,
                    depth: float = 0.003) -> mujoco.MjData:
    """One of :data:`STATES` for a floating-base model with a keyframe (see module doc)."""
    if name not in STATES:
        raise ValueError(f"unknown state {name!r}; choose from {', '.join(STATES)}")
    rng = np.random.default_rng(seed)
    d = mujoco.MjData(m)
    if m.nkey:
        mujoco.mj_resetDataKeyframe(m, d, 0)
    dof0 = int(m.jnt_dofadr[np.flatnonzero(m.jnt_type == mujoco.mjtJoint.mjJNT_FREE)[0]])
    legs = [j for j in range(m.njnt) if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE]
    if name == "joint_limit":
        _push_past_limit(m, d, legs, depth)
    _press(m, d, depth)
    if name == "airborne":
        _lift_feet(m, d, 1, depth)
    if name == "trotting":
        _lift_feet(m, d, 2 if len(_touching(m, d)) >= 4 else 1, depth)
    d.qvel[:] = 0.05 * rng.standard_normal(m.nv)
    if name == "trotting":
        d.qvel[dof0] += 0.5
    if name == "sliding":
        d.qvel[dof0 + 1] += 0.4
    if name == "fast_rotation":
        d.qvel[dof0 + 3 : dof0 + 6] += (2.0, -1.5, 3.0)
    _controls(m, d, rng)
    settle_solver(m, d)
    return d


def self_contact_state(m: mujoco.MjModel, seed: int = 0, floor: bool = True,
                       tries: int = 5000) -> mujoco.MjData:
    """A state of a floating-base model with self-collisions where two of its own geoms touch:
    the first keyframe with seeded random joint angles (within range), velocities and controls
    (0.02 inside their limits), the base pressed 3 mm into the floor (``floor``) or lifted
    clear of it; accepted when a contact
    between two moving geoms is 0.1 to 10 mm deep and the state is smooth (:func:`is_smooth`)."""
    rng = np.random.default_rng(seed)
    hinges = [j for j in range(m.njnt) if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE]
    base = _floating(m)
    for _ in range(tries):
        d = mujoco.MjData(m)
        if m.nkey:
            mujoco.mj_resetDataKeyframe(m, d, 0)
        for j in hinges:
            lo, hi = m.jnt_range[j] if m.jnt_limited[j] else (-np.pi, np.pi)
            a = m.jnt_qposadr[j]
            d.qpos[a] = np.clip(d.qpos[a] + 0.8 * rng.standard_normal(), lo + 0.01, hi - 0.01)
        if floor:
            _press(m, d, 0.003)
        else:
            d.qpos[base + 2] += 0.3
            mujoco.mj_forward(m, d)
        own = [i for i in range(d.ncon) if d.contact.efc_address[i] >= 0
               and m.body_weldid[m.geom_bodyid[d.contact.geom[i, 0]]] != 0]
        if not own or not all(-0.01 < d.contact.dist[i] < -1e-4 for i in own):
            continue
        d.qvel[:] = 0.3 * rng.standard_normal(m.nv)
        _controls(m, d, rng)
        # off the control limits, where mjd_transitionFD differences one-sidedly (an error of
        # order eps in B)
        limited = m.actuator_ctrllimited.astype(bool)
        lo, hi = m.actuator_ctrlrange[:, 0] + 0.02, m.actuator_ctrlrange[:, 1] - 0.02
        d.ctrl[limited] = np.clip(d.ctrl, lo, hi)[limited]
        settle_solver(m, d)
        if is_smooth(m, d):
            return d
    raise RuntimeError("no smooth self-contact state found")


def _push_past_limit(m: mujoco.MjModel, d: mujoco.MjData, legs: list[int],
                     depth: float) -> None:
    """Push the first limited leg joint 5 mrad past a limit that keeps every contact covered."""
    start = d.qpos.copy()
    for j in legs:
        if not m.jnt_limited[j]:
            continue
        for side in (1, 0):
            d.qpos[:] = start
            d.qpos[m.jnt_qposadr[j]] = m.jnt_range[j, side] + (0.005 if side else -0.005)
            _press(m, d, depth)
            if contacts_covered(m, d):
                return
    raise ValueError("no joint limit keeps the contacts covered")


def _touching(m: mujoco.MjModel, d: mujoco.MjData) -> dict[int, np.ndarray]:
    """Bodies in contact with the floor and the mean position of their contacts."""
    mujoco.mj_forward(m, d)
    points: dict[int, list] = {}
    for i in range(d.ncon):
        points.setdefault(int(m.geom_bodyid[d.contact[i].geom[1]]), []).append(d.contact[i].pos)
    return {b: np.mean(p, axis=0) for b, p in points.items()}


def _lift_feet(m: mujoco.MjModel, d: mujoco.MjData, count: int, depth: float) -> None:
    """Fold leg joints until ``count`` feet (bodies touching the floor) are in the air, the
    second one diagonally opposite the first; the others keep touching."""
    lifted: list[np.ndarray] = []
    for _ in range(count):
        touching = _touching(m, d)
        order = sorted(touching, key=lambda b: -min(
            [np.linalg.norm(touching[b][:2] - p[:2]) for p in lifted] or [0.0]))
        if not _lift(m, d, order[0], depth):
            raise ValueError(f"no joint lifts body {order[0]} alone")
        lifted.append(touching[order[0]])


def _lift(m: mujoco.MjModel, d: mujoco.MjData, body: int, depth: float) -> bool:
    """Turn one hinge that moves ``body`` so that it leaves the floor and the rest still touch."""
    before = set(_touching(m, d))
    chain = []
    b = body
    while b > 0:
        chain += [j for j in range(m.njnt) if m.jnt_bodyid[j] == b
                  and m.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE]
        b = m.body_parentid[b]
    for j in chain:
        for delta in (0.4, -0.4):
            probe = mujoco.MjData(m)
            probe.qpos[:] = d.qpos
            probe.qpos[m.jnt_qposadr[j]] += delta
            after = set(_touching(m, probe))
            if after == before - {body}:
                d.qpos[:] = probe.qpos
                _press(m, d, depth)
                return set(_touching(m, d)) == after
    return False


def _controls(m: mujoco.MjModel, d: mujoco.MjData, rng: np.random.Generator) -> None:
    """Position servos: the joint angle plus noise; other actuators: noise in their range."""
    for i in range(m.nu):
        lo, hi = m.actuator_ctrlrange[i] if m.actuator_ctrllimited[i] else (-1.0, 1.0)
        if m.actuator_biastype[i] == mujoco.mjtBias.mjBIAS_AFFINE:
            q = d.qpos[m.jnt_qposadr[m.actuator_trnid[i, 0]]]
            d.ctrl[i] = np.clip(q + 0.05 * rng.standard_normal(), lo, hi)
        else:
            d.ctrl[i] = lo + (hi - lo) * (0.5 + 0.1 * rng.standard_normal())
