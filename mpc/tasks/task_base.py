"""The task interface: a cost defined on the planning model's sensors.

A task adds the sensors it needs to the robot's model and defines a residual vector
r(s, t) of the sensor values s (evaluated by MuJoCo at a state and control) and the time t.
The residual is split into terms; term i has a slice rᵢ, a norm nᵢ with parameter pᵢ and a
weight wᵢ, and the stage cost is

    ℓ(s, t) = Σᵢ wᵢ nᵢ(rᵢ(s, t)).

Residual Jacobians with respect to the state and control follow by the chain rule,
r_x = (∂r/∂s) C and r_u = (∂r/∂s) D, with C, D the sensor Jacobians from the derivative provider;
time enters only as an explicit argument and is never perturbed.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from typing import ClassVar

import mujoco
import numpy as np

import robots
from common.hfield_contacts import CCD_ITERATIONS, prune_contacts
from mpc import norms
from mpc.norms.term_costs import term_costs
from mpc.tasks.ground import GroundPlane, add_ground_body, ground_body, pose
from robots.collision import ground_contacts_only
from robots.info import RobotInfo

#: MuJoCo's constraint Jacobian by its name in the planner's settings.
JACOBIAN = {"auto": mujoco.mjtJacobian.mjJAC_AUTO, "dense": mujoco.mjtJacobian.mjJAC_DENSE,
            "sparse": mujoco.mjtJacobian.mjJAC_SPARSE}


@dataclass(frozen=True)
class CostTerm:
    """One residual term: its name, dimension, norm (parameter) and weight."""

    name: str
    dim: int
    norm: str
    param: float
    weight: float

    def __post_init__(self) -> None:
        if self.norm not in norms.NORMS:
            raise ValueError(f"term {self.name}: unknown norm {self.norm!r}")


def term_table(terms: list[CostTerm]) -> tuple[np.ndarray, ...]:
    """The terms as the kernels take them: first residual row, dimension, norm code,
    parameter and weight of each."""
    dims = np.array([t.dim for t in terms], dtype=np.int64)
    return (np.concatenate([[0], np.cumsum(dims)[:-1]]).astype(np.int64), dims,
            np.array([norms.CODES[t.norm] for t in terms], dtype=np.int64),
            np.array([t.param for t in terms], dtype=np.float64),
            np.array([t.weight for t in terms], dtype=np.float64))


def weighted_terms(terms: list[CostTerm], weights: dict | None, task: str) -> list[CostTerm]:
    """``terms`` (as a task declares them, with their default weights) with the weights of a
    configuration's ``weights`` mapping (term name -> weight) in place of the defaults; a
    name that is not one of the terms is an error naming the terms."""
    names = [t.name for t in terms]
    unknown = set(weights or {}) - set(names)
    if unknown:
        raise ValueError(f"unknown cost term(s) {', '.join(sorted(unknown))} in weights; "
                         f"terms of {task}: {', '.join(names)}")
    for name, weight in (weights or {}).items():
        if isinstance(weight, bool) or not isinstance(weight, numbers.Real):
            raise ValueError(f"weights.{name} must be a number, got {weight!r}")
    return [replace(t, weight=float((weights or {}).get(t.name, t.weight))) for t in terms]


class Task(ABC):
    """Base class of tasks. Subclasses set ``terms`` in ``__init__``."""

    name: ClassVar[str]
    description: ClassVar[str]

    def __init__(self, robot: RobotInfo):
        self.robot = robot
        self.terms: list[CostTerm] = []
        #: The goals the task visits in order, world xy (n, 2); empty for a task without.
        #: The last one is where a run is measured from (``goal_distance_*`` in summary.json).
        self.waypoints: np.ndarray = np.empty((0, 2))
        self._sensor_slices: dict[str, slice] = {}
        #: Whether the planning model's height fields get their sphere contacts pruned
        #: (:mod:`common.hfield_contacts`); off unless a task's map setting turns it on.
        self.prune_field_contacts = False
        self._term_key: tuple[CostTerm, ...] | None = None
        #: The ground the task believes in (:mod:`mpc.tasks.ground`): the level floor at 0
        #: unless a task estimates it (in :meth:`update`). The planning model's floor follows
        #: it (:meth:`pose_ground`), and so does :meth:`fall_reason`.
        self.ground = GroundPlane()
        self._ground_body = -1

    @property
    def posable_ground(self) -> bool:
        """Whether :attr:`ground` may leave the level floor at 0 (the task estimates it), so
        the planning model needs a floor that :meth:`pose_ground` can move."""
        return False

    @property
    def foot_floors(self) -> int:
        """How many per-foot floors the planning model gets with a posable ground
        (:func:`mpc.tasks.ground.add_ground_body`): none unless a task says."""
        return 0

    # --- model -----------------------------------------------------------------------------
    @abstractmethod
    def add_sensors(self, spec: mujoco.MjSpec) -> None:
        """Add the sensors the residual reads to the robot's model specification."""

    def planning_model(self, timestep: float, self_collision: bool = False,
                       impratio: float | None = None,
                       overlay: robots.Overlay | None = None,
                       jacobian: str = "auto") -> mujoco.MjModel:
        """The robot's planning model (H1: legs only) with this task's sensors, stepping at
        ``timestep``; without contacts between the robot's own bodies unless
        ``self_collision``; with the robot model's friction impedance ratio unless
        ``impratio`` is given; with the robot's model ``overlay`` (:mod:`robots.overlay`)
        applied; with MuJoCo's ``jacobian`` option (auto, dense or sparse constraint rows).
        If the task estimates the ground (:attr:`posable_ground`), its floor plane sits on a
        body of its own (:func:`mpc.tasks.ground.add_ground_body`) that
        :meth:`pose_ground` moves; otherwise the floor is the robot model's, fixed at 0. A
        height field's sphere contacts are pruned to the deepest per direction
        (:mod:`common.hfield_contacts`) if :attr:`prune_field_contacts`; with a height field
        MuJoCo's EPA runs up to :data:`common.hfield_contacts.CCD_ITERATIONS` iterations."""
        spec = robots.planning_spec(self.robot.name, overlay)
        if self.posable_ground:
            add_ground_body(spec, self.foot_floors)
        self.add_terrain(spec)
        if spec.hfields:
            # EPA converged for a foot sunk into the field (common.hfield_contacts)
            spec.option.ccd_iterations = max(spec.option.ccd_iterations, CCD_ITERATIONS)
        spec.option.timestep = timestep
        if impratio is not None:
            spec.option.impratio = impratio
        spec.option.jacobian = JACOBIAN[jacobian]
        self.add_sensors(spec)
        model = spec.compile()
        if not self_collision:
            ground_contacts_only(model)
        self.terrain_contacts(model)
        prune_contacts(model, self.prune_field_contacts)
        self.bind(model)
        return model

    def add_terrain(self, spec: mujoco.MjSpec) -> None:  # noqa: B027
        """Add the terrain the task plans on to the planning model's specification (a map:
        :mod:`mpc.tasks.map_ground`); nothing by default (the robot model's floor)."""

    def terrain_contacts(self, model: mujoco.MjModel) -> None:  # noqa: B027
        """Choose what touches the task's terrain in the compiled planning model; nothing to
        choose by default."""

    def bind(self, model: mujoco.MjModel) -> None:
        """Resolve sensor addresses in a compiled model that has this task's sensors."""
        self._sensor_slices = {}
        for i in range(model.nsensor):
            name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_SENSOR, i)
            adr, dim = model.sensor_adr[i], model.sensor_dim[i]
            self._sensor_slices[name] = slice(adr, adr + dim)
        self.nsensordata = model.nsensordata
        self._ground_body = ground_body(model)

    def pose_ground(self, model: mujoco.MjModel) -> None:
        """Move the floor of ``model`` (the planning model this task is bound to) onto
        :attr:`ground`. Called by the planner after :meth:`update`, when nothing steps the
        model."""
        if self._ground_body >= 0:
            pose(model, self._ground_body, self.ground)

    def sensor(self, name: str) -> slice:
        """Slice of sensor ``name`` in ``sensordata``."""
        return self._sensor_slices[name]

    # --- residual --------------------------------------------------------------------------
    @property
    def nresidual(self) -> int:
        return sum(t.dim for t in self.terms)

    @property
    def term_slices(self) -> list[slice]:
        out, start = [], 0
        for t in self.terms:
            out.append(slice(start, start + t.dim))
            start += t.dim
        return out

    @abstractmethod
    def residual(self, sensordata: np.ndarray, time: np.ndarray) -> np.ndarray:
        """r (..., nr) from sensordata (..., ns) at times (...)."""

    @abstractmethod
    def residual_jacobian(self, sensordata: np.ndarray, time: np.ndarray) -> np.ndarray:
        """∂r/∂s (..., nr, ns) at sensordata (..., ns) and times (...)."""

    def term_costs(self, residual: np.ndarray) -> np.ndarray:
        """Weighted cost of each term (..., nterms) from residuals (..., nr), in one
        compiled call (:mod:`mpc.norms.term_costs`)."""
        if self._term_key != tuple(self.terms):
            self._term_key = tuple(self.terms)
            self._term_table = term_table(self.terms)
        r = np.ascontiguousarray(residual, dtype=np.float64)
        width = int(self._term_table[1].sum())
        if r.shape[-1] != width:  # the kernel does not check bounds
            raise ValueError(f"residual of width {r.shape[-1]}, the terms need {width}")
        flat = r.reshape(-1, r.shape[-1])
        out = np.empty((flat.shape[0], len(self.terms)))
        term_costs(flat, *self._term_table, out)
        return out.reshape(*r.shape[:-1], len(self.terms))

    def cost(self, residual: np.ndarray) -> np.ndarray:
        """Stage cost ℓ (...) from residuals (..., nr)."""
        return self.term_costs(residual).sum(axis=-1)

    # --- safety ----------------------------------------------------------------------------
    def fall_reason(self, qpos: np.ndarray) -> str | None:
        """Why the robot counts as fallen at ``qpos`` (planning-model layout), or None. The
        robot's criterion: base below its fall height over the ground under it
        (:attr:`ground`) or its z-axis tilted beyond its fall tilt from the vertical. Tasks
        whose goal posture is tilted (a quadruped on two legs) override this."""
        height = self.ground.above(qpos[0:3])
        if height < self.robot.fall_height:
            return f"base height {height:.3f} m over the ground < {self.robot.fall_height} m"
        angle = float(np.arccos(np.clip(base_axes(qpos)[2, 2], -1.0, 1.0)))
        if angle > self.robot.fall_tilt:
            return f"tilt {np.degrees(angle):.0f} deg"
        return None

    # --- state of the task -----------------------------------------------------------------
    def update(self, time: float, qpos: np.ndarray, qvel: np.ndarray) -> None:  # noqa: B027
        """Advance the task's own state (waypoints, gait clock) once per plan."""

    def planned_stance(self, time: float) -> np.ndarray | None:
        """Which feet (bool, the robot's foot order) the task's gait schedule puts on the
        ground at ``time``, or None for a task without a schedule. Recorded with every state
        sample, so a gait diagram can set the planned contacts against the achieved ones."""
        return None

    @property
    def goal(self) -> np.ndarray | None:
        """Current goal position (xy), if the task has one."""
        return None

    def set_goal(self, xy) -> None:
        """Move the current goal (e.g. dragged in the viewer)."""
        raise NotImplementedError(f"task {self.name} has no goal")

    @property
    def velocity_mode(self) -> bool:
        """Whether the task tracks a velocity command (see :meth:`set_command`)."""
        return False

    @property
    def command(self) -> np.ndarray | None:
        """The velocity command (v_x, v_y, ω_z) tracked (velocity mode), else None."""
        return None

    def set_command(self, command) -> None:
        """Track body-frame velocity ``command`` (v_x, v_y, ω_z) from the next plan on."""
        raise NotImplementedError(f"task {self.name} has no velocity mode")


