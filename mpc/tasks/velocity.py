"""The reference pose a velocity-mode task follows, integrated from the command.

With the command ĉ = (ĉ_x, ĉ_y, ĉ_ω) set at plan time t_u and the base's yaw ψ there, the
reference over the plan's horizon is

    g(t) = p_ref + R(ψ) (ĉ_x, ĉ_y) (t − t_u)         (position, world xy)
    θ(t) = θ_ref + ĉ_ω (t − t_u)                      (heading, for tasks that have one)

and at the next plan (p_ref, θ_ref) ← (g(t), θ(t)), kept within ``lead`` metres of the base's
position and ``lead_angle`` radians of its yaw: a robot that lags is pulled along by a bounded
error, never dragged by an error that grew while it could not follow. At zero command the
reference stands still, which holds the robot in place.
"""

from __future__ import annotations

import numpy as np

from mpc.tasks.task_base import base_yaw, wrap_angle

#: Bounds of the velocity-mode options every task with a velocity mode takes (``lead`` and
#: the :class:`~mpc.tasks.gait.SpeedGait` figures), for the tasks' RANGES.
VELOCITY_MODE_RANGES: dict[str, dict[str, float]] = {
    "lead": {"gt": 0.0, "max": 2.0},
    "cadence_gain": {"min": 0.0, "max": 20.0},
    "max_cadence": {"gt": 0.0, "max": 10.0},
    "lift_gain": {"min": 0.0, "max": 1.0},
    "max_lift": {"min": 0.0, "max": 0.5},
    "hip_radius": {"min": 0.0, "max": 2.0},
    "stand_speed": {"min": 0.0, "max": 1.0},
}


class VelocityMode:
    """What a task with a velocity mode adds to :class:`~mpc.tasks.task_base.Task`: it keeps
    its ``mode`` ("goal" or "velocity") and the command it tracks, ``_command`` (v_x, v_y, ω_z);
    list it before ``Task`` among the bases so that these replace the base's defaults."""

    name: str
    mode: str
    _command: np.ndarray

    @property
    def velocity_mode(self) -> bool:
        return self.mode == "velocity"

    @property
    def command(self) -> np.ndarray | None:
        return self._command.copy() if self.velocity_mode else None

    def set_command(self, command) -> None:
        if not self.velocity_mode:
            raise NotImplementedError(f"task {self.name} is in {self.mode} mode")
        self._command = np.asarray(command, dtype=float).copy()


class VelocityReference:
    """(p_ref, θ_ref) advanced by the command from plan to plan."""

    def __init__(self, lead: float, lead_angle: float = 0.3):
        self.lead = float(lead)
        self.lead_angle = float(lead_angle)
        self.position0: np.ndarray | None = None  # p_ref
        self.heading0 = 0.0                       # θ_ref
        self.velocity = np.zeros(2)               # R(ψ) (ĉ_x, ĉ_y)
        self.yaw_rate = 0.0                       # ĉ_ω
        self.time0 = 0.0                          # t_u

    def advance(self, time: float, qpos: np.ndarray, command: np.ndarray) -> None:
        """Move the reference to plan time ``time`` and take the new ``command``."""
        xy = np.asarray(qpos[:2], dtype=float)
        yaw = base_yaw(qpos)
        if self.position0 is None:
            self.position0, self.heading0 = xy.copy(), yaw
        else:
            self.position0, self.heading0 = self.position(time), float(self.heading(time))
        self.position0 = clamp_distance(self.position0, xy, self.lead)
        self.heading0 = clamp_angle(self.heading0, yaw, self.lead_angle)
        c, s = np.cos(yaw), np.sin(yaw)
        self.velocity = np.array(((c, -s), (s, c))) @ np.asarray(command[:2], dtype=float)
        self.yaw_rate = float(command[2])
        self.time0 = float(time)

    def position(self, time) -> np.ndarray:
        """g (..., 2) at times (...)."""
        return self.position0 + self.velocity * (np.asarray(time)[..., None] - self.time0)

    def heading(self, time) -> np.ndarray:
        """θ (...) at times (...)."""
        return self.heading0 + self.yaw_rate * (np.asarray(time) - self.time0)


def clamp_distance(point: np.ndarray, center: np.ndarray, radius: float) -> np.ndarray:
    """``point`` moved straight toward ``center`` until it is at most ``radius`` from it."""
    offset = point - center
    dist = float(np.linalg.norm(offset))
    return center + offset * (radius / dist) if dist > radius else point


def clamp_angle(angle: float, center: float, limit: float) -> float:
    """``angle`` (radians) turned toward ``center`` the short way round until it is at most
    ``limit`` from it: center + clip(wrap(angle − center), −limit, limit)."""
    return center + float(np.clip(wrap_angle(angle - center), -limit, limit))
