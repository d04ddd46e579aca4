"""From run directories to a model overlay: which run identifies what, and the overlay written.

Runs of the joint excitation (task ``joint_excitation``, a gantry) identify the actuators and
the delay (:mod:`mpc.app.sysid.actuators`); every other run with a link log (standing,
trotting) identifies the trunk's mass and centre of mass given those actuators
(:mod:`mpc.app.sysid.trunk`). All runs must be of one robot.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import robots
from mpc.app.sysid import actuators, trunk
from mpc.app.sysid.data import CUTOFF, RunData, SysidError, load
from robots.overlay import JointParams, Overlay, nominal

GANTRY_TASK = "joint_excitation"
#: The encoders' latency from measurement to message (s): what the Unitree robots' low-level
#: state carries (and the fake robots' sensors model, hardware.fake.sensors), part of the
#: loop's delay that the identification measures but not of the transport delay an overlay
#: states (the plants model the sensors' latency apart).
SENSOR_LATENCY = 0.002


@dataclass
class Identification:
    robot: str
    nominal: Overlay
    actuators: actuators.ActuatorFit
    trunk: trunk.TrunkFit | None
    gantry: list[RunData]
    other: list[RunData]
    #: The sensors' latency taken out of the loop's delay for the overlay (s).
    sensor_latency: float = SENSOR_LATENCY

    @property
    def delay(self) -> float:
        """The overlay's transport delay: the loop's (command to encoder report) less the
        sensors' latency, at least 0."""
        return max(0.0, self.actuators.delay - self.sensor_latency)

    def overlay(self, source: str = "<identified>") -> Overlay:
        """The identified figures as an overlay (the torque limit stays the nominal one: the
        excitation keeps the motors below it, so it is not observed)."""
        joints = {j.joint: JointParams(**{k: float(v) for k, v in j.values.items()})
                  for j in self.actuators.joints}
        mass = com = None
        if self.trunk is not None:
            mass, com = self.trunk.mass, tuple(self.trunk.com)
        return Overlay(self.robot, joints, self.delay, mass, com, None,
                       source)


def identify(run_dirs: list[str | Path], cutoff: float = CUTOFF,
             sensor_latency: float = SENSOR_LATENCY) -> Identification:
    """Identify from ``run_dirs`` (module docstring); SysidError naming what is missing."""
    runs = [load(d, cutoff) for d in run_dirs]
    names = {r.robot.name for r in runs}
    if len(names) > 1:
        raise SysidError(f"the runs are of several robots ({', '.join(sorted(names))})")
    gantry = [r for r in runs if r.task == GANTRY_TASK]
    other = [r for r in runs if r.task != GANTRY_TASK]
    if not gantry:
        raise SysidError(f"no gantry run among {', '.join(str(r.run_dir) for r in runs)} "
                         f"(task {GANTRY_TASK}: run a *_sysid_gantry config first)")
    robot = runs[0].robot
    base = nominal(robot, robots.load_model(robot.name))
    fit = actuators.identify(gantry, base, cutoff)
    body = trunk.identify(other, base, fit) if other else None
    return Identification(robot.name, base, fit, body, gantry, other, sensor_latency)
