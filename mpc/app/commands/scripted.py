"""A scripted command profile from the config, for tests and benchmarks.

``profile`` is a list of rows [t, v_x, v_y, ω_z]: from time t (s since the run's start, the
clock commands run on) the command is (v_x, v_y, ω_z) until the next row's time; before the
first row it is zero.
Steps are fine: the command filter's acceleration limits ramp them. The source is always
fresh (its stamp is the time it is read at).
"""

from __future__ import annotations

import numpy as np

from mpc.app.commands.command_base import CommandSource, VelocityCommand


class ScriptedCommand(CommandSource):
    name = "scripted"

    def __init__(self, profile: list):
        rows = np.asarray(profile, dtype=float) if len(profile) else np.zeros((0, 4))
        if rows.ndim != 2 or rows.shape[1] != 4 or len(rows) == 0:
            raise ValueError("command.source.profile must be a non-empty list of "
                             "[t, vx, vy, yaw_rate] rows")
        if not np.all(np.isfinite(rows)) or np.any(np.diff(rows[:, 0]) <= 0):
            raise ValueError("command.source.profile: times must increase and all values be "
                             "finite")
        self.rows = rows

    @classmethod
    def check_options(cls, options: dict) -> None:
        cls(**options)

    def read(self, time: float) -> VelocityCommand:
        i = int(np.searchsorted(self.rows[:, 0], time + 1e-9, side="right")) - 1
        vx, vy, wz = self.rows[i, 1:] if i >= 0 else (0.0, 0.0, 0.0)
        return VelocityCommand(float(vx), float(vy), float(wz), time)
