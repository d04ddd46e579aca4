"""The safety layer: what may reach a motor, and when a run must end in damping.

Configured by the ``safety:`` section of a run config (:class:`SafetyConfig`, every field
optional). Hardware bridges apply all of it; :class:`hardware.safety.safe_plant.SafePlant`
applies the parts that make sense to any plant, simulated ones included.

- guards: a non-finite control is never sent (the plant goes to damping); joint targets,
  velocity targets, torques and gains are clamped to the robot's limits and to the configured
  maxima, and every clamp is logged (rate-limited) and counted;
- trips (each logged with its reason, each ending in damping, latched): stale state (no fresh
  state for ``state_timeout``), a silent controller (no command for ``command_timeout`` once
  commands flowed), a stale command (computed from a state older than ``max_command_age``
  when it would first be sent: refused and counted), roll or pitch beyond ``max_tilt``, a
  joint faster than ``max_joint_speed``, a non-finite measurement, the remote's e-stop
  buttons, SIGINT/SIGTERM;
- the startup ramp (``ramp_time``) from the measured pose to the home pose before MPC starts;
- ``dry_run``: everything is computed and logged, no motion command is sent.
"""

from __future__ import annotations

import logging
import math
import signal
import threading
import time as _time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import ClassVar

import numpy as np

from hardware.rotations import euler_zyx
from hardware.unitree.lowlevel import POS_STOP, REMOTE_BUTTONS, VEL_STOP, MotorCommand

log = logging.getLogger(__name__)


@dataclass
class SafetyConfig:
    """Limits, timeouts and switches of the safety layer (units: s, rad, rad/s, N m)."""

    #: Bounds of the options, read by mpc.schema.check_kwargs (see mpc/schema.py).
    RANGES: ClassVar[dict[str, dict[str, float]]] = {
        "state_timeout": {"min": 0.005, "max": 0.5},
        "command_timeout": {"gt": 0.0, "max": 5.0},
        "max_command_age": {"min": 0.01, "max": 0.5},
        "max_tilt": {"gt": 0.0, "max": math.pi},
        "max_joint_speed": {"gt": 0.0, "max": 100.0},
        "max_target_speed": {"gt": 0.0, "max": 100.0},
        "max_kp": {"min": 0.0, "max": 1000.0},
        "max_kd": {"min": 0.0, "max": 100.0},
        "damping_kd": {"min": 0.0, "max": 100.0},
        "ramp_time": {"min": 0.0, "max": 60.0},
    }

    #: No fresh robot state for this long: damping (20-50 ms).
    state_timeout: float = 0.03
    #: No command from the controller for this long, once commands flowed: damping.
    command_timeout: float = 0.1
    #: A command computed from a state older than this (from the state's arrival to the
    #: command's first send) is refused: damping. A first send normally carries a state at most
    #: one state period (2 ms at 500 Hz) plus one command tick (2 ms) plus the feedback law's
    #: compute (< 1 ms) old; 20 ms is ten state periods, six feedback periods (300 Hz): the
    #: feedback loop missed several updates, and its state is nearly as old as
    #: ``state_timeout`` allows (README, Reliability).
    max_command_age: float = 0.02
    #: Roll or pitch beyond this: damping.
    max_tilt: float = 0.8
    #: A measured joint speed beyond this: damping.
    max_joint_speed: float = 40.0
    #: Velocity targets are clamped to +-this.
    max_target_speed: float = 20.0
    #: Gains are clamped to [0, max].
    max_kp: float = 250.0
    max_kd: float = 10.0
    #: Damping gain of the safe state (Kp 0, tau 0).
    damping_kd: float = 3.0
    #: Duration of the startup ramp from the measured pose to the home pose.
    ramp_time: float = 3.0
    #: Remote buttons that, held together, trip the e-stop.
    estop_buttons: list[str] = field(default_factory=lambda: ["L2", "B"])
    #: Compute and log, send no motion command.
    dry_run: bool = False
    #: Also wrap a simulated plant in the safety layer (hardware plants always are).
    in_simulation: bool = False

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, float) and not (math.isfinite(value) and value >= 0):
                raise ValueError(f"safety.{f.name} must be a finite number >= 0, got {value}")
        if not 0.005 <= self.state_timeout <= 0.5:
            raise ValueError(f"safety.state_timeout must be within 0.005..0.5 s, got "
                             f"{self.state_timeout}")
        unknown = [b for b in self.estop_buttons if b not in REMOTE_BUTTONS]
        if unknown:
            raise ValueError(f"safety.estop_buttons: unknown buttons {unknown}; buttons: "
                             f"{', '.join(REMOTE_BUTTONS)}")


def stale_command_reason(age: float, limit: float) -> str:
    """The damping reason of a command refused for its age (s; NaN: the state it was
    computed from is unknown, e.g. sent by a thread that read none)."""
    if math.isnan(age):
        return "stale command: computed from no known state (read a state before sending)"
    return (f"stale command: computed from a state {age * 1e3:.0f} ms old (limit "
            f"{limit * 1e3:.0f} ms)")


