"""Two thumb sticks as a velocity command: what the Unitree remote and gamepads share.

Each stick axis ``a`` in [-1, 1] passes a dead band ``d``,
``dz(a) = sign(a) max(|a| - d, 0) / (1 - d)``, zero near the centre and again reaching ±1 at
full deflection; the source scales the three it uses (forward, sideways, yaw) by ``scale``
(vx, vy in m/s, yaw rate in rad/s at full stick). Sticks drive only once they have been seen
centred (:class:`Arming`): a stick held off centre at the start, or a pad or remote picked up
with a thumb on a stick, commands nothing until it is let go.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np


def dead_band(a: float, d: float) -> float:
    """dz(a): zero within ``d`` of centre, then rescaled to reach ±1 at full deflection."""
    return float(np.sign(a) * max(abs(a) - d, 0.0) / (1.0 - d))


def check_stick_options(options: dict) -> None:
    """ValueError naming the key unless ``scale`` is three values >= 0 and ``dead_band`` in
    [0, 1)."""
    scale = np.asarray(options.get("scale", (1.0, 0.5, 1.0)), dtype=float)
    if scale.shape != (3,) or np.any(scale < 0) or not np.all(np.isfinite(scale)):
        raise ValueError("command.source.scale needs 3 values >= 0 (vx, vy, yaw rate at "
                         "full stick)")
    if not 0.0 <= float(options.get("dead_band", 0.08)) < 1.0:
        raise ValueError("command.source.dead_band must be in [0, 1)")


class Arming:
    """Whether the sticks may drive: once all of them have been seen centred (after the dead
    band), until :meth:`disarm`. The first refusal is logged once, as ``what``'s."""

    def __init__(self, what: str, log: logging.Logger):
        self.what = what
        self.log = log
        self.armed = False
        self._warned = False

    def __call__(self, sticks: Sequence[float]) -> bool:
        if not self.armed:
            self.armed = not any(sticks)
            if not self.armed and not self._warned:
                self._warned = True
                self.log.warning("%s: a stick is off centre; centre the sticks to drive",
                                 self.what)
        return self.armed

    def disarm(self) -> None:
        self.armed = False
