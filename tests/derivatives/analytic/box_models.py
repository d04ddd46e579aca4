"""Static boxes touched by spheres, for the analytic backend's tests and
``scripts/bench_sphere_box.py``.

A free sphere over a box (world-aligned, or turned and moved), the Go2's planning model with a
static box that only its foot spheres touch (as the riser's box of ``task.ground: felt``), and
states whose sphere–box contact comes from a chosen region (:data:`CATEGORIES`): over the top
face, against a side face, over an edge, over a corner, or the centre inside the box.
"""

from __future__ import annotations

import analytic_verify as verify
import mujoco
import numpy as np

import robots
from derivatives.analytic.box import sphere_box_feature
from derivatives.analytic.hfield import EDGE, FACE
from robots.collision import ground_contacts_only

_G = mujoco.mjtGeom
CATEGORIES = ("top face", "side face", "edge", "vertex", "inside")
#: Half sizes (m) of the free sphere's box and radius (m) of the sphere.
BALL_BOX = (0.1, 0.15, 0.05)
RADIUS = 0.02
#: The turned box's pose (position, quaternion).
TURNED = ((0.1, -0.2, 0.05), (0.95, 0.1, -0.2, 0.2))
#: Half sizes (m) of the robot's box and the collision bit only it and the feet share.
ROBOT_BOX = (0.08, 0.12, 0.06)
BOX_BIT = 1 << 28
#: Where the robot's box waits while the robot is placed.
PARKED = (50.0, 0.0, -1.0)


def ball_model(cone: str = "elliptic", condim: int = 3, turned: bool = False) -> mujoco.MjModel:
    """A free sphere (radius :data:`RADIUS`) over a static box (:data:`BALL_BOX`), world-aligned
    at the origin or at :data:`TURNED`, with the oracle's solver settings."""
    spec = mujoco.MjSpec()
    spec.option.cone = getattr(mujoco.mjtCone, f"mjCONE_{cone.upper()}")
    spec.option.timestep = 0.005
    pos, quat = TURNED if turned else ((0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0))
    spec.worldbody.add_geom(name="box", type=_G.mjGEOM_BOX, size=list(BALL_BOX), pos=list(pos),
                            quat=list(quat), condim=condim, friction=[0.8, 0.02, 0.01])
    body = spec.worldbody.add_body(pos=[0, 0, 0.5])
    body.add_freejoint()
    body.add_geom(type=_G.mjGEOM_SPHERE, size=[RADIUS, 0, 0], mass=0.3)
    return verify.oracle_model(spec.compile())


def robot_model(robot: str = "go2", task=None, timestep: float | None = None,
                oracle: bool = True) -> mujoco.MjModel:
    """The robot's planning model (floor plane kept) with a static box of half sizes
    :data:`ROBOT_BOX` on a body of its own, parked out of reach, with the floor's contact
    parameters; only the foot spheres touch it (the robot's other geoms the floor only). With
    ``task``'s sensors and ``timestep`` if given, with the oracle's solver settings if
    ``oracle``."""
    spec = mujoco.MjSpec.from_file(str(robots.planning_model_path(robot)))
    if timestep is not None:
        spec.option.timestep = timestep
    if task is not None:
        task.add_sensors(spec)
    floor = next(g for g in spec.worldbody.geoms if g.type == _G.mjGEOM_PLANE)
    box = spec.worldbody.add_body(name="box_body", pos=list(PARKED)).add_geom(
        name="box", type=_G.mjGEOM_BOX, size=list(ROBOT_BOX))
    for attr in ("condim", "friction", "solref", "solimp", "solmix", "margin", "gap",
                 "priority"):
        setattr(box, attr, getattr(floor, attr))
    model = spec.compile()
    ground_contacts_only(model)
    g = model.geom("box").id
    model.geom_contype[g], model.geom_conaffinity[g] = BOX_BIT, 0
    for name in robots.info(robot).feet:
        model.geom_conaffinity[model.geom(name).id] |= BOX_BIT
    return verify.oracle_model(model) if oracle else model


