"""The ground under a blind robot: a plane fitted to where its feet stand.

A walking robot without a map knows the ground only where its feet touch it. This module holds
that knowledge as a plane

    z = g(x, y) = a₀ + a₁ x + a₂ y          (world frame, z up; a₁, a₂ the slopes along x, y)

fitted to footholds: per foot, the ground point under the foot (its position minus its resting
height ρ) where it last stood. Every consumer of "the ground" reads the same plane: the
planning model's floor (:func:`add_ground_body`, :func:`pose`), the tasks' height-dependent
targets (:mod:`mpc.tasks.legged`), the fall check (:meth:`mpc.tasks.task_base.Task.fall_reason`)
and the estimator (:mod:`hardware.estimation.kalman`).

**The fit** (the MIT Cheetah 3's blind-terrain estimate, least squares with a prior on the
slope): with footholds (xᵢ, yᵢ, zᵢ), centred on their mean (x̄, ȳ, z̄),

    minimise  Σᵢ (zᵢ − z̄ − a₁ (xᵢ − x̄) − a₂ (yᵢ − ȳ))² + λ (a₁² + a₂²)

so (a₁, a₂) = (XᵀX + λI)⁻¹ Xᵀz with X the centred (x, y) columns, and a₀ = z̄ − a₁ x̄ − a₂ ȳ.
λ (m²) is the weight of "level unless the feet say otherwise": against a quadruped's footholds
(Σ(xᵢ − x̄)² ≈ 0.15 m²) it shrinks a slope by about λ/0.15; where the feet span no distance (a
biped's two feet side by side say nothing about pitch) it holds the plane level. The slope is
then limited to ``max_slope`` (its gradient's norm): a foothold on a loose slab must not tilt
the robot's world past what it can walk on. Each foot keeps its last ``memory`` footholds (the
current one is updated while the foot stands, a new one begins at each touchdown), so a biped's
alternating steps also span the walking direction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mujoco
import numpy as np

#: Name of the planning model's ground body (a static body holding the floor plane).
GROUND_BODY = "ground"
#: Names of the per-foot floors' bodies: ``foot_floor0`` ... (see :func:`add_ground_body`).
FOOT_FLOOR = "foot_floor"
#: Collision bit of foot i's floor: FOOT_BIT << i (below the map's bit 29 and the robot's 30).
FOOT_BIT = 1 << 20


@dataclass(frozen=True)
class GroundPlane:
    """z = a₀ + a₁ x + a₂ y. The default is the level floor at z = 0."""

    a0: float = 0.0
    a1: float = 0.0
    a2: float = 0.0

    def height(self, x, y):
        """g(x, y) (scalars or arrays)."""
        return self.a0 + self.a1 * np.asarray(x) + self.a2 * np.asarray(y)

    @property
    def slope(self) -> np.ndarray:
        """(a₁, a₂): the gradient of g."""
        return np.array([self.a1, self.a2])

    @property
    def normal(self) -> np.ndarray:
        """Unit normal pointing up: (−a₁, −a₂, 1)/‖·‖."""
        n = np.array([-self.a1, -self.a2, 1.0])
        return n / np.linalg.norm(n)

    @property
    def tilt(self) -> float:
        """Angle (rad) between the plane and the horizontal."""
        return math.atan(math.hypot(self.a1, self.a2))

    def above(self, point) -> float:
        """Height of ``point`` (x, y, z) above the plane, measured vertically."""
        return float(point[2] - self.height(point[0], point[1]))


def up_axis(plane: GroundPlane, follow: float) -> np.ndarray:
    """The body's target z-axis: the vertical turned toward the plane's normal by the fraction
    ``follow`` of the angle between them (0: upright, 1: square to the ground); in the plane
    through both, so a pure pitch slope gives a pure pitch target."""
    n = plane.normal
    angle = math.acos(min(1.0, n[2]))
    if angle < 1e-12:
        return np.array([0.0, 0.0, 1.0])
    horizontal = n[:2] / math.sin(angle)
    a = follow * angle
    return np.array([horizontal[0] * math.sin(a), horizontal[1] * math.sin(a), math.cos(a)])


class GroundFit:
    """The plane from the footholds of ``nfeet`` feet (see the module docstring)."""

    def __init__(self, nfeet: int, slope_prior: float = 0.01, max_slope: float = 0.7,
                 memory: int = 2):
        """``slope_prior`` λ (m²), ``max_slope`` (the gradient's largest norm, tan of the
        steepest tilt), ``memory``: footholds kept per foot."""
        if nfeet < 1 or memory < 1:
            raise ValueError("a ground fit needs at least one foot and one foothold each")
        self.nfeet, self.memory = int(nfeet), int(memory)
        self.slope_prior, self.max_slope = float(slope_prior), float(max_slope)
        #: Footholds (nfeet, memory, 3), newest first; NaN where none yet.
        self.footholds = np.full((self.nfeet, self.memory, 3), np.nan)
        self._standing = np.zeros(self.nfeet, bool)
        self.plane = GroundPlane()

    @property
    def standing(self) -> np.ndarray:
        """Which feet stood at the last :meth:`observe` (nfeet, a copy)."""
        return self._standing.copy()

    def reset(self, points: np.ndarray) -> GroundPlane:
        """Forget everything; the ground is where ``points`` (nfeet, 3) stand now."""
        self.footholds[:] = np.nan
        self._standing[:] = False
        return self.observe(points, np.ones(self.nfeet, bool))

    def keep_newest(self) -> GroundPlane:
        """Forget all but each foot's newest foothold; returns the refitted plane (a robot
        that has just climbed a step stands on its top with every foot, its older footholds
        below it)."""
        self.footholds[:, 1:] = np.nan
        self.plane = self.fit()
        return self.plane

    def observe(self, points: np.ndarray, stance: np.ndarray) -> GroundPlane:
        """Ground points (nfeet, 3) under the feet and which feet stand now: a standing foot's
        current foothold becomes its point (a new one if it has just touched down); returns
        the refitted plane."""
        points = np.asarray(points, dtype=float)
        stance = np.asarray(stance, dtype=bool)
        for i in np.flatnonzero(stance):
            if not self._standing[i]:  # touchdown: the older footholds move down the memory
                self.footholds[i, 1:] = self.footholds[i, :-1]
            self.footholds[i, 0] = points[i]
        self._standing = stance.copy()
        self.plane = self.fit()
        return self.plane

    def fit(self) -> GroundPlane:
        """The regularized least-squares plane through the footholds (the last plane if there
        are none)."""
        p = self.footholds.reshape(-1, 3)
        p = p[np.isfinite(p[:, 2])]
        if len(p) == 0:
            return self.plane
        return fit_plane(p, self.slope_prior, self.max_slope)


def fit_plane(points: np.ndarray, slope_prior: float, max_slope: float = np.inf) -> GroundPlane:
    """The plane of the module docstring through ``points`` (k, 3), k ≥ 1."""
    centre = points.mean(axis=0)
    X = points[:, :2] - centre[:2]
    z = points[:, 2] - centre[2]
    slope = np.linalg.solve(X.T @ X + slope_prior * np.eye(2), X.T @ z)
    norm = float(np.hypot(*slope))
    if norm > max_slope:
        slope *= max_slope / norm
    a0 = centre[2] - slope @ centre[:2]
    return GroundPlane(float(a0), float(slope[0]), float(slope[1]))


# --- the planning model's floor ----------------------------------------------------------------


def add_ground_body(spec: mujoco.MjSpec, foot_floors: int = 0) -> None:
    """Move the world's floor plane (the plane geom of the world body) onto a static body
    :data:`GROUND_BODY` of its own, so that :func:`pose` can move it in the compiled model: a
    geom of the world body keeps the frame it was compiled with, a body without joints is
    placed from ``body_pos``/``body_quat`` at every ``mj_kinematics``. Its geoms stay static
    (welded to the world: no degree of freedom moves them), which is what the analytic
    derivatives' plane contacts assume; that the plane may be tilted or raised they do not
    mind (the contact frame carries its normal). A model without a floor plane is left alone.

    With ``foot_floors`` n > 0, n more static bodies ``foot_floor0`` ... hold a copy of the
    floor plane each, colliding with nothing until :func:`split_foot_contacts` gives foot i
    its own floor (:func:`pose` places them as it places the floor)."""
    floors = [g for g in spec.worldbody.geoms if g.type == mujoco.mjtGeom.mjGEOM_PLANE]
    if not floors:
        return
    floor = floors[0]
    name = floor.name
    attrs = _plane_attributes(floor)
    body = spec.worldbody.add_body(name=GROUND_BODY, pos=list(floor.pos), quat=list(floor.quat))
    spec.delete(floor)
    geom = body.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_PLANE)
    for attr, value in attrs.items():
        setattr(geom, attr, value)
    add_foot_floors(spec, geom, foot_floors)


def add_foot_floors(spec: mujoco.MjSpec, floor, n: int) -> None:
    """n static bodies ``foot_floor0`` ... with a copy of the plane geom ``floor`` each,
    colliding with nothing until :func:`split_foot_contacts` gives foot i its own floor
    (:func:`pose` places them)."""
    attrs = _plane_attributes(floor)
    for i in range(n):
        body = spec.worldbody.add_body(name=f"{FOOT_FLOOR}{i}")
        geom = body.add_geom(name=f"{FOOT_FLOOR}{i}", type=mujoco.mjtGeom.mjGEOM_PLANE)
        for attr, value in attrs.items():
            setattr(geom, attr, value)
        geom.contype = geom.conaffinity = 0
        geom.rgba = [0, 0, 0, 0]


def _plane_attributes(floor) -> dict:
    """What a copy of the plane geom ``floor`` takes from it."""
    return {a: getattr(floor, a) for a in (
        "size", "material", "rgba", "friction", "solref", "solimp", "solmix", "priority",
        "condim", "margin", "gap", "contype", "conaffinity", "group")}


def foot_floor_bodies(model: mujoco.MjModel) -> list[int]:
    """Ids of the model's per-foot floor bodies, in foot order (none without them)."""
    out: list[int] = []
    while (b := mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY,
                                  f"{FOOT_FLOOR}{len(out)}")) >= 0:
        out.append(b)
    return out


