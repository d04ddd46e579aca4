"""Where the floating-base state comes from on hardware.

A Unitree robot's low-level state carries joint encoders and an IMU but no base position or
linear velocity, which the planner needs (qpos[0:3], qvel[0:3]). A :class:`BaseStateSource`
supplies them: from the IMU and stance legs in a Kalman filter, from motion capture fused with
the IMU and encoders, from leg odometry, or, in tests only, from a fake robot's simulated truth.

Conventions are MuJoCo's free joint: position and quaternion (w, x, y, z) in the world frame,
linear velocity in the world frame, angular velocity in the body frame.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

#: Where the leg estimators (kalman, leg_odometry) take the ground to be, their option
#: ``ground``: ``level``, the flat floor at 0 that fixes the base height (the default);
#: ``carried``, no floor: the height carried from foothold to foothold (blind terrain).
GROUNDS = ("level", "carried")

@dataclass(frozen=True)
class ImuSample:
    """One IMU reading: orientation quaternion (w, x, y, z), gyro and accelerometer in the
    body frame."""

    time: float
    quat: np.ndarray
    gyro: np.ndarray
    accel: np.ndarray


@dataclass(frozen=True)
class BaseState:
    """Base pose (pos, quat) and twist (world linear velocity, body angular velocity)."""

    time: float
    pos: np.ndarray
    quat: np.ndarray
    linvel: np.ndarray
    angvel: np.ndarray


class BaseStateSource(ABC):
    """Estimates the base state from the robot's own sensors and any external input."""

    @abstractmethod
    def update(self, imu: ImuSample, joint_q: np.ndarray, joint_dq: np.ndarray) -> None:
        """Feed one low-level state (joint order of the model's actuated joints)."""

    def observe_feet(self, foot_force: np.ndarray) -> None:  # noqa: B027
        """The foot-force readings (robot foot order) that go with the next :meth:`update`;
        sources that do not use them ignore them."""

    def set_planned_stance(self, stance: np.ndarray | None) -> None:  # noqa: B027
        """Which feet (bool, robot foot order) the planner's gait schedule wants down now
        (None: no schedule); sources with a contact belief take it as a prior."""

    @abstractmethod
    def estimate(self) -> BaseState | None:
        """The current estimate, or None before the first complete one."""

    def health(self) -> dict[str, float]:
        """Figures the safety layer may trip on (e.g. age of the last mocap pose, dropouts)."""
        return {}

    def close(self) -> None:  # noqa: B027
        """Release sockets or threads."""