def body_velocity(qpos: np.ndarray, qvel: np.ndarray) -> np.ndarray:
    """The base's body-frame twist (v_x, v_y, ω_z) from a floating-base state: MuJoCo's free
    joint velocity is linear in the world frame (qvel[0:3], rotated by Rᵀ) and angular in the
    body frame (qvel[3:6])."""
    v = base_axes(qpos).T @ np.asarray(qvel[:3], dtype=float)
    return np.array((v[0], v[1], float(qvel[5])))


def base_yaw(qpos: np.ndarray) -> float:
    """Yaw ψ of the base: the angle of its x-axis projected on the ground."""
    x = base_axes(qpos)[:2, 0]
    return float(np.arctan2(x[1], x[0]))


def wrap_angle(angle):
    """``angle`` (radians, scalar or array) wrapped into [−π, π] (π only by rounding)."""
    return (angle + np.pi) % (2 * np.pi) - np.pi


def base_axes(qpos: np.ndarray) -> np.ndarray:
    """Rotation matrix of the floating base (columns: its x, y, z axes in the world) from the
    base quaternion qpos[3:7]."""
    mat = np.zeros(9)
    quat = np.asarray(qpos[3:7], dtype=float)
    mujoco.mju_quat2Mat(mat, quat / np.linalg.norm(quat))
    return mat.reshape(3, 3)