def foot_geoms(model: mujoco.MjModel, site: int) -> list[int]:
    """The foot's contact geoms: the colliding spheres of the foot site's body (a quadruped's
    foot sphere; a humanoid foot's heel and toe). The one rule for what a foot touches the
    ground with: its own floor (:func:`split_foot_contacts`) and a terrain map
    (:meth:`mpc.tasks.map_ground.MapGround.feet_only`)."""
    body = model.site_bodyid[site]
    return [int(g) for g in np.flatnonzero(model.geom_bodyid == body)
            if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE
            and (model.geom_contype[g] or model.geom_conaffinity[g])]


def split_foot_contacts(model: mujoco.MjModel, sites: list[int]) -> bool:
    """Give each foot (its contact geoms, :func:`foot_geoms`) its own floor, ``foot_floor<i>``,
    and no contact with the common floor: foot i's geoms take the affinity FOOT_BIT << i
    only, its floor that contact type. The rest of the robot keeps the common floor. False
    (the model unchanged) without per-foot floors or without a sphere on every foot."""
    floors = foot_floor_bodies(model)
    feet = [foot_geoms(model, s) for s in sites]
    if len(floors) != len(sites) or not all(feet):
        return False
    for i, (body, geoms) in enumerate(zip(floors, feet, strict=True)):
        plane = int(model.body_geomadr[body])
        model.geom_contype[plane] = FOOT_BIT << i
        model.geom_conaffinity[plane] = 0
        model.geom_conaffinity[geoms] = FOOT_BIT << i
    # the broad phase filters bodies by the union of their geoms' bits, taken at compile time
    for body in {*floors, *(int(model.geom_bodyid[g]) for geoms in feet for g in geoms)}:
        geoms = np.flatnonzero(model.geom_bodyid == body)
        model.body_contype[body] = np.bitwise_or.reduce(model.geom_contype[geoms])
        model.body_conaffinity[body] = np.bitwise_or.reduce(model.geom_conaffinity[geoms])
    return True


def ground_body(model: mujoco.MjModel) -> int:
    """Id of the model's ground body, or −1 if it has none."""
    return mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, GROUND_BODY)


def pose(model: mujoco.MjModel, body: int, plane: GroundPlane, at=(0.0, 0.0)) -> None:
    """Place the ground body ``body`` of ``model`` on ``plane``: its origin on the plane above
    ``at`` (x, y; where the plane is drawn from: a plane geom is infinite for contacts), its z
    axis along the normal, turned from the vertical about the horizontal axis n × e_z. Changes
    the model; nothing may be stepping it meanwhile."""
    x, y = float(at[0]), float(at[1])
    model.body_pos[body] = (x, y, float(plane.height(x, y)))
    n = plane.normal
    angle = math.acos(min(1.0, float(n[2])))
    quat = np.array([1.0, 0.0, 0.0, 0.0])
    if angle > 1e-12:
        axis = np.array([-n[1], n[0], 0.0])  # e_z × n
        mujoco.mju_axisAngle2Quat(quat, axis / np.linalg.norm(axis), angle)
    model.body_quat[body] = quat
