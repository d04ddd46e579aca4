"""The safety layer around any plant (simulated ones included, with ``safety.in_simulation``).

Hardware bridges enforce the whole layer themselves, inside their link thread; this wrapper
gives a plant without one the parts that do not need a link: controls checked for finiteness
and clamped to the robot's physical joint range (position actuators) or torque (motors)
(:class:`hardware.safety.layer.JointLimits`), with the clamps logged; a control computed from a
state older than ``max_command_age`` (the plant's
:meth:`~mpc.app.plants.plant_base.Plant.state_age`: an LCM robot's) refused and counted; the
tilt and joint-speed tripwires on every state read; e-stop on SIGINT/SIGTERM; dry run (controls
computed and counted, none passed on). A wrapped plant that sends more than the controls (the
LCM plant's gains) applies its own share of the section
(:meth:`mpc.app.plants.plant_base.Plant.apply_safety`). Every trip puts the wrapped plant in
damping.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from hardware.safety.layer import (
    ClampLog,
    JointLimits,
    SafetyConfig,
    clamp,
    install_estop,
    stale_command_reason,
    tilt_trip,
)
from mpc.app.plants.plant_base import Plant, PlantState
from robots.info import RobotInfo


class SafePlant(Plant):
    """The parts of the safety layer any plant can take, around ``plant``: non-finite and
    out-of-range controls, non-finite state, tilt and joint-speed trips, dry runs, the e-stop
    signals."""

    #: The options of ``safety:`` this wrapper applies to any plant it wraps.
    APPLIES: ClassVar[frozenset[str]] = frozenset({"max_tilt", "max_joint_speed", "dry_run",
                                                  "in_simulation", "max_command_age"})

    def __init__(self, plant: Plant, robot: RobotInfo, safety: SafetyConfig, model):
        self.plant = plant
        self.safety = safety
        self.realtime_only = plant.realtime_only
        self.clamps = ClampLog()
        self.withheld = 0
        #: Controls refused for their age (see ``SafetyConfig.max_command_age``).
        self.stale_commands = 0
        self._reason: str | None = None
        limits = JointLimits.of(robot, model, safety)
        if robot.control == "position":
            self.lo, self.hi = limits.lower, limits.upper
        else:
            self.lo, self.hi = -limits.torque, limits.torque
        joints = model.actuator_trnid[:, 0]
        self._dofs = model.jnt_dofadr[joints]
        self._joint_names = [model.joint(j).name for j in joints]
        plant.apply_safety(safety)

    @property
    def damping_reason(self) -> str | None:
        """This layer's trip, else the wrapped plant's own (an LCM plant's watchdogs): either
        ends the run."""
        return self._reason or self.plant.damping_reason

    @property
    def model(self):
        """The wrapped simulation's model (None for a robot), for a viewer."""
        return self.plant.model

    def copy_state(self, dest) -> None:
        self.plant.copy_state(dest)

    def foot_contacts(self) -> np.ndarray | None:
        return self.plant.foot_contacts()

    def set_planned_stance(self, stance: np.ndarray | None) -> None:
        self.plant.set_planned_stance(stance)

    @property
    def timestep(self) -> float:
        return self.plant.timestep

    def actuator_forces(self) -> np.ndarray | None:
        return self.plant.actuator_forces()

    def read_state(self) -> PlantState:
        state = self.plant.read_state()
        if self.damping_reason is None:
            if not (np.all(np.isfinite(state.qpos)) and np.all(np.isfinite(state.qvel))):
                self.damp("non-finite state")
            else:
                reason = tilt_trip(state.qpos[3:7], self.safety.max_tilt) or self._speed_trip(
                    state.qvel)
                if reason is not None:
                    self.damp(reason)
        return state

    def _speed_trip(self, qvel: np.ndarray) -> str | None:
        """The reason to trip if an actuated joint is faster than ``max_joint_speed``."""
        speed = np.abs(qvel[self._dofs])
        i = int(np.argmax(speed))
        if speed[i] > self.safety.max_joint_speed:
            return (f"joint speed {speed[i]:.1f} rad/s at {self._joint_names[i]} beyond "
                    f"{self.safety.max_joint_speed:g} rad/s")
        return None

    def send(self, ctrl: np.ndarray) -> None:
        ctrl = np.asarray(ctrl, dtype=float)
        if not np.all(np.isfinite(ctrl)):
            self.damp("non-finite command from the controller")
            return
        age = self.plant.state_age()
        if self.damping_reason is None and not age <= self.safety.max_command_age:
            self.stale_commands += 1
            self.damp(stale_command_reason(age, self.safety.max_command_age))
            return
        ctrl = clamp(ctrl, self.lo, self.hi, "control", self.clamps)
        if self.safety.dry_run:
            self.withheld += 1
            return
        self.plant.send(ctrl)

    def damp(self, reason: str) -> None:
        if self._reason is None:
            self._reason = reason
        self.plant.damp(reason)

    def prepare(self) -> None:
        install_estop(self.damp)
        self.plant.prepare()

    def step(self) -> None:
        self.plant.step()

    def state_age(self) -> float:
        return self.plant.state_age()

    def stats(self) -> dict:
        """The wrapped plant's counts and this layer's: controls refused for their age,
        withheld (dry run)."""
        return {**self.plant.stats(), "stale_commands": self.stale_commands,
                "withheld": self.withheld}

    def close(self) -> None:
        self.plant.close()
