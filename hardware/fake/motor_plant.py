"""The fake robot as a simulated plant: the bridge's motor commands, no wire, a set delay.

On loopback the controller's commands reach the fake robot's motors several milliseconds after
the state they were computed from (5-15 ms on the 2-core development machine), and the TV-LQR
gains assume no delay at all. This plant reproduces that path deterministically, in lockstep:
the controls become the motor commands a hardware bridge would send (:class:`MotorMap`: joint
targets with the bridge's PD gains, unseen joints held at home), which the fake robot's motors
apply (:class:`FakeRobotSim`: PD law within the torque limits) ``delay`` seconds later. The
state reported is the simulation's true base state and the joints' encoders, or with
``base_state`` (a hardware config's ``plant.base_state``) what a bridge would report: that
estimator fed the fake robot's sensor readings (realistic by default), joints as the encoders
report them.

``terrain`` (:mod:`mpc.app.plants.terrain`) is the fake robot's ground; ``spec`` another description
of the robot to simulate; ``overlay`` how this fake robot differs from the nominal model (its
delay adds to ``delay``; see :class:`hardware.fake.robot.FakeRobotSim`).

``gantry`` (and ``gantry_lift``) hang the fake robot as :class:`FakeRobotSim` does; with
``log_file`` the plant writes the log a robot link writes (:mod:`mpc.app.record.link_log`:
every command as sent, every state as the robot reports it), stamped with simulation time, when
it closes.

Used by ``scripts/eval_latency.py`` to measure what delay a hardware config tolerates, by
``scripts/eval_terrain.py`` on terrain and by ``scripts/eval_sysid.py``.
"""

from __future__ import annotations

import logging
from collections import deque

import mujoco
import numpy as np

import robots
from hardware.estimation.base_state import ImuSample
from hardware.estimation.sources import make_source
from hardware.fake.robot import FAMILY, FakeRobotSim
from hardware.safety.layer import SafetyConfig
from hardware.unitree.motor_map import MotorMap
from mpc.app.plants.plant_base import Plant, PlantState
from mpc.app.plants.terrain import TerrainSpec
from mpc.app.record.link_log import LinkLog
from robots.info import RobotInfo
from robots.overlay import Overlay

log = logging.getLogger(__name__)


