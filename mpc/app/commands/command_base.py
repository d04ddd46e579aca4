"""Velocity commands and where they come from.

A command is a body-frame twist set-point c = (v_x, v_y, ω_z): forward and sideways speed of
the base (m/s, x forward, y left) and yaw rate (rad/s, counter-clockwise), stamped with the
plant time at which its source last heard from whoever commands (an operator's stick, a
keyboard, lab software). A :class:`CommandSource` is polled with the plant time as an explicit
argument, so a run in lockstep is deterministic; :class:`mpc.app.commands.filter.CommandFilter`
turns the raw commands into the one the task tracks (limits, dead-man decay).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class VelocityCommand:
    """A body-frame twist set-point and the plant time (s) its source last got it."""

    vx: float
    vy: float
    yaw_rate: float
    stamp: float

    def as_array(self) -> np.ndarray:
        """(v_x, v_y, ω_z)."""
        return np.array((self.vx, self.vy, self.yaw_rate))


class CommandSource(ABC):
    """Where velocity commands come from. Subclasses take their options as keyword arguments
    (checked against a config's ``command.source`` section) and, when they read a plant
    (the Unitree remote), the plant as ``plant``."""

    #: Name in :data:`mpc.app.commands.COMMAND_SOURCES`.
    name: str = ""

    @classmethod  # noqa: B027
    def check_options(cls, options: dict) -> None:
        """Raise ValueError (one line) if ``options`` cannot work; nothing is opened."""

    @classmethod
    def build(cls, options: dict, plant) -> CommandSource:
        """The source for a run on ``plant`` (sources that read the plant override this)."""
        return cls(**options)

    @abstractmethod
    def read(self, time: float) -> VelocityCommand | None:
        """The latest command at plant time ``time``, or None if there has never been one.
        A stale command keeps its old stamp; the filter's dead-man rule decides."""

    def stats(self) -> dict:
        """What the source counted (messages refused by reason), for the run's summary."""
        return {}

    def on_key(self, keycode: int) -> None:  # noqa: B027
        """A key pressed in the viewer (GLFW key code; called from the viewer's thread)."""

    def close(self) -> None:  # noqa: B027
        """Release what the source holds (sockets, subscriptions)."""
