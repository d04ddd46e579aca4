"""The simulated robot: the robot's MuJoCo model stepped at its own timestep."""

from __future__ import annotations

import logging
import threading
from collections import deque
from typing import ClassVar

import mujoco
import numpy as np

import robots
from mpc.app.plants import terrain as terrain_mod
from mpc.app.plants.plant_base import Plant, PlantState
from mpc.app.plants.terrain import TerrainSpec
from robots.info import RobotInfo
from robots.locked import LockedJointMap

log = logging.getLogger(__name__)


class SimPlant(Plant):
    """MuJoCo simulation of ``robot``, started at a keyframe with optional joint-angle noise.

    A ``goal`` mocap body (no contacts) marks the task's goal for the viewer, where it can be
    dragged. In damping mode every actuated joint's target follows its measured angle, so a
    position actuator exerts no stiffness and the joint's damping brakes it, like motors in
    damping mode.

    A robot with locked joints (H1) is simulated in full while the planner sees its planning
    model: states are reported and controls applied in the planning model's layout, mapped by
    joint and actuator name, and the locked joints are held at home by a joint PD plus their
    home torques at every step, as the hardware bridge holds them (:mod:`robots.locked`).

    ``terrain`` (:mod:`mpc.app.plants.terrain`: a shipped name, a mapping or a list) is built into
    the simulated world only; the planner keeps its level floor. Loose slabs are free bodies after
    the robot's: states report the robot's coordinates only.

    ``overlay`` (:mod:`robots.overlay`, the config's ``robot.overlay``) is applied to the
    simulated robot's model, and its transport delay holds every control back by that many
    plant steps (rounded) before it reaches the actuators.
    """

    #: Bounds of the options, read by mpc.app.schema.check_kwargs (see mpc/app/schema.py).
    RANGES: ClassVar[dict[str, dict[str, float]]] = {
        # below 0.1 ms a second of simulation takes 10,000 steps: a run that never ends
        "timestep": {"min": 1e-4, "max": 0.02},
        "init_noise": {"min": 0.0, "max": 1.0},
    }

    @staticmethod
    def check_options(robot: str, options: dict) -> None:
        terrain_mod.parse(options.get("terrain"))

    def __init__(self, robot: RobotInfo, seed: int = 0, timestep: float = 0.002,
                 init_noise: float = 0.0, keyframe: str = "home",
                 terrain: TerrainSpec = None, overlay: robots.Overlay | None = None):
        spec = robots.model_spec(robot.name, overlay)
        spec.option.timestep = timestep
        self.terrain = terrain_mod.build(spec, terrain, list(robot.feet))
        goal = spec.worldbody.add_body(name="goal", mocap=True, pos=[0, 0, 0.02])
        goal.add_geom(type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[0.08, 0.01, 0],
                      contype=0, conaffinity=0, rgba=[0.1, 0.9, 0.2, 0.6])
        self.model = spec.compile()
        self.data = mujoco.MjData(self.model)
        self.robot = robot
        key = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_KEY, keyframe)
        if key < 0:
            raise ValueError(f"robot {robot.name} has no keyframe {keyframe!r}")
        mujoco.mj_resetDataKeyframe(self.model, self.data, key)
        joints = self.model.actuator_trnid[:, 0]
        self._act_qpos = self.model.jnt_qposadr[joints]
        if init_noise > 0:
            rng = np.random.default_rng(seed)
            self.data.qpos[self._act_qpos] += init_noise * rng.standard_normal(len(joints))
        mujoco.mj_forward(self.model, self.data)
        self.terrain.place(self.model, self.data)
        # The robot's coordinates come first; the slabs' free joints follow.
        extra_q, extra_v = self.terrain.robot_free_slots
        self._nq, self._nv = self.model.nq - extra_q, self.model.nv - extra_v
        self.locked = (LockedJointMap.build(robot, self.model,
                                            robots.load_planning_model(robot.name))
                       if robot.locked_joints else None)
        self.lock = threading.Lock()
        self.damping_reason: str | None = None
        #: Controls on their way to the actuators (the overlay's delay; empty: none).
        self.delay_steps = round(overlay.delay / timestep) if overlay is not None else 0
        self._in_flight: deque[np.ndarray] = deque()
        # A foot touches the ground when any geom of its site's body touches a geom of
        # anything but the robot (the floor, the terrain, a loose slab).
        sites = [mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_SITE, f) for f in robot.feet]
        self._foot_bodies = self.model.site_bodyid[sites]
        self._robot_root = int(self.model.body_rootid[self._foot_bodies[0]])

    @property
    def timestep(self) -> float:
        return float(self.model.opt.timestep)

    def read_state(self) -> PlantState:
        with self.lock:
            d = self.data
            if self.locked is not None:
                return PlantState(d.time, d.qpos[self.locked.qpos], d.qvel[self.locked.qvel],
                                  d.act.copy())
            return PlantState(d.time, d.qpos[:self._nq].copy(), d.qvel[:self._nv].copy(),
                              d.act.copy())

    def send(self, ctrl: np.ndarray) -> None:
        ctrl = np.asarray(ctrl, dtype=float)
        if not np.all(np.isfinite(ctrl)):
            self.damp("non-finite command")
            return
        with self.lock:
            if self.damping_reason is not None:
                return
            if self.delay_steps:
                self._in_flight.append((self.data.time + self.delay_steps * self.timestep,
                                        ctrl.copy()))
            else:
                self._apply(ctrl)

    def _apply(self, ctrl: np.ndarray) -> None:
        """Controls to the actuators (lock held)."""
        if self.locked is not None:
            self.data.ctrl[self.locked.ctrl] = ctrl
        else:
            self.data.ctrl[:] = ctrl

    def damp(self, reason: str) -> None:
        with self.lock:
            if self.damping_reason is None:
                self.damping_reason = reason
                log.warning("plant damping: %s", reason)

    def close(self) -> None:
        """Nothing to release; a closed simulation just stops being stepped."""

    def actuator_forces(self) -> np.ndarray:
        with self.lock:
            forces = self.data.actuator_force.copy()
        return forces if self.locked is None else forces[self.locked.ctrl]

    def step(self) -> None:
        with self.lock:
            if self.damping_reason is not None and self.model.actuator_biastype.any():
                self.data.ctrl[:] = self.data.qpos[self._act_qpos]
            elif self.damping_reason is not None:
                self.data.ctrl[:] = 0.0
            else:
                # the delayed controls whose time has come (a small tolerance: times are sums
                # of timesteps)
                due = self.data.time + 0.5 * self.timestep
                while self._in_flight and self._in_flight[0][0] <= due:
                    self._apply(self._in_flight.popleft()[1])
                if self.locked is not None:
                    self.data.ctrl[self.locked.locked_ctrl] = self.locked.hold_torques(
                        self.data.qpos, self.data.qvel)
            mujoco.mj_step(self.model, self.data)

    def foot_contacts(self) -> np.ndarray:
        """Which feet touch the ground (task foot order): contacts between a foot's body and
        anything that is not the robot (the world's geometry, a loose slab); a foot touching
        the robot itself does not count."""
        with self.lock:
            c = self.data.contact
            b1 = self.model.geom_bodyid[c.geom1]
            b2 = self.model.geom_bodyid[c.geom2]
        root = self.model.body_rootid
        robot1, robot2 = root[b1] == self._robot_root, root[b2] == self._robot_root
        on_ground = np.concatenate([b1[robot1 & ~robot2], b2[robot2 & ~robot1]])
        return np.isin(self._foot_bodies, on_ground)

    def copy_state(self, dest: mujoco.MjData) -> None:
        """Copy the simulation's time, state and controls into ``dest`` (another MjData of
        :attr:`model`, e.g. the viewer's), leaving its mocap bodies (the goal marker) alone."""
        with self.lock:
            d = self.data
            dest.time = d.time
            dest.qpos[:] = d.qpos
            dest.qvel[:] = d.qvel
            dest.act[:] = d.act
            dest.ctrl[:] = d.ctrl