class FakeMotorPlant(Plant):
    def __init__(self, robot: RobotInfo, delay: float = 0.0, base_state: dict | None = None,
                 seed: int = 0, terrain: TerrainSpec = None,
                 spec: mujoco.MjSpec | None = None, overlay: Overlay | None = None,
                 gantry: bool = False, gantry_lift: float = 0.0, log_file: str = "",
                 timestep: float | None = None, joint_damping: float | None = None,
                 kp: list[float] | None = None, kd: list[float] | None = None):
        """``timestep``: the fake robot's simulation step (s; None: the model's own);
        ``joint_damping``: its joints' own damping (:class:`hardware.fake.robot.FakeRobotSim`);
        ``kp``, ``kd``: the PD gains commanded with the planner's joint targets, as a hardware
        config's ``plant.kp`` / ``plant.kd`` (:meth:`MotorMap.command_gains`; None: the
        planning model's, as the bridge)."""
        if not 0.0 <= delay <= 0.1:
            raise ValueError(f"delay must be within 0..0.1 s, got {delay}")
        self.sim = FakeRobotSim(robot, start="standing", command_timeout=np.inf, seed=seed,
                                terrain=terrain, spec=spec, overlay=overlay, gantry=gantry,
                                gantry_lift=gantry_lift, timestep=timestep,
                                joint_damping=joint_damping)
        model = robots.load_planning_model(robot.name)
        self.source = make_source(base_state, model, robot) if base_state else None
        self.low_state = None
        self.nq, self.nv, self.na = model.nq, model.nv, model.na
        self.map = MotorMap.build(robot, model, FAMILY[robot.name])
        self.kp, self.kd = self.map.command_gains(kp, kd)
        self.delay_steps = round(delay / self.sim.timestep)
        self.pending = self.map.hold_command(self.map.home)
        self.in_flight: deque = deque()
        self.damping_reason: str | None = None
        #: Fastest joint seen (rad/s), what the bridge's joint-speed trip watches.
        self.max_joint_speed = 0.0
        self.log_file = log_file
        self.log = LinkLog(LinkLog.MAX_ROWS, self.map.used) if log_file else None
        if self.source is not None:
            self._estimate()

    @property
    def timestep(self) -> float:
        return self.sim.timestep

    @property
    def model(self) -> mujoco.MjModel:
        """The fake robot's simulated world (its robot, terrain and floor)."""
        return self.sim.model

    def copy_state(self, dest: mujoco.MjData) -> None:
        """The simulated world's time and state into ``dest`` (an MjData of :attr:`model`,
        e.g. the simulated mapper's, :mod:`mpc.app.maps.sim_mapper`), its mocap bodies left
        alone as :meth:`SimPlant.copy_state` leaves them; lockstep only, so nothing steps the
        world meanwhile."""
        d = self.sim.data
        dest.time = d.time
        dest.qpos[:], dest.qvel[:], dest.act[:] = d.qpos, d.qvel, d.act

    def read_state(self) -> PlantState:
        d = self.sim.data
        qpos, qvel = np.zeros(self.nq), np.zeros(self.nv)
        if self.source is None:
            qpos[0:7], qvel[0:6] = d.qpos[0:7], d.qvel[0:6]
            self.map.to_planning(qpos, qvel, *self.sim.joints())
        else:
            est, st = self.source.estimate(), self.low_state
            qpos[0:3], qpos[3:7], qvel[0:3], qvel[3:6] = est.pos, est.quat, est.linvel, est.angvel
            self.map.to_planning(qpos, qvel, st.q, st.dq)
        return PlantState(float(d.time), qpos, qvel, np.zeros(self.na))

    def _estimate(self) -> None:
        """Feed the estimator the robot's state message, as a bridge does."""
        st = self.low_state = self.sim.state()
        slots = self.map.actuator_slots
        self.source.observe_feet(st.foot_force)
        self.source.update(ImuSample(float(self.sim.data.time), st.quat, st.gyro, st.accel),
                           st.q[slots], st.dq[slots])

    def set_planned_stance(self, stance: np.ndarray | None) -> None:
        """The gait schedule's stance, handed to the estimator as a robot's bridge does
        (hardware.unitree.bridge), so lockstep runs see the estimator of the deploy path."""
        if self.source is not None:
            self.source.set_planned_stance(stance)

    def send(self, ctrl: np.ndarray) -> None:
        ctrl = np.asarray(ctrl, dtype=float)
        if not np.all(np.isfinite(ctrl)):
            self.damp("non-finite command")
        if self.damping_reason is None:
            self.pending = self.map.run_command(ctrl, self.kp, self.kd)

    def damp(self, reason: str) -> None:
        if self.damping_reason is None:
            self.damping_reason = reason
            self.pending = self.map.damping_command(SafetyConfig().damping_kd)
            log.warning("plant damping: %s", reason)

    def step(self) -> None:
        """The command sent ``delay`` ago reaches the motors; one simulation step."""
        if self.log is not None:
            self.log.command(float(self.sim.data.time), self.pending, -1, "run")
        self.in_flight.append(self.pending)
        while len(self.in_flight) > self.delay_steps:
            self.sim.command(self.in_flight.popleft(), 0.0)
        self.sim.step(0.0)
        if self.log is not None:
            self.log.state(float(self.sim.data.time), self.sim.state())
        if self.source is not None:
            self._estimate()
        speed = float(np.abs(self.sim.data.qvel[self.sim.vadr]).max())
        self.max_joint_speed = max(self.max_joint_speed, speed)

    def close(self) -> None:
        """Write the log (with ``log_file``); nothing to release."""
        if self.log is not None:
            self.log.write(self.log_file)
            self.log = None

