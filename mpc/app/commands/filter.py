"""The command the task tracks: the source's command, limited, ramped and dead-man checked.

Per axis k of c = (v_x, v_y, ω_z), at plant time t with the previous update at t⁻:

    target_k = clip(c_k, −c̄_k, c̄_k)   if the source's command is finite and t − stamp ≤ T
             = 0                       otherwise (dead man: no fresh command for T seconds)
    ĉ_k(t)  = ĉ_k(t⁻) + clip(target_k − ĉ_k(t⁻), −a_k (t − t⁻), a_k (t − t⁻))

with c̄ the speed limits, a the acceleration limits and T the dead-man timeout. So the tracked
command never exceeds the limits, never changes faster than a allows (a step on the remote
becomes a ramp), and a silent source brings the robot to a stop at the deceleration limit.
Time is an argument, never read from a clock.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from mpc.app.commands.command_base import VelocityCommand

log = logging.getLogger(__name__)


class CommandFilter:
    """Speed and acceleration limits and the dead-man rule on a stream of commands."""

    def __init__(self, max_speed: Sequence[float], max_accel: Sequence[float],
                 timeout: float):
        self.max_speed = np.asarray(max_speed, dtype=float)
        self.max_accel = np.asarray(max_accel, dtype=float)
        self.timeout = float(timeout)
        if (self.max_speed.shape != (3,) or self.max_accel.shape != (3,)
                or np.any(self.max_speed < 0) or np.any(self.max_accel <= 0)
                or not self.timeout > 0):
            raise ValueError("command limits: max_speed needs 3 values >= 0, max_accel 3 "
                             "values > 0 (vx, vy, yaw rate), timeout > 0")
        #: The filtered command ĉ (v_x, v_y, ω_z).
        self.value = np.zeros(3)
        #: Whether the dead-man rule holds the target at zero.
        self.stale = True
        self._time: float | None = None

    def update(self, time: float, command: VelocityCommand | None) -> np.ndarray:
        """The filtered command (v_x, v_y, ω_z) at plant time ``time``."""
        fresh = (command is not None and time - command.stamp <= self.timeout
                 and np.all(np.isfinite(command.as_array())))
        if fresh != (not self.stale) and self._time is not None:
            if fresh:
                log.info("velocity command: source fresh at t=%.3f s", time)
            else:
                log.warning("velocity command: no fresh command for %.2f s at t=%.3f s: "
                            "decaying to zero", self.timeout, time)
        self.stale = not fresh
        target = (np.clip(command.as_array(), -self.max_speed, self.max_speed) if fresh
                  else np.zeros(3))
        dt = 0.0 if self._time is None else max(0.0, time - self._time)
        self._time = time
        step = self.max_accel * dt
        self.value = self.value + np.clip(target - self.value, -step, step)
        return self.value.copy()