def category(m: mujoco.MjModel, d: mujoco.MjData, c: int) -> str | None:
    """The region of sphere–box contact c (None for another pair)."""
    g1, g2 = d.contact.geom[c]
    if m.geom_type[g1] != _G.mjGEOM_SPHERE or m.geom_type[g2] != _G.mjGEOM_BOX:
        return None
    kind = sphere_box_feature(d.geom_xpos, d.geom_xmat, m.geom_size[g2], g1, g2)[0]
    if kind == FACE:
        if d.contact.dist[c] < -m.geom_size[g1, 0]:
            return "inside"
        local = d.geom_xmat[g2].reshape(3, 3).T @ d.contact.frame[c, :3]
        return "top face" if abs(local[2]) > 0.5 else "side face"
    return "edge" if kind == EDGE else "vertex"


def local_centre(size: np.ndarray, wanted: str, depth: float,
                 rng: np.random.Generator) -> np.ndarray:
    """A sphere centre in the box's frame whose contact (radius :data:`RADIUS`) of region
    ``wanted`` is ``depth`` deep (``inside``: the centre ``depth`` below the top face)."""
    s = np.asarray(size, dtype=float)
    x = rng.uniform(-0.8, 0.8, 3) * s
    reach = RADIUS - depth
    if wanted == "top face":
        x[2] = s[2] + reach
    elif wanted == "side face":
        axis = rng.integers(2)
        x[axis] = rng.choice((-1.0, 1.0)) * (s[axis] + reach)
    elif wanted == "edge":
        free = rng.integers(3)
        a, b = [i for i in range(3) if i != free]
        angle = rng.uniform(0.15, np.pi / 2 - 0.15)
        x[a] = rng.choice((-1.0, 1.0)) * (s[a] + reach * np.cos(angle))
        x[b] = rng.choice((-1.0, 1.0)) * (s[b] + reach * np.sin(angle))
    elif wanted == "vertex":
        u = rng.uniform(0.3, 1.0, 3)
        x = rng.choice((-1.0, 1.0), 3) * (s + reach * u / np.linalg.norm(u))
    else:  # inside, nearest the top face
        x[:2] = rng.uniform(-0.5, 0.5, 2) * s[:2]
        x[2] = s[2] - depth
    return x


def _clean(m: mujoco.MjModel, d: mujoco.MjData) -> bool:
    """Every contact well inside or outside its margin (a stable contact set)."""
    for i in range(d.ncon):
        dist = d.contact.dist[i]
        if abs(dist) < 2e-4 or abs(dist - d.contact.includemargin[i]) < 2e-4:
            return False
    return True


def ball_state(m: mujoco.MjModel, wanted: str, seed: int, tries: int = 200) -> mujoco.MjData:
    """A seeded state of :func:`ball_model` with one contact of region ``wanted``, 0.5 to 5 mm
    deep (``inside``: the centre 3 to 10 mm inside), random orientation and velocity; smooth
    for the oracle."""
    rng = np.random.default_rng(seed)
    d = mujoco.MjData(m)
    box = m.geom("box").id
    for _ in range(tries):
        mujoco.mj_resetData(m, d)
        mujoco.mj_kinematics(m, d)
        depth = rng.uniform(3e-3, 1e-2) if wanted == "inside" else rng.uniform(5e-4, 5e-3)
        x = local_centre(m.geom_size[box], wanted, depth, rng)
        d.qpos[:3] = d.geom_xpos[box] + d.geom_xmat[box].reshape(3, 3) @ x
        quat = rng.standard_normal(4)
        d.qpos[3:7] = quat / np.linalg.norm(quat)
        d.qvel[:] = 0.2 * rng.standard_normal(m.nv)
        mujoco.mj_forward(m, d)
        if d.ncon != 1 or category(m, d, 0) != wanted or not _clean(m, d):
            continue
        verify.settle_solver(m, d)
        if verify.is_smooth(m, d):
            return d
    raise RuntimeError(f"no smooth state with a {wanted} contact")


