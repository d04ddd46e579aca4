"""Drive a simulated robot from the MuJoCo viewer's keyboard (``mpc-run ... --viewer``).

Keys (GLFW codes, as the viewer's ``key_callback`` passes them) step a latched set-point:

    Up / Down            v_x  ± ``step`` m/s
    Page Up / Page Down  v_y  ± ``step`` m/s (left / right)
    Left / Right         ω_z  ± ``turn_step`` rad/s (counter-clockwise / clockwise)
    End                  all zero

The set-point counts as fresh while the viewer is alive (it calls :meth:`heartbeat` every
tick, about every 50 ms of wall time); a frozen or closed viewer stops refreshing it and the
command filter's dead-man rule brings the robot to a stop. Without a viewer nothing ever
refreshes it, so the robot stands.
"""

from __future__ import annotations

import threading
import time as _time

import numpy as np

from mpc.app.commands.command_base import CommandSource, VelocityCommand

KEY_UP, KEY_DOWN, KEY_LEFT, KEY_RIGHT = 265, 264, 263, 262
KEY_PAGE_UP, KEY_PAGE_DOWN, KEY_END = 266, 267, 269
#: How long (s of wall time) a heartbeat keeps the set-point fresh.
HEARTBEAT_S = 0.2


class KeyboardCommand(CommandSource):
    name = "keyboard"

    def __init__(self, step: float = 0.1, turn_step: float = 0.2):
        if not (step > 0 and turn_step > 0):
            raise ValueError("command.source: step and turn_step must be > 0")
        self.step = float(step)
        self.turn_step = float(turn_step)
        self._setpoint = np.zeros(3)
        self._alive_until = -np.inf
        self._last_fresh = -np.inf
        self._lock = threading.Lock()

    @classmethod
    def check_options(cls, options: dict) -> None:
        cls(**options)

    def on_key(self, keycode: int) -> None:
        deltas = {KEY_UP: (0, self.step), KEY_DOWN: (0, -self.step),
                  KEY_PAGE_UP: (1, self.step), KEY_PAGE_DOWN: (1, -self.step),
                  KEY_LEFT: (2, self.turn_step), KEY_RIGHT: (2, -self.turn_step)}
        with self._lock:
            if keycode == KEY_END:
                self._setpoint[:] = 0.0
            elif keycode in deltas:
                axis, delta = deltas[keycode]
                self._setpoint[axis] = round(self._setpoint[axis] + delta, 6)

    def heartbeat(self) -> None:
        """The viewer is alive (wall clock)."""
        with self._lock:
            self._alive_until = _time.monotonic() + HEARTBEAT_S

    def read(self, time: float) -> VelocityCommand | None:
        with self._lock:
            if _time.monotonic() <= self._alive_until:
                self._last_fresh = time
            if not np.isfinite(self._last_fresh):
                return None
            vx, vy, wz = self._setpoint
            return VelocityCommand(float(vx), float(vy), float(wz), self._last_fresh)
