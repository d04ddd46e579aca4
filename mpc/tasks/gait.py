"""Gait schedules for legged robots: a phase clock and per-foot step-height targets.

The phase advances as φ(t) = φ₀ + 2π f (t − t₀) with cadence f (Hz); changing the cadence
re-anchors (φ₀, t₀) so φ stays continuous. Foot i with phase offset oᵢ (fraction of a cycle)
is in swing during a fraction 1 − duty of the cycle, centred on φ = 2π oᵢ, where its target
lift follows a half cosine of height ``amplitude``; in stance the target is zero.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Gait:
    """Foot phase offsets (fractions of a cycle, in the task's foot order) and timing."""

    name: str
    offsets: tuple[float, ...]
    duty: float
    cadence: float
    amplitude: float


# Quadruped gaits, feet ordered (FL, RL, FR, RR); MJPC's published gait table.
QUADRUPED_GAITS: dict[str, Gait] = {
    "stand": Gait("stand", (0.0, 0.0, 0.0, 0.0), 1.0, 1.0, 0.0),
    "walk": Gait("walk", (0.0, 0.75, 0.5, 0.25), 0.75, 1.0, 0.03),
    "trot": Gait("trot", (0.0, 0.5, 0.5, 0.0), 0.45, 2.0, 0.03),
    "canter": Gait("canter", (0.0, 0.33, 0.33, 0.66), 0.4, 4.0, 0.05),
    "gallop": Gait("gallop", (0.0, 0.4, 0.05, 0.35), 0.3, 3.5, 0.10),
}

# Biped gaits, feet ordered (left, right): the feet alternate half a cycle apart, with double
# support for duty − 0.5 of the cycle after each step. Starting values for a humanoid; a task
# may override duty, cadence and amplitude.
BIPED_GAITS: dict[str, Gait] = {
    "stand": Gait("stand", (0.0, 0.0), 1.0, 1.0, 0.0),
    "trot": Gait("trot", (0.0, 0.5), 0.6, 1.5, 0.08),
}


def step_height(phase: np.ndarray, offsets: np.ndarray, duty: float,
                amplitude: float) -> np.ndarray:
    """Target lift (..., nfeet) of each foot at gait phase ``phase`` (...,) in radians."""
    if duty >= 1.0 or amplitude == 0.0:
        return np.zeros((*np.shape(phase), len(offsets)))
    angle = _swing_angle(phase, offsets, duty)
    lift = np.cos(np.clip(angle, -np.pi / 2, np.pi / 2))
    return amplitude * np.where(np.abs(lift) < 1e-6, 0.0, lift)


class GaitClock:
    """Phase clock that stays continuous when the cadence changes."""

    def __init__(self, cadence: float, time: float = 0.0):
        self._phase0 = 0.0
        self._time0 = time
        self._velocity = 2 * np.pi * cadence

    def set_cadence(self, cadence: float, time: float) -> None:
        velocity = 2 * np.pi * cadence
        if velocity != self._velocity:
            self._phase0 = float(self.phase(time))
            self._time0 = time
            self._velocity = velocity

    def state(self) -> tuple[float, float, float]:
        """What :meth:`phase` depends on besides the time: equal states, equal phases."""
        return self._phase0, self._time0, self._velocity

    def phase(self, time):
        """Phase (radians) at ``time`` (scalar or array)."""
        return self._phase0 + self._velocity * (np.asarray(time) - self._time0)


@dataclass(frozen=True)
class SpeedGait:
    """Gait timing as a function of the commanded speed (velocity mode).

    With the command (v_x, v_y, ω_z) the speed the feet must cover is taken as
    s = |(v_x, v_y)| + r |ω_z|, r the distance from the base centre to the hips (turning in
    place moves the feet on a circle of about that radius). Then

        cadence   f(s) = min(f₀ + k_f s, f_max)
        lift      a(s) = min(a₀ + k_a s, a_max)
        duty      the gait's own;  below s_stand: duty 1, lift 0 (stand on all feet)

    Why: a foot in stance travels d = s · duty / f relative to the body per step. At the base
    cadence f₀ that grows linearly with s and soon leaves the leg's workspace; raising the
    cadence with speed keeps d bounded (d → duty / k_f as s grows), as animals and the robots'
    own controllers do. A faster, longer swing needs more clearance to clear the ground, hence
    the lift grows too. At zero command the robot stands: four (two) feet on the ground hold
    position far better than stepping in place.
    """

    cadence_gain: float = 1.0
    max_cadence: float = 3.5
    lift_gain: float = 0.03
    max_lift: float = 0.08
    stand_speed: float = 0.05
    hip_radius: float = 0.25

    def speed(self, command: np.ndarray) -> float:
        """s of a command (v_x, v_y, ω_z)."""
        return float(np.hypot(command[0], command[1]) + self.hip_radius * abs(command[2]))

    def timing(self, gait: Gait, command: np.ndarray) -> tuple[float, float, float]:
        """(duty, cadence, lift) for ``gait`` at ``command``."""
        s = self.speed(command)
        if s < self.stand_speed:
            return 1.0, gait.cadence, 0.0
        return (gait.duty, min(gait.cadence + self.cadence_gain * s, self.max_cadence),
                min(gait.amplitude + self.lift_gain * s, self.max_lift))


def swing_phase(phase: np.ndarray, offsets: np.ndarray, duty: float) -> np.ndarray:
    """Where each foot is in its swing (..., nfeet) at gait phase ``phase`` (...,) in radians:
    s ∈ [0, 1] from lift-off to touchdown over the swing window of :func:`step_height`, NaN in
    stance (and everywhere when ``duty`` ≥ 1)."""
    if duty >= 1.0:
        return np.full((*np.shape(phase), len(offsets)), np.nan)
    s = _swing_angle(phase, offsets, duty) / np.pi + 0.5
    return np.where((s >= 0.0) & (s <= 1.0), s, np.nan)


def _swing_angle(phase: np.ndarray, offsets: np.ndarray, duty: float) -> np.ndarray:
    """Each foot's phase (..., nfeet) relative to the middle of its swing, wrapped to (−π, π]
    and scaled so that the swing window spans [−π/2, π/2]."""
    angle = np.mod(np.asarray(phase)[..., None] + np.pi - 2 * np.pi * np.asarray(offsets),
                   2 * np.pi) - np.pi
    return angle * (0.5 / (1.0 - duty))
