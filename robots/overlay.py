"""A model overlay: a robot's measured parameters, applied wherever its model is loaded.

An overlay is a small YAML file that states how one robot differs from its nominal MJCF model
(``robots/models/<robot>.xml``); every part of the program that builds a model of the robot's
dynamics (the planner's model, the simulated plant, the fake robots) applies it the same way,
through :func:`robots.model_spec` / :func:`robots.planning_spec`, so that identification and
simulation never disagree::

    robot: go1
    delay: 0.004                  # s, from a command leaving the controller to the motor
    joints:                       # any subset of the robot's joints, by name
      FR_calf_joint: {armature: 0.012, damping: 2.3, frictionloss: 0.31, kp: 87.0,
                      torque_limit: 33.0}
    trunk:
      mass: 6.1                   # kg, the trunk (base) body's mass
      com: [0.024, 0.012, -0.001] # m, its centre of mass in the trunk frame
    feet:
      friction: 0.8               # sliding friction coefficient of the feet

What each key means in the model (MuJoCo's own attributes, so an overlay reads like the MJCF):

- ``armature`` (kg m^2): the joint's reflected rotor inertia, ``joint/@armature``.
- ``damping`` (N m s/rad): the joint's viscous damping, ``joint/@damping``. In the project's
  quadruped models this figure *is* the motor's velocity gain: the bridge commands it as the
  motors' Kd (:class:`hardware.unitree.motor_map.MotorMap`), so an identified value is the
  motor's effective velocity gain at the commanded Kd, joint viscous friction included.
- ``frictionloss`` (N m): the joint's dry friction, ``joint/@frictionloss``.
- ``kp`` (N m/rad): the motor's effective position gain, the position actuator's ``kp``; the
  bridge commands the nominal model's figure, and the motor applies ``kp`` instead.
- ``torque_limit`` (N m): the motor's torque limit, the actuator's ``forcerange``.
- ``delay`` (s): a transport delay from command to motor. It is not part of a MuJoCo model:
  plants apply it as a queue of commands (:class:`mpc.app.plants.sim_plant.SimPlant`, the fake
  robots).
- ``trunk.mass`` and ``trunk.com``: the base body's mass and centre of mass (a payload); its
  rotational inertia is scaled with the mass.
- ``feet.friction``: the feet geoms' sliding friction (they have contact priority over the
  ground, so theirs is the contact's coefficient).

A joint the overlay does not name, and a key it leaves out, keep the model's figure. An overlay
for one robot cannot be applied to another. Bad input raises :class:`OverlayError` with one line
naming the file and the key.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

import mujoco
import numpy as np
import yaml

from common.yamlfile import read_yaml
from robots.info import RobotInfo

#: Largest transport delay an overlay may state (s): beyond it no controller of this program
#: can hold a legged robot.
MAX_DELAY = 0.1
#: Largest centre-of-mass offset from the trunk frame's origin (m).
MAX_COM = 0.5


class OverlayError(ValueError):
    """An overlay file that cannot be used (the message is one line naming file and key)."""


@dataclass(frozen=True)
class JointParams:
    """One joint's parameters (None: the model's own figure). Units in the module docstring."""

    armature: float | None = None
    damping: float | None = None
    frictionloss: float | None = None
    kp: float | None = None
    torque_limit: float | None = None

    def as_dict(self) -> dict[str, float]:
        return {f.name: getattr(self, f.name) for f in fields(self)
                if getattr(self, f.name) is not None}


#: Per-joint keys and what each must be: (lower bound, inclusive?).
JOINT_BOUNDS: dict[str, tuple[float, bool]] = {
    "armature": (0.0, True), "damping": (0.0, True), "frictionloss": (0.0, True),
    "kp": (0.0, False), "torque_limit": (0.0, False)}
TOP_KEYS = ("robot", "delay", "joints", "trunk", "feet")


@dataclass(frozen=True)
class Overlay:
    """A parsed, checked overlay (see the module docstring)."""

    robot: str
    joints: Mapping[str, JointParams] = field(default_factory=dict)
    delay: float = 0.0
    trunk_mass: float | None = None
    trunk_com: tuple[float, float, float] | None = None
    foot_friction: float | None = None
    #: Where it came from, for messages.
    source: str = "<overlay>"

    # --- reading ----------------------------------------------------------------------------
    @classmethod
    def from_mapping(cls, data: object, source: str, robots: Mapping[str, RobotInfo]) -> Overlay:
        """Check ``data`` (a parsed YAML document) against the robot it names, which must be
        one of ``robots``; OverlayError with one line otherwise."""
        def fail(msg: str) -> OverlayError:
            return OverlayError(f"{source}: {msg}")

        if not isinstance(data, dict):
            raise fail("expected a mapping with 'robot' and the parameters")
        for key in data:
            if key not in TOP_KEYS:
                raise fail(f"unknown key '{key}' (valid keys: {', '.join(TOP_KEYS)})")
        name = data.get("robot")
        if name not in robots:
            raise fail(f"'robot' must name a robot ({', '.join(sorted(robots))}), got {name!r}")
        robot = robots[name]
        delay = _number(data.get("delay", 0.0), "delay", fail, lower=0.0, upper=MAX_DELAY)
        joints_in = data.get("joints") or {}
        if not isinstance(joints_in, dict):
            raise fail("'joints' must map joint names to their parameters")
        joints = {}
        for joint, params in joints_in.items():
            if joint not in robot.motor_joints:
                raise fail(f"unknown joint '{joint}' of {robot.name} (joints: "
                           f"{', '.join(robot.motor_joints)})")
            if not isinstance(params, dict):
                raise fail(f"'joints.{joint}' must map parameter names to numbers")
            values = {}
            for key, value in params.items():
                if key not in JOINT_BOUNDS:
                    raise fail(f"unknown key 'joints.{joint}.{key}' (valid keys: "
                               f"{', '.join(JOINT_BOUNDS)})")
                low, inclusive = JOINT_BOUNDS[key]
                values[key] = _number(value, f"joints.{joint}.{key}", fail, lower=low,
                                      inclusive=inclusive)
            if "kp" in values and robot.control != "position":
                raise fail(f"'joints.{joint}.kp': {robot.name}'s motors take torques, they have "
                           f"no position gain")
            joints[joint] = JointParams(**values)
        trunk = _section(data, "trunk", ("mass", "com"), fail)
        mass = _number(trunk["mass"], "trunk.mass", fail, lower=0.0, inclusive=False) \
            if "mass" in trunk else None
        com = None
        if "com" in trunk:
            c = trunk["com"]
            if not (isinstance(c, (list, tuple)) and len(c) == 3):
                raise fail(f"'trunk.com' must be [x, y, z] in metres, got {c!r}")
            com = tuple(_number(v, f"trunk.com[{i}]", fail, lower=-MAX_COM, upper=MAX_COM)
                        for i, v in enumerate(c))
        feet = _section(data, "feet", ("friction",), fail)
        friction = _number(feet["friction"], "feet.friction", fail, lower=0.0,
                           inclusive=False, upper=10.0) if "friction" in feet else None
        return cls(robot.name, joints, delay, mass, com, friction, source)

    # --- writing ----------------------------------------------------------------------------
    def to_mapping(self) -> dict:
        """The YAML document of this overlay (keys it leaves out stay out)."""
        out: dict = {"robot": self.robot}
        if self.delay:
            out["delay"] = float(self.delay)
        if self.joints:
            out["joints"] = {j: {k: float(v) for k, v in p.as_dict().items()}
                             for j, p in self.joints.items() if p.as_dict()}
        trunk = {}
        if self.trunk_mass is not None:
            trunk["mass"] = float(self.trunk_mass)
        if self.trunk_com is not None:
            trunk["com"] = [float(v) for v in self.trunk_com]
        if trunk:
            out["trunk"] = trunk
        if self.foot_friction is not None:
            out["feet"] = {"friction": float(self.foot_friction)}
        return out

    def dump(self, header: str = "") -> str:
        """YAML text, with ``header`` as leading comment lines."""
        comments = "".join(f"# {line}\n" if line else "#\n" for line in header.splitlines())
        return comments + yaml.safe_dump(self.to_mapping(), sort_keys=False,
                                         default_flow_style=None, width=100)

    def with_joint(self, joint: str, **params: float) -> Overlay:
        """A copy with ``params`` set on ``joint``."""
        joints = dict(self.joints)
        joints[joint] = replace(joints.get(joint, JointParams()), **params)
        return replace(self, joints=joints)

    # --- applying ---------------------------------------------------------------------------
    def apply(self, spec: mujoco.MjSpec, robot: RobotInfo) -> None:
        """Write the overlay into ``spec``, a description of ``robot`` (the full model or its
        planning model: joints the spec lacks, H1's arms in its planning model, are skipped)."""
        if robot.name != self.robot:
            raise OverlayError(f"{self.source}: an overlay for {self.robot} cannot be applied "
                               f"to {robot.name}")
        actuators: dict[str, list] = {}
        for act in spec.actuators:
            actuators.setdefault(act.target, []).append(act)
        for name, p in self.joints.items():
            joint = spec.joint(name)
            if joint is None:
                continue
            if p.armature is not None:
                joint.armature = p.armature
            if p.damping is not None:
                joint.damping = np.r_[p.damping, np.zeros(len(joint.damping) - 1)]
            if p.frictionloss is not None:
                joint.frictionloss = p.frictionloss
            for act in actuators.get(name, []):
                if p.kp is not None and act.biastype == mujoco.mjtBias.mjBIAS_AFFINE:
                    act.gainprm[0] = p.kp
                    act.biasprm[1] = -p.kp
                if p.torque_limit is not None:
                    gear = abs(float(act.gear[0])) or 1.0
                    act.forcerange = np.array([-1.0, 1.0]) * p.torque_limit / gear
                    act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
        trunk = spec.body(robot.base_body)
        if self.trunk_mass is not None:
            trunk.inertia = np.asarray(trunk.inertia) * (self.trunk_mass / trunk.mass)
            trunk.mass = self.trunk_mass
        if self.trunk_com is not None:
            trunk.ipos = np.array(self.trunk_com)
        if self.foot_friction is not None:
            for foot in robot.feet:
                site = spec.site(foot)
                for geom in site.parent.geoms:
                    geom.friction = np.r_[self.foot_friction, np.asarray(geom.friction)[1:]]


def load(path: str | Path, robots: Mapping[str, RobotInfo], robot: str | None = None
         ) -> Overlay:
    """Read and check the overlay file ``path``; ``robot``: the robot it must be for."""
    p = Path(path)
    data = read_yaml(p, "overlay file", OverlayError)
    overlay = Overlay.from_mapping(data, str(p), robots)
    if robot is not None and overlay.robot != robot:
        raise OverlayError(f"{p}: the overlay is for {overlay.robot}, not {robot}")
    return overlay


def nominal(robot: RobotInfo, model: mujoco.MjModel) -> Overlay:
    """The figures of ``model`` (compiled, without an overlay) as an overlay naming every
    actuated joint it has: what identification starts from and what an overlay is compared
    with."""
    joints = {}
    for a in range(model.nu):
        jid = int(model.actuator_trnid[a, 0])
        name = model.joint(jid).name
        dof = model.jnt_dofadr[jid]
        position = model.actuator_biastype[a] == mujoco.mjtBias.mjBIAS_AFFINE
        gear = abs(float(model.actuator_gear[a, 0])) or 1.0
        limit = gear * float(np.abs(model.actuator_forcerange[a]).max()) \
            if model.actuator_forcelimited[a] else None
        documented = dict(zip(robot.motor_joints, robot.torque_limit, strict=True))
        joints[name] = JointParams(
            armature=float(model.dof_armature[dof]), damping=float(model.dof_damping[dof]),
            frictionloss=float(model.dof_frictionloss[dof]),
            kp=float(model.actuator_gainprm[a, 0]) if position else None,
            torque_limit=limit if limit else documented.get(name))
    base = model.body(robot.base_body)
    return Overlay(robot.name, joints, 0.0, float(base.mass[0]), tuple(float(v) for v in
                                                                      base.ipos), None,
                   f"<nominal {robot.name}>")


def _section(data: dict, key: str, valid: tuple[str, ...], fail) -> dict:
    section = data.get(key) or {}
    if not isinstance(section, dict):
        raise fail(f"'{key}' must be a mapping ({', '.join(valid)})")
    for k in section:
        if k not in valid:
            raise fail(f"unknown key '{key}.{k}' (valid keys: {', '.join(valid)})")
    return section


def _number(value: object, where: str, fail, lower: float | None = None,
            upper: float | None = None, inclusive: bool = True) -> float:
    """``value`` as a finite float within the bounds; a one-line error naming ``where``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise fail(f"'{where}' must be a number, got {value!r}")
    x = float(value)
    if not math.isfinite(x):
        raise fail(f"'{where}' must be a finite number, got {value!r}")
    if lower is not None and (x < lower or (not inclusive and x == lower)):
        physical = "a physical value: " if lower == 0.0 else ""
        raise fail(f"'{where}' must be {physical}{'>=' if inclusive else '>'} {lower:g}, "
                   f"got {value!r}")
    if upper is not None and x > upper:
        raise fail(f"'{where}' must be <= {upper:g}, got {value!r}")
    return x