class ClampLog:
    """Counts clamps per quantity and logs them, at most once a second per quantity."""

    def __init__(self, period: float = 1.0):
        self.period = period
        self.counts: dict[str, int] = {}
        self._last: dict[str, float] = {}

    def note(self, what: str, n: int, detail: str) -> None:
        if n == 0:
            return
        self.counts[what] = self.counts.get(what, 0) + n
        now = _time.monotonic()
        if now - self._last.get(what, -math.inf) >= self.period:
            self._last[what] = now
            log.warning("clamped %s: %s (%d clamps so far)", what, detail, self.counts[what])


_CLAMPED = ("joint target", "velocity target", "torque", "Kp", "Kd")
_OFF = np.array([[POS_STOP / 2], [VEL_STOP / 2]])


class CommandLimits:
    """Per-slot bounds of the five command quantities (q, dq, tau, Kp, Kd) as two (5, slots)
    arrays, fixed for a run: position targets in the joint range, velocity targets within
    +-max_target_speed, torques within the motor limits, gains within [0, max]."""

    def __init__(self, lower: np.ndarray, upper: np.ndarray, torque_limit: np.ndarray,
                 cfg: SafetyConfig):
        n = len(lower)
        speed = np.full(n, cfg.max_target_speed)
        self.lo = np.array([lower, -speed, -torque_limit, np.zeros(n), np.zeros(n)])
        self.hi = np.array([upper, speed, torque_limit, np.full(n, cfg.max_kp),
                            np.full(n, cfg.max_kd)])


def clamp_command(cmd: MotorCommand, limits: CommandLimits, clamps: ClampLog) -> MotorCommand:
    """``cmd`` within ``limits`` (the "off" sentinels of q and dq pass untouched); every clamp is
    noted per quantity. Runs at the command rate: a handful of whole-array operations."""
    values = np.array([cmd.q, cmd.dq, cmd.tau, cmd.kp, cmd.kd], dtype=float)
    out = np.minimum(np.maximum(values, limits.lo), limits.hi)
    off = np.abs(values[:2]) >= _OFF
    out[:2][off] = values[:2][off]
    changed = out != values
    if changed.any():
        for k in np.flatnonzero(changed.any(axis=1)):
            i = int(np.flatnonzero(changed[k])[0])
            clamps.note(_CLAMPED[k], int(changed[k].sum()),
                        f"slot {i}: {values[k, i]:.4g} -> {out[k, i]:.4g}")
    return MotorCommand(cmd.mode.copy(), out[0], out[1], out[2], out[3], out[4])


def clamp(values: np.ndarray, lo, hi, what: str, clamps: ClampLog) -> np.ndarray:
    """``values`` clipped to [lo, hi], the clamps noted."""
    values = np.asarray(values, dtype=float)
    out = np.clip(values, lo, hi)
    changed = np.flatnonzero(out != values)
    if changed.size:
        i = changed[0]
        clamps.note(what, changed.size, f"index {i}: {values[i]:.4g} -> {out[i]:.4g}")
    return out


def roll_pitch(quat: np.ndarray) -> tuple[float, float]:
    """Roll and pitch (rad, ZYX Euler angles) of a (w, x, y, z) quaternion."""
    return euler_zyx(quat)[:2]


def tilt_trip(quat: np.ndarray, max_tilt: float) -> str | None:
    """The reason to trip if roll or pitch exceeds ``max_tilt``."""
    roll, pitch = roll_pitch(quat)
    if abs(roll) > max_tilt or abs(pitch) > max_tilt:
        return (f"tilt: roll {math.degrees(roll):.0f} deg, pitch {math.degrees(pitch):.0f} deg "
                f"beyond {math.degrees(max_tilt):.0f} deg")
    return None


def smoothstep(s: float) -> float:
    """0 at s <= 0, 1 at s >= 1, zero slope at both ends."""
    s = min(1.0, max(0.0, s))
    return s * s * (3.0 - 2.0 * s)


def install_estop(damp: Callable[[str], None]) -> None:
    """On SIGINT or SIGTERM: ``damp(reason)`` first, then raise KeyboardInterrupt so the program
    takes its ordinary clean exit. ``damp`` runs in the main thread at whatever point it was
    interrupted, so it must take no lock that thread may hold. Only the main thread can install
    signal handlers; elsewhere (tests driving a plant from a worker thread) this does nothing.
    A signal ignored by whoever started the program (a shell's background job ignores SIGINT)
    stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        return

    def handler(signum, _frame):
        name = signal.Signals(signum).name
        damp(f"e-stop: {name}")
        raise KeyboardInterrupt(name)

    for sig in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(sig) is not signal.SIG_IGN:  # a background job's SIGINT stays so
            signal.signal(sig, handler)
