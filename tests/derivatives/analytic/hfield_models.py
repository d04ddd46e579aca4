"""Height-field models and states for the analytic backend's tests and ``scripts/bench_hfield.py``.

A test terrain (gentle bumps, a slope and a step), a free sphere or capsule over it, the planning
models with their floor plane replaced by it, and states whose contacts come from a chosen kind
of prism feature (:data:`CATEGORIES`): a face, a step's vertical wall, a cell-border or
diagonal edge, a vertical edge (a step's corner) or a vertex.
"""

from __future__ import annotations

import analytic_verify as verify
import mujoco
import numpy as np
from analytic_oracles import bundles

import robots
from common.hfield_contacts import prune_contacts
from derivatives.analytic.hfield import EDGE, FACE, MATCHED, TOLERANCE, hfield_feature
from robots.collision import ground_contacts_only

_G = mujoco.mjtGeom
CATEGORIES = ("face", "wall", "border edge", "diagonal edge", "vertical edge", "vertex")
#: Cell size (m) and grid of the test terrain.
RESOLUTION = 0.05
ROWS = COLS = 13


def terrain(seed: int = 0) -> np.ndarray:
    """Heights (m), ROWS × COLS: bumps of ±1 cm, a 30 % slope over three columns and a 12 cm
    step along the last five columns (rising over one cell: 67°)."""
    rng = np.random.default_rng(seed)
    h = 0.01 * rng.uniform(-1.0, 1.0, (ROWS, COLS))
    h[:, 5:8] += 0.3 * RESOLUTION * np.arange(1, 4)
    h[:, 8:] += 0.12 + 0.3 * RESOLUTION * 3
    return h


def robot_terrain(seed: int = 0) -> np.ndarray:
    """Heights (m), 41 × 41 at RESOLUTION (2 m square) for the robots: bumps of ±4 mm, a 10 %
    slope over the middle rows and a 10 cm step (rising over one cell: 63°) along the last
    twelve columns."""
    rng = np.random.default_rng(seed)
    h = 0.004 * rng.uniform(-1.0, 1.0, (41, 41))
    h[14:27, :] += 0.1 * RESOLUTION * np.arange(13)[:, None]
    h[27:, :] += 0.1 * RESOLUTION * 13
    h[:, 29:] += 0.1
    return h


def add_field(spec: mujoco.MjSpec, heights: np.ndarray, resolution: float,
              centre: tuple[float, float] = (0.0, 0.0), like: mujoco.MjsGeom | None = None,
              name: str = "terrain") -> mujoco.MjsGeom:
    """A height-field geom in the world of ``spec`` whose sample (r, c) is at
    centre + ((c − (ncol − 1)/2) res, (r − (nrow − 1)/2) res, heights[r, c]); contact
    parameters copied from ``like`` (the plane it replaces) if given. MuJoCo normalises the
    samples to [0, 1], so the geom sits at the lowest height with z size = the height range."""
    nrow, ncol = heights.shape
    lo, hi = float(heights.min()), float(heights.max())
    span = max(hi - lo, 1e-6)
    spec.add_hfield(name=name, nrow=nrow, ncol=ncol,
                    size=[0.5 * (ncol - 1) * resolution, 0.5 * (nrow - 1) * resolution, span,
                          0.1], userdata=((heights - lo) / span).ravel().tolist())
    geom = spec.worldbody.add_geom(type=_G.mjGEOM_HFIELD, hfieldname=name,
                                   pos=[centre[0], centre[1], lo])
    if like is not None:
        for attr in ("contype", "conaffinity", "condim", "friction", "solref", "solimp",
                     "solmix", "margin", "gap", "priority"):
            setattr(geom, attr, getattr(like, attr))
    return geom


def ball_model(shape: str, cone: str = "elliptic", condim: int = 3,
               pruned: bool = False) -> mujoco.MjModel:
    """A free sphere (radius 2 cm) or capsule (radius 1.5 cm, half length 4 cm) over
    :func:`terrain`, with the oracle's solver settings; the sphere's contacts pruned
    (:mod:`common.hfield_contacts`) if ``pruned``."""
    spec = mujoco.MjSpec()
    spec.option.cone = getattr(mujoco.mjtCone, f"mjCONE_{cone.upper()}")
    spec.option.timestep = 0.005
    geom = add_field(spec, terrain(), RESOLUTION)
    geom.condim = condim
    geom.friction = [0.8, 0.02, 0.01]
    body = spec.worldbody.add_body(pos=[0, 0, 0.5])
    body.add_freejoint()
    if shape == "sphere":
        body.add_geom(type=_G.mjGEOM_SPHERE, size=[0.02, 0, 0], mass=0.3)
    else:
        body.add_geom(type=_G.mjGEOM_CAPSULE, size=[0.015, 0.04, 0], mass=0.3)
    model = spec.compile()
    prune_contacts(model, pruned)
    return verify.oracle_model(model)


