"""The plant interface: what the runtime loops talk to, simulated or real.

A plant reports the measured state in MuJoCo's conventions (qpos with the base quaternion,
qvel with the base linear velocity in the world frame and angular velocity in the body frame)
and accepts controls in the model's actuator order (joint-angle targets for position-actuated
models, torques for motor actuators). Hardware plants map to motor order themselves.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PlantState:
    """A measured state. ``time`` is the plant's clock in seconds."""

    time: float
    qpos: np.ndarray
    qvel: np.ndarray
    act: np.ndarray


class Plant(ABC):
    """A simulated or real robot."""

    #: Whether the plant advances on its own clock (hardware) or by :meth:`step` (simulation).
    realtime_only: bool = False

    @abstractmethod
    def read_state(self) -> PlantState:
        """The latest measured state."""

    @abstractmethod
    def send(self, ctrl: np.ndarray) -> None:
        """Apply ``ctrl`` (model actuator order) until the next call."""

    @abstractmethod
    def close(self) -> None:
        """Stop and release the plant; a hardware plant leaves the robot in damping."""

    @abstractmethod
    def damp(self, reason: str) -> None:
        """Enter the safe state (motor damping) and log ``reason``; latched: later
        :meth:`send` calls are ignored."""

    def prepare(self) -> None:  # noqa: B027
        """Called once before the control loop starts (hardware: connect, wait for state,
        ramp to the home pose). Simulated plants need nothing."""

    def step(self) -> None:  # noqa: B027
        """Advance a simulated plant by one timestep (hardware plants do nothing)."""

    @property
    def timestep(self) -> float:
        """Step of a simulated plant in seconds (hardware: its nominal state period)."""
        return 0.002