def _lift(m: mujoco.MjModel, d: mujoco.MjData, foot: int, height: float) -> bool:
    """Turn the joints of ``foot``'s leg (from the knee up) until it is ``height`` above the
    floor, the other contacts kept; False if no single joint does."""
    start = d.qpos.copy()
    b = m.geom_bodyid[foot]
    while (b > 0 and m.body_jntnum[b] == 1
           and m.jnt_type[m.body_jntadr[b]] == mujoco.mjtJoint.mjJNT_HINGE):
        a = m.jnt_qposadr[m.body_jntadr[b]]
        for delta in np.linspace(-0.8, 0.8, 33):
            d.qpos[:] = start
            d.qpos[a] += delta
            mujoco.mj_forward(m, d)
            low = d.geom_xpos[foot, 2] - m.geom_size[foot, 0]
            if height <= low <= height + 0.02 and all(
                    d.contact.geom[i, 1] != foot for i in range(d.ncon)):
                return True
        b = m.body_parentid[b]
    d.qpos[:] = start
    return False


def robot_state(m: mujoco.MjModel, wanted: str, seed: int, robot: str = "go2",
                turned: bool = False, tries: int = 200) -> mujoco.MjData:
    """A seeded state of :func:`robot_model`: the standing keyframe at a random heading, 1 to
    4 mm deep in the floor, one foot lifted 3 to 5 cm and the box moved (world-aligned, or
    turned about z if ``turned``) so that that foot's contact with it is of region ``wanted``
    and 1 to 4 mm deep; random velocities and controls (off their limits); smooth for the
    oracle. The box is moved in ``m`` itself and stays there: use the state before making
    another."""
    rng = np.random.default_rng(seed)
    feet = [m.geom(f).id for f in robots.info(robot).feet]
    box = m.geom("box").id
    body = m.geom_bodyid[box]
    for _ in range(tries):
        d = mujoco.MjData(m)
        mujoco.mj_resetDataKeyframe(m, d, 0)
        yaw = rng.uniform(-np.pi, np.pi)
        d.qpos[3:7] = [np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]
        m.body_pos[body] = PARKED
        _lower(m, d, rng.uniform(1e-3, 4e-3))
        foot = feet[rng.integers(len(feet))]
        if not _lift(m, d, foot, rng.uniform(0.03, 0.05)):
            continue
        turn = rng.uniform(-0.6, 0.6) if turned else 0.0
        rot = np.array([[np.cos(turn), -np.sin(turn), 0.0], [np.sin(turn), np.cos(turn), 0.0],
                        [0.0, 0.0, 1.0]])
        m.body_quat[body] = [np.cos(turn / 2), 0.0, 0.0, np.sin(turn / 2)]
        x = local_centre(m.geom_size[box], wanted, rng.uniform(1e-3, 4e-3), rng)
        m.body_pos[body] = d.geom_xpos[foot] - rot @ x
        mujoco.mj_forward(m, d)
        boxed = [i for i in range(d.ncon) if d.contact.geom[i, 1] == box]
        if (len(boxed) != 1 or category(m, d, boxed[0]) != wanted or not _clean(m, d)
                or not verify.contacts_covered(m, d)):
            continue
        d.qvel[:] = 0.1 * rng.standard_normal(m.nv)
        lo, hi = m.actuator_ctrlrange[:, 0] + 0.02, m.actuator_ctrlrange[:, 1] - 0.02
        for i in range(m.nu):
            q = d.qpos[m.jnt_qposadr[m.actuator_trnid[i, 0]]]
            d.ctrl[i] = np.clip(q + 0.05 * rng.standard_normal(), lo[i], hi[i])
        verify.settle_solver(m, d)
        if verify.is_smooth(m, d):
            return d
    raise RuntimeError(f"no smooth robot state with a {wanted} contact")


def _lower(m: mujoco.MjModel, d: mujoco.MjData, depth: float) -> None:
    """Lower the free base until its deepest contact is ``depth`` deep (bisection)."""
    hi, lo = 0.6, 0.0

    def deepest(z: float) -> float:
        d.qpos[2] = z
        mujoco.mj_forward(m, d)
        return -min((d.contact.dist[i] for i in range(d.ncon)), default=np.inf)

    for _ in range(50):
        mid = 0.5 * (lo + hi)
        if deepest(mid) > depth:
            lo = mid
        else:
            hi = mid
    deepest(hi)