def robot_model(robot: str, heights: np.ndarray | None = None, resolution: float = RESOLUTION,
                task=None, timestep: float | None = None, oracle: bool = True,
                pruned: bool = False) -> mujoco.MjModel:
    """The robot's planning model with the floor plane replaced by a height field
    (:func:`robot_terrain` by default): with ``task``'s sensors and ``timestep`` if given (as
    ``task.planning_model`` builds it), with the oracle's solver settings if ``oracle``, the
    feet's contacts on the field pruned (:mod:`common.hfield_contacts`, as
    ``task.planning_model`` does) if ``pruned``."""
    spec = mujoco.MjSpec.from_file(str(robots.planning_model_path(robot)))
    if timestep is not None:
        spec.option.timestep = timestep
    if task is not None:
        task.add_sensors(spec)
    floor = spec.geom("floor")
    add_field(spec, robot_terrain() if heights is None else heights, resolution, like=floor)
    spec.delete(floor)
    model = spec.compile()
    ground_contacts_only(model)
    prune_contacts(model, pruned)
    return verify.oracle_model(model) if oracle else model


def category(m: mujoco.MjModel, d: mujoco.MjData, c: int) -> str | None:
    """The kind of prism feature contact c (a height-field contact) comes from ("inside" for
    a sphere's centre inside the prism), or None if :func:`hfield_feature` does not reproduce
    it."""
    model, data = bundles(m, d)
    g1, g2 = d.contact.geom[c]
    radius = m.geom_size[g2, 0]
    status, kind, _, half, _, _, _ = hfield_feature(model, data, c, d.contact.dist[c], radius,
                                                    TOLERANCE, np.sqrt(m.opt.ccd_tolerance),
                                                    np.empty((6, 3)))
    if status != MATCHED:
        return None
    mat = d.geom_xmat[g1].reshape(3, 3)
    if d.contact.dist[c] < -radius:
        return "inside"
    if kind == FACE:
        normal = mat.T @ d.contact.frame[c, :3]
        return "wall" if abs(normal[2]) < 1e-9 else "face"
    if kind == EDGE:
        u = mat.T @ np.asarray(half)
        if abs(u[0]) < 1e-12 and abs(u[1]) < 1e-12:
            return "vertical edge"
        return "border edge" if min(abs(u[0]), abs(u[1])) < 1e-12 else "diagonal edge"
    return "vertex"


def categories(m: mujoco.MjModel, d: mujoco.MjData) -> set[str | None]:
    """The categories of d's height-field contacts that have constraint rows."""
    return {category(m, d, c) for c in range(d.ncon)
            if m.geom_type[d.contact.geom[c, 0]] == _G.mjGEOM_HFIELD
            and d.contact.efc_address[c] >= 0}


def lower_onto(m: mujoco.MjModel, d: mujoco.MjData, depth: float) -> None:
    """Move the free base down (from where it is, or higher if it is already too deep) in 1 cm
    steps until its deepest contact is deeper than ``depth``, then bisect to that depth."""

    def too_deep(z: float) -> bool:
        d.qpos[2] = z
        mujoco.mj_forward(m, d)
        return min((d.contact.dist[i] for i in range(d.ncon)), default=np.inf) < -depth

    hi = d.qpos[2]
    while too_deep(hi):
        hi += 0.05
    lo = hi - 0.01
    for _ in range(300):
        if too_deep(lo):
            break
        hi, lo = lo, lo - 0.01
    else:
        raise RuntimeError("the base never reached the ground")
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if too_deep(mid):
            lo = mid
        else:
            hi = mid
    too_deep(hi)


def _clean(m: mujoco.MjModel, d: mujoco.MjData) -> bool:
    """Every contact well inside or outside its margin (a stable contact set, MuJoCo's normal
    accurate: it is a difference of points |dist| apart) and reproduced."""
    for i in range(d.ncon):
        dist = d.contact.dist[i]
        if abs(dist) < 2e-4 or abs(dist - d.contact.includemargin[i]) < 2e-4:
            return False
    return None not in categories(m, d)


