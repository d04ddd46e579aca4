"""Per-robot metadata in one place.

Model order is the order of joints/actuators in the MJCF file. Motor order is the order of the
robot's own motor slots on the wire (Unitree quadrupeds: legs FR, FL, RR, RL; joints abduction,
hip, knee). The two are mapped explicitly by joint name, never by position.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

QUADRUPED_LEGS = ("FR", "FL", "RR", "RL")
QUADRUPED_JOINTS = ("hip", "thigh", "calf")


def _quadruped_joint_names() -> tuple[str, ...]:
    return tuple(f"{leg}_{joint}_joint" for leg in QUADRUPED_LEGS for joint in QUADRUPED_JOINTS)


@dataclass(frozen=True)
class RobotInfo:
    """What the planner, the tasks and the hardware bridges need to know about a robot."""

    name: str
    model_file: str
    description: str
    #: Name of the floating-base body.
    base_body: str
    #: Actuated joints in the robot's motor-slot order; ``motor_slots[i]`` is the slot of joint i.
    motor_joints: tuple[str, ...]
    motor_slots: tuple[int, ...]
    #: Foot site names (the order tasks use).
    feet: tuple[str, ...]
    #: Keyframe holding the home pose.
    home_key: str
    #: The robot has fallen when its base is below this height (m) ...
    fall_height: float
    #: ... or tilted more than this from upright (rad).
    fall_tilt: float = float(np.deg2rad(60.0))
    #: Joint-space PD gains used on hardware (position actuators' setpoints go to the motors' PD).
    hw_kp: tuple[float, ...] = field(default_factory=tuple)
    hw_kd: tuple[float, ...] = field(default_factory=tuple)
    #: Motor torque limits (N m), in motor order.
    torque_limit: tuple[float, ...] = field(default_factory=tuple)


ROBOTS: dict[str, RobotInfo] = {
    "a1": RobotInfo(
        name="a1",
        model_file="a1.xml",
        description="Unitree A1 quadruped, 12 position actuators (kp 100), elliptic cones",
        base_body="trunk",
        motor_joints=_quadruped_joint_names(),
        motor_slots=tuple(range(12)),
        feet=("FL_foot", "RL_foot", "FR_foot", "RR_foot"),
        home_key="home",
        fall_height=0.12,
        hw_kp=(60.0,) * 12,
        hw_kd=(3.0,) * 12,
        torque_limit=(33.5,) * 12,
    ),
}
