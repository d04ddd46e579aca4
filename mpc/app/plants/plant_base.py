"""The plant interface: what the runtime loops talk to, simulated or real.

A plant reports the measured state in MuJoCo's conventions (qpos with the base quaternion,
qvel with the base linear velocity in the world frame and angular velocity in the body frame)
and accepts controls in the model's actuator order (joint-angle targets for position-actuated
models, torques for motor actuators). Hardware plants map to motor order themselves.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import mujoco
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
    #: Why the plant is in damping (latched by :meth:`damp`), or None.
    damping_reason: str | None = None
    #: The signal (``"SIGINT"``, ``"SIGTERM"``) that a process of the plant's own got and
    #: damped for (a robot's link process: a terminal's Ctrl-C reaches it too), or None: the
    #: run then ends as if interrupted by that signal.
    interrupted_by: str | None = None
    #: The simulation's MuJoCo model (None for a real robot): what a viewer can show.
    model: mujoco.MjModel | None = None
    #: Options of the ``safety:`` section this plant applies itself when the safety layer's
    #: wrapper wraps it (:meth:`apply_safety`; the wrapper applies its own). A plant that takes
    #: a ``safety`` argument applies the whole section and needs none of this.
    SAFETY_APPLIED: ClassVar[frozenset[str]] = frozenset()
    #: Options of the ``safety:`` section that neither this plant nor the wrapper applies,
    #: with where that protection lives instead (the config refuses them; see
    #: ``hardware/safety/envelope.py``).
    SAFETY_ELSEWHERE: ClassVar[dict[str, str]] = {}

    @classmethod
    def simulated_robot(cls, options: dict) -> str | None:
        """Why the robot that ``options`` reach can only be a simulation (a simulated plant; a
        fake robot at a loopback address), or None when a real robot may be at the other end.
        The safety envelope refuses values only where it may be real."""
        return None if cls.realtime_only else "a simulated plant"

    def apply_safety(self, safety: Any) -> None:  # noqa: B027
        """Apply the options in :attr:`SAFETY_APPLIED` of ``safety`` (the safety layer's
        config), called by the layer's wrapper before :meth:`prepare`. Most plants apply
        none."""

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

    @classmethod
    def steps_on_request(cls, options: dict) -> bool:
        """Whether the plant that ``options`` (its config section) describe advances only
        when :meth:`step` asks: a simulation, or a simulated robot behind a link that steps on
        request. Only such a plant can run in lockstep: with one on its own clock the feedback
        law would run in the planner's thread, several updates back to back after each plan
        and none during an iteration."""
        return not cls.realtime_only

    @staticmethod  # noqa: B027
    def check_options(robot: str, options: dict) -> None:
        """Check the config's plant options beyond their types (addresses, a network
        interface); ValueError or OSError with a one-line reason. Most plants need nothing."""

    def prepare(self) -> None:  # noqa: B027
        """Called once before the control loop starts (hardware: connect, wait for state,
        ramp to the home pose). Simulated plants need nothing."""

    def step(self) -> None:  # noqa: B027
        """Advance a simulated plant by one timestep (hardware plants do nothing)."""

    def foot_contacts(self) -> np.ndarray | None:
        """Which feet touch the ground (task foot order), or None if the plant cannot tell."""
        return None

    def set_planned_stance(self, stance: np.ndarray | None) -> None:  # noqa: B027
        """Which feet (bool, task foot order) the gait schedule of the policy in force wants
        down now, or None; a plant that estimates its base state hands it to its estimator
        as the contact prior. Others ignore it."""

    def state_age(self) -> float:
        """Seconds since the state that the calling thread read last (:meth:`read_state`)
        arrived on this computer, NaN if it read none: a command computed from it is that old.
        A simulation stepped by the run returns 0 (its states are never late)."""
        return 0.0

    def stats(self) -> dict:
        """What the plant counted (a robot link: states accepted, messages refused by reason,
        commands, clamps), for the run's summary; read after :meth:`close` it covers the whole
        run. Empty unless the plant counts something."""
        return {}

    def actuator_forces(self) -> np.ndarray | None:
        """Each actuator's force (N m, planning-model order) at the last step, or None if
        the plant cannot tell."""
        return None

    def copy_state(self, dest: mujoco.MjData) -> None:
        """Copy a simulation's time, state and controls into ``dest`` (an MjData of
        :attr:`model`) without touching the plant's own data from another thread."""
        raise NotImplementedError(f"{type(self).__name__} is not a simulation")

    @property
    def timestep(self) -> float:
        """Step of a simulated plant in seconds (hardware: its nominal state period)."""
        return 0.002
