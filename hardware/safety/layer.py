"""The safety layer: what may reach a motor, and when a run must end in damping.

Configured by the ``safety:`` section of a run config (:class:`SafetyConfig`, every field
optional). Hardware bridges apply all of it; :class:`hardware.safety.safe_plant.SafePlant`
applies the parts that make sense to any plant, simulated ones included.

- guards: a non-finite control is never sent (the plant goes to damping); joint targets,
  velocity targets, torques and gains are clamped to the robot's physical limits
  (:mod:`robots.limits`) and to the configured maxima, every clamp logged (rate-limited) and
  counted; :func:`clamp_command` is the last guard before the wire;
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

from hardware.lowlevel import MODE_OFF, POS_STOP, REMOTE_BUTTONS, VEL_STOP, MotorCommand
from hardware.rotations import euler_zyx
from robots.info import RobotInfo
from robots.limits import joint_limits

log = logging.getLogger(__name__)


@dataclass
class SafetyConfig:
    """Limits, timeouts and switches of the safety layer (units: s, rad, rad/s, N m)."""

    #: Bounds of the options, read by mpc.app.schema.check_kwargs (see mpc/app/schema.py).
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
    #: ``state_timeout`` allows (docs/reliability.md, Stale commands).
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


class CommandLimits:
    """What may leave for the motors, per motor slot, fixed for a run.

    ``lo``/``hi`` are two (5, slots) arrays bounding q, dq, tau, Kp and Kd: position targets in
    the joint range, velocity targets within +-``max_target_speed``, torques within the motor
    limits, gains within [0, ``max_kp``] and [0, ``max_kd``], each also within what the wire
    can carry (``wire``: the largest |tau|, Kp and Kd the message's fields hold; None for float
    fields). ``used`` marks the slots the robot has, ``servo_mode`` the mode that servos each,
    ``damping`` the safe state of one slot (q off, dq 0, tau 0, Kp 0, Kd ``damping_kd``).
    Every bound is finite (ValueError otherwise)."""

    def __init__(self, used: np.ndarray, servo_mode: np.ndarray, lower: np.ndarray,
                 upper: np.ndarray, torque_limit: np.ndarray, cfg: SafetyConfig,
                 wire: tuple[float, float, float] | None = None):
        n = len(lower)
        tau_wire, kp_wire, kd_wire = wire or (math.inf, math.inf, math.inf)
        speed = np.full(n, cfg.max_target_speed)
        torque = np.minimum(torque_limit, tau_wire)
        kp, kd = min(cfg.max_kp, kp_wire), min(cfg.max_kd, kd_wire)
        self.used = np.zeros(n, bool)
        self.used[used] = True
        self.servo_mode = np.asarray(servo_mode, np.uint8)
        self.lo = np.array([lower, -speed, -torque, np.zeros(n), np.zeros(n)], dtype=float)
        self.hi = np.array([upper, speed, torque, np.full(n, kp), np.full(n, kd)], dtype=float)
        self.damping = np.array([POS_STOP, 0.0, 0.0, 0.0, min(cfg.damping_kd, kd)])
        if not (np.isfinite(self.lo).all() and np.isfinite(self.hi).all()):
            raise ValueError("command limits must be finite")


#: One slot switched off: both terms off, no torque, no gains.
_SLOT_OFF = np.array([POS_STOP, VEL_STOP, 0.0, 0.0, 0.0])


def clamp_command(cmd: MotorCommand, limits: CommandLimits, clamps: ClampLog) -> MotorCommand:
    """``cmd`` made fit for the motors: the last guard before the wire.

    Per slot the robot uses:

    - a slot with a non-finite value or a mode other than off or its servo mode is put in the
      safe state, ``limits.damping`` in its servo mode;
    - q equal to ``POS_STOP`` exactly is an explicit "position term off": it passes, with Kp 0;
      any other q is clipped to the joint range (a huge q does not pass as "off");
    - dq equal to ``VEL_STOP`` exactly likewise turns the velocity term off, with Kd 0; any
      other dq is clipped to +-``max_target_speed``;
    - tau, Kp and Kd are clipped to their bounds.

    Slots the robot does not use are switched off (mode off, both sentinels, zeros). So what
    leaves is finite, within ``limits``, and carries a sentinel only where the command asked
    for one or a slot was damped. Every change is noted per quantity. Runs at the command rate:
    a handful of whole-array operations."""
    values = np.array([cmd.q, cmd.dq, cmd.tau, cmd.kp, cmd.kd], dtype=float)
    mode = np.asarray(cmd.mode).astype(np.uint8)
    off_q, off_dq = values[0] == POS_STOP, values[1] == VEL_STOP
    finite = np.isfinite(values).all(axis=0)
    bad = limits.used & ~(finite & ((mode == MODE_OFF) | (mode == limits.servo_mode)))
    with np.errstate(invalid="ignore"):
        out = np.minimum(np.maximum(values, limits.lo), limits.hi)
    out[0, off_q], out[3, off_q] = POS_STOP, 0.0
    out[1, off_dq], out[4, off_dq] = VEL_STOP, 0.0
    out[:, bad] = limits.damping[:, None]
    out[:, ~limits.used] = _SLOT_OFF[:, None]
    mode_out = np.where(limits.used, np.where(bad, limits.servo_mode, mode), MODE_OFF)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        clamps.note("non-finite or invalid slot", int(bad.sum()),
                    f"slot {i} (mode {mode[i]}, q {values[0, i]:.4g}, dq {values[1, i]:.4g}, "
                    f"tau {values[2, i]:.4g}, Kp {values[3, i]:.4g}, Kd {values[4, i]:.4g}) "
                    f"damped")
    changed = (out != values) & limits.used & ~bad
    if changed.any():
        for k in np.flatnonzero(changed.any(axis=1)):
            i = int(np.flatnonzero(changed[k])[0])
            clamps.note(_CLAMPED[k], int(changed[k].sum()),
                        f"slot {i}: {values[k, i]:.4g} -> {out[k, i]:.4g}")
    return MotorCommand(mode_out.astype(np.uint8), out[0], out[1], out[2], out[3], out[4])


@dataclass(frozen=True)
class JointLimits:
    """Bounds of a joint-level command (a target q with gains Kp, Kd, and a torque tau) per
    joint of a model (actuator order): the robot's physical joint range and torque
    (:func:`robots.limits.joint_limits`), [0, ``max_kp``], [0, ``max_kd``]. For plants that
    send such commands themselves (LCM; their velocity targets are 0) and for the clamp of a
    plant's controls (:class:`hardware.safety.safe_plant.SafePlant`)."""

    lower: np.ndarray
    upper: np.ndarray
    torque: np.ndarray
    kp: np.ndarray
    kd: np.ndarray

    @classmethod
    def of(cls, robot: RobotInfo, model, cfg: SafetyConfig) -> JointLimits:
        """The limits of ``model``'s actuated joints."""
        joints = [model.joint(j).name for j in model.actuator_trnid[:, 0]]
        lower, upper, torque = joint_limits(robot, model, joints)
        n = len(joints)
        return cls(lower, upper, torque, np.full(n, cfg.max_kp), np.full(n, cfg.max_kd))


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
