"""Per-robot metadata in one place.

Model order is the order of joints/actuators in the MJCF file. Motor order is the order of the
robot's own motor slots on the wire (Unitree quadrupeds, legacy UDP and SDK2 alike: legs FR, FL,
RR, RL; joints abduction, hip, knee. H1 over SDK2 ``unitree_go``: its own slot layout, see
``H1_MOTORS``). ``motor_joints`` lists the joints in slot order. The two are mapped explicitly by
joint name, never by position.

Sources: motor orders, A1/Go1 joint and torque limits and quadruped PD gains from
../shared/notes/hardware.md and ilqr_and_tasks.md; Go2 and H1 joint and torque limits from the
reference descriptions (MuJoCo Menagerie); H1 PD gains from Unitree's H1 low-level example
(unitree_sdk2: Kp 200 / Kd 5, ankles and arms Kp 60 / Kd 1.5).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

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
    #: Joint-space PD gains used on hardware, in motor order (quadrupeds: the motors' PD that
    #: tracks the planned joint targets; H1: the PD that holds the locked joints).
    hw_kp: tuple[float, ...] = field(default_factory=tuple)
    hw_kd: tuple[float, ...] = field(default_factory=tuple)
    #: Motor torque limits (N m), in motor order.
    torque_limit: tuple[float, ...] = field(default_factory=tuple)
    #: Joint-angle limits (rad) as (lower, upper), in motor order.
    joint_limits: tuple[tuple[float, float], ...] = field(default_factory=tuple)
    #: What ctrl means: a joint-angle target (position actuators) or a joint torque (motors).
    control: Literal["position", "torque"] = "position"
    #: Radius of the foot contact spheres (m); foot sites sit at the sphere centres.
    foot_radius: float = 0.02
    #: Model the planner uses, when it differs from ``model_file`` (H1: legs only).
    planning_model_file: str | None = None
    #: Joints of ``model_file`` that the planning model lacks: the plant holds them at their home
    #: angles (hardware: joint PD with ``hw_kp``/``hw_kd``).
    locked_joints: tuple[str, ...] = ()

    def slot_of(self, joint: str) -> int:
        """Motor slot of ``joint``."""
        return self.motor_slots[self.motor_joints.index(joint)]


#: H1 motors (SDK2 ``unitree_go`` LowCmd/LowState, 20 slots, slot 9 unused): joint -> (slot,
#: torque limit N m, joint range rad, hardware Kp, Kd).
H1_MOTORS: dict[str, tuple[int, float, tuple[float, float], float, float]] = {
    "right_hip_roll": (0, 200.0, (-0.43, 0.43), 200.0, 5.0),
    "right_hip_pitch": (1, 200.0, (-1.57, 1.57), 200.0, 5.0),
    "right_knee": (2, 300.0, (-0.26, 2.05), 200.0, 5.0),
    "left_hip_roll": (3, 200.0, (-0.43, 0.43), 200.0, 5.0),
    "left_hip_pitch": (4, 200.0, (-1.57, 1.57), 200.0, 5.0),
    "left_knee": (5, 300.0, (-0.26, 2.05), 200.0, 5.0),
    "torso": (6, 200.0, (-2.35, 2.35), 200.0, 5.0),
    "left_hip_yaw": (7, 200.0, (-0.43, 0.43), 200.0, 5.0),
    "right_hip_yaw": (8, 200.0, (-0.43, 0.43), 200.0, 5.0),
    "left_ankle": (10, 40.0, (-0.87, 0.52), 60.0, 1.5),
    "right_ankle": (11, 40.0, (-0.87, 0.52), 60.0, 1.5),
    "right_shoulder_pitch": (12, 40.0, (-2.87, 2.87), 60.0, 1.5),
    "right_shoulder_roll": (13, 40.0, (-3.11, 0.34), 60.0, 1.5),
    "right_shoulder_yaw": (14, 18.0, (-4.45, 1.3), 60.0, 1.5),
    "right_elbow": (15, 18.0, (-1.25, 2.61), 60.0, 1.5),
    "left_shoulder_pitch": (16, 40.0, (-2.87, 2.87), 60.0, 1.5),
    "left_shoulder_roll": (17, 40.0, (-0.34, 3.11), 60.0, 1.5),
    "left_shoulder_yaw": (18, 18.0, (-1.3, 4.45), 60.0, 1.5),
    "left_elbow": (19, 18.0, (-1.25, 2.61), 60.0, 1.5),
}


def _h1_info() -> RobotInfo:
    joints = tuple(H1_MOTORS)
    figures = list(H1_MOTORS.values())
    upper_body = tuple(j for j in joints if j == "torso" or "shoulder" in j or "elbow" in j)
    return RobotInfo(
        name="h1",
        model_file="h1.xml",
        description="Unitree H1 humanoid, 19 torque motors, pyramidal cones; planner: legs "
                    "only (10 motors), upper body locked, heel and toe spheres",
        base_body="pelvis",
        motor_joints=joints,
        motor_slots=tuple(f[0] for f in figures),
        feet=("left_foot", "right_foot"),
        home_key="home",
        # Pelvis 1.03 m when standing; below 0.6 m it is kneeling or down.
        fall_height=0.6,
        hw_kp=tuple(f[3] for f in figures),
        hw_kd=tuple(f[4] for f in figures),
        torque_limit=tuple(f[1] for f in figures),
        joint_limits=tuple(f[2] for f in figures),
        control="torque",
        foot_radius=0.02,
        planning_model_file="h1_legs.xml",
        locked_joints=upper_body,
    )


def _quadruped_limits(abduction: tuple[float, float], front_hip: tuple[float, float],
                      rear_hip: tuple[float, float], knee: tuple[float, float]
                      ) -> tuple[tuple[float, float], ...]:
    """Joint limits in motor order (FR, FL, RR, RL; abduction, hip, knee)."""
    return tuple(lim for leg in QUADRUPED_LEGS
                 for lim in (abduction, front_hip if leg[0] == "F" else rear_hip, knee))


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
        joint_limits=_quadruped_limits((-0.802, 0.802), (-1.05, 4.19), (-1.05, 4.19),
                                       (-2.7, -0.916)),
        foot_radius=0.02,
    ),
    "go1": RobotInfo(
        name="go1",
        model_file="go1.xml",
        description="Unitree Go1 quadruped, 12 position actuators (kp 100), elliptic cones",
        base_body="trunk",
        motor_joints=_quadruped_joint_names(),
        motor_slots=tuple(range(12)),
        feet=("FL_foot", "RL_foot", "FR_foot", "RR_foot"),
        home_key="home",
        # Standing trunk height 0.29 m (A1: 0.27 m, fall height 0.12 m), scaled.
        fall_height=0.13,
        hw_kp=(60.0,) * 12,
        hw_kd=(3.0,) * 12,
        torque_limit=(23.7, 23.7, 35.55) * 4,
        # Hardware figures (hardware.md); the reference model's ranges differ (model: abduction
        # +-0.863, hip -0.686..4.501, knee -2.818..-0.888).
        joint_limits=_quadruped_limits((-1.047, 1.047), (-0.663, 2.966), (-0.663, 2.966),
                                       (-2.721, -0.837)),
        foot_radius=0.023,
    ),
    "go2": RobotInfo(
        name="go2",
        model_file="go2.xml",
        description="Unitree Go2 quadruped, 12 position actuators (kp 100), elliptic cones",
        base_body="base",
        motor_joints=_quadruped_joint_names(),
        # SDK2 Go2 motor order is FR, FL, RR, RL like the legacy SDK (unitree_sdk2 go2
        # JointIndex); only the reference MJCF orders its actuators FL, FR, RL, RR.
        motor_slots=tuple(range(12)),
        feet=("FL_foot", "RL_foot", "FR_foot", "RR_foot"),
        home_key="home",
        fall_height=0.13,
        hw_kp=(60.0,) * 12,
        hw_kd=(5.0,) * 12,
        torque_limit=(23.7, 23.7, 45.43) * 4,
        joint_limits=_quadruped_limits((-1.0472, 1.0472), (-1.5708, 3.4907), (-0.5236, 4.5379),
                                       (-2.7227, -0.83776)),
        foot_radius=0.022,
    ),
    "h1": _h1_info(),
}