def ball_state(m: mujoco.MjModel, wanted: str, seed: int, tries: int = 4000) -> mujoco.MjData:
    """A seeded state of :func:`ball_model` with a contact of category ``wanted``: a random
    place and orientation, lowered until 0.5 to 5 mm deep, random velocity; smooth for the
    oracle (:func:`analytic_verify.is_smooth`)."""
    rng = np.random.default_rng(seed)
    d = mujoco.MjData(m)
    span = 0.5 * (COLS - 1) * RESOLUTION - 0.03
    for _ in range(tries):
        mujoco.mj_resetData(m, d)
        # the walls and vertical edges are on the step: look there more often
        x = rng.uniform(0.05, 0.13) if wanted in ("wall", "vertical edge") else rng.uniform(
            -span, span)
        d.qpos[:3] = [x, rng.uniform(-span, span), 0.5]
        quat = rng.standard_normal(4)
        d.qpos[3:7] = quat / np.linalg.norm(quat)
        lower_onto(m, d, rng.uniform(5e-4, 5e-3))
        if wanted not in categories(m, d) or not _clean(m, d):
            continue
        d.qvel[:] = 0.2 * rng.standard_normal(m.nv)
        verify.settle_solver(m, d)
        if verify.is_smooth(m, d):
            return d
    raise RuntimeError(f"no smooth state with a {wanted} contact")


def _foot_depth(m: mujoco.MjModel, d: mujoco.MjData, geom: int) -> float:
    """Depth of the deepest contact of ``geom`` (−inf if it touches nothing)."""
    mujoco.mj_forward(m, d)
    return max((-d.contact.dist[i] for i in range(d.ncon) if d.contact.geom[i, 1] == geom),
               default=-np.inf)


def _plant(m: mujoco.MjModel, d: mujoco.MjData, geom: int, depth: float) -> None:
    """Turn the joint of foot ``geom``'s body (the knee) until the foot is ``depth`` deep,
    if it can within 1 rad and the joint's range (bisection)."""
    j = m.body_jntadr[m.geom_bodyid[geom]]
    a = m.jnt_qposadr[j]
    lo_q, hi_q = m.jnt_range[j] if m.jnt_limited[j] else (-np.inf, np.inf)
    q0 = d.qpos[a]
    site_z = []
    for dq in (-0.05, 0.05):  # which way lowers the foot
        d.qpos[a] = q0 + dq
        mujoco.mj_kinematics(m, d)
        site_z.append(d.geom_xpos[geom, 2])
    down = -1.0 if site_z[0] < site_z[1] else 1.0
    near, far = q0, float(np.clip(q0 + 1.0 * down, lo_q + 0.02, hi_q - 0.02))
    d.qpos[a] = far
    if _foot_depth(m, d, geom) < depth:
        d.qpos[a] = q0
        mujoco.mj_forward(m, d)
        return
    for _ in range(50):
        d.qpos[a] = 0.5 * (near + far)
        if _foot_depth(m, d, geom) < depth:
            near = d.qpos[a]
        else:
            far = d.qpos[a]
    d.qpos[a] = far
    mujoco.mj_forward(m, d)


def robot_state(m: mujoco.MjModel, feet: tuple[str, ...], seed: int, wanted: str | None = None,
                min_feet: int = 3, tries: int = 2000) -> mujoco.MjData:
    """A seeded state of a :func:`robot_model`: the standing keyframe at a random place and
    heading on the terrain, lowered until the deepest contact is 1 to 4 mm deep, then each
    foot of ``feet`` planted 1 to 4 mm deep by its knee (where it reaches), random
    velocities and controls (off their limits); with a contact of category ``wanted`` if given;
    smooth for the oracle."""
    rng = np.random.default_rng(seed)
    g = int(np.flatnonzero(m.geom_type == _G.mjGEOM_HFIELD)[0])
    span = m.hfield_size[m.geom_dataid[g], :2] - 0.3
    foot_geoms = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, f) for f in feet]
    for _ in range(tries):
        d = mujoco.MjData(m)
        mujoco.mj_resetDataKeyframe(m, d, 0)
        yaw = rng.uniform(-np.pi, np.pi)
        d.qpos[:2] = m.geom_pos[g, :2] + rng.uniform(-span, span)
        d.qpos[3:7] = [np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]
        lower_onto(m, d, rng.uniform(1e-3, 4e-3))
        for g in foot_geoms:
            _plant(m, d, g, rng.uniform(1e-3, 4e-3))
        found = categories(m, d)
        touching = {int(d.contact.geom[i, 1]) for i in range(d.ncon)}
        if ((wanted is not None and wanted not in found) or len(touching & set(foot_geoms))
                < min_feet or not _clean(m, d)):
            continue
        d.qvel[:] = 0.1 * rng.standard_normal(m.nv)
        limited = m.actuator_ctrllimited.astype(bool)
        lo, hi = m.actuator_ctrlrange[:, 0] + 0.02, m.actuator_ctrlrange[:, 1] - 0.02
        for i in range(m.nu):
            q = d.qpos[m.jnt_qposadr[m.actuator_trnid[i, 0]]]
            d.ctrl[i] = q + 0.05 * rng.standard_normal()
        d.ctrl[limited] = np.clip(d.ctrl, lo, hi)[limited]
        verify.settle_solver(m, d)
        if verify.is_smooth(m, d):
            return d
    raise RuntimeError(f"no smooth robot state with a {wanted} contact")
