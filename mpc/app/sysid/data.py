"""A run directory's link log as identification data: one time base, filtered derivatives.

Times. Commands are stamped when they left the controller's link (``cmd_t``); states carry the
robot's own clock (``state_tick``, µs), and their arrival times (``state_t``) add the wire's
jitter. A state's robot time is mapped onto the link's clock by the earliest arrival: within a
sliding window of ``CLOCK_WINDOW`` seconds, offset = min(arrival − tick), the state that came
fastest (a clock that drifts or jumps, a fake robot that fell behind, is followed window by
window). The delay identified is then the whole loop's, from a command leaving the controller
to the encoders reporting its effect: transport, the motor's own, and the sensors' latency.

The link's hiccups. Identification assumes that the motors obey each logged command one
constant delay δ after it left, and that the encoders' readings reach the log in the robot's
time. Where the log shows that assumption broken, the samples that depend on it are left out
(:attr:`RunData.suspect`, :func:`clear_of`):

- a gap in the command stream: departures more than ``GAP`` command periods apart. The link's
  process was held off between them: the command stamped before the gap may have left at any
  moment of it (the stamp is taken before the packet is written), and a gap longer than the
  robot's own command watchdog (the fake robots': 100 ms) puts its motors in damping. Over the
  gap [t₁, t₂] the command in force is unknown.
- a late state: one that arrived more than ``LATE`` after the earliest-arrival mapping says it
  was sent (lag = arrival − (tick + offset)). Either the robot stalled, and then stepped to
  catch up, obeying on its own clock the commands that had queued meanwhile all at once (early
  by up to the stall, against their departures), or the link's process read it late (harmless,
  but not told apart in the log). The stretch [t − period, t] of each late state t.
- a missing state: ticks further apart than 1.5 periods; the encoders are interpolated across.

A sample at t is computed from encoders filtered over t ± the filter's reach and from
commands at t − δ ± that reach, so a span [a, b] leaves out the samples within
[a − reach, b + δ_max + reach] (:func:`clear_of`; the reach is ``REACH`` / cutoff, beyond
which the filter's impulse response holds 1.5 % of its weight). There the regression's
position column, Kp (q*(t − δ) − q(t)), is not the motors' (their q* is another command), and
since q* − q is mostly the joint's lag behind its command, even a few milliseconds of it wrong
move the gains and armature by tens of percent: on a Go1 gantry run over a loaded loopback
(gaps up to 172 ms), 17 figures came out beyond 10 % of the truth without this and none with
it, 29 % of the samples kept (docs/sysid.md).

Filtering. Joint angles (encoders) are resampled on a uniform grid at the state period and
low-passed at ``cutoff`` Hz forward and backward (4th-order Butterworth, no phase lag); speeds
and accelerations are their central differences. Every signal that enters the identification's
regression is filtered by the same filter ("parallel filtering"): the commands, held between
arrivals as the motors hold them, on a grid 4 times finer, so that a command's time can be
shifted by any delay (:meth:`Commands.at`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml
from scipy.ndimage import minimum_filter1d
from scipy.signal import butter, sosfiltfilt

import robots
from common import yamlfile
from mpc.app.errors import UserError
from mpc.app.record import link_log
from mpc.app.record.reader import robot_name
from robots.info import RobotInfo

#: Window (s) of the earliest-arrival clock mapping.
CLOCK_WINDOW = 1.0
#: Low-pass cutoff (Hz) of the identification's signals.
CUTOFF = 25.0
#: The commands' grid is this many times finer than the states'.
FINE = 4
#: A gap in the command stream: departures more than this many command periods apart.
GAP = 3.0
#: A late state: arrived more than this (s) after its earliest-arrival time.
LATE = 0.002
#: The filter's reach either side of a sample, in units of 1 / cutoff (module docstring).
REACH = 1.5


class SysidError(UserError):
    """Input that identification cannot use (one line naming the run and what is missing)."""


@dataclass
class Commands:
    """The commands as the motors held them, low-passed, on a fine grid (per joint column)."""

    t0: float
    step: float
    #: name -> (samples, joints): kp, kd, kp * q, kd * dq, tau.
    signals: dict[str, np.ndarray]

    def at(self, name: str, t: np.ndarray) -> np.ndarray:
        """Signal ``name`` at times ``t`` (linear interpolation on the fine grid)."""
        x = (np.asarray(t) - self.t0) / self.step
        i = np.clip(x.astype(int), 0, len(self.signals[name]) - 2)
        w = np.clip(x - i, 0.0, 1.0)[:, None]
        s = self.signals[name]
        return (1 - w) * s[i] + w * s[i + 1]


@dataclass
class RunData:
    """One run's identification data (joints in the columns' order, model joint names)."""

    run_dir: Path
    robot: RobotInfo
    task: str
    joints: list[str]
    #: Uniform grid (link clock, s) over the run's excitation, and the state period.
    t: np.ndarray
    dt: float
    #: Filtered encoder angles, speeds, accelerations on ``t`` (samples, joints), and the sign
    #: of the speed, filtered (the dry-friction column, parallel filtering).
    q: np.ndarray
    dq: np.ndarray
    ddq: np.ndarray
    sign: np.ndarray
    #: IMU on ``t``: orientation (w x y z, normalized), gyro (rad/s, body), its derivative,
    #: specific force (m/s^2, body), all filtered.
    quat: np.ndarray
    gyro: np.ndarray
    dgyro: np.ndarray
    accel: np.ndarray
    commands: Commands
    #: The raw encoder angles on ``t`` (for the report's plots) and the log's command times.
    q_raw: np.ndarray
    cmd_t: np.ndarray
    cmd_q: np.ndarray
    #: Spans (start, end) of link time, rows in order, where the log shows the link's timing
    #: broken (module docstring); the filter's cutoff (Hz).
    suspect: np.ndarray
    cutoff: float

    def clear(self, t: np.ndarray, max_delay: float) -> np.ndarray:
        """Whether the samples at times ``t`` are clear of every suspect span, for any delay
        up to ``max_delay`` (:func:`clear_of`)."""
        reach = REACH / self.cutoff
        return clear_of(t, self.suspect, reach, max_delay + reach)


def suspect_spans(cmd_t: np.ndarray, t_state: np.ndarray, arrival: np.ndarray,
                  period: float) -> np.ndarray:
    """Spans (start, end) of link time where the log shows the link's timing broken (module
    docstring), merged and in order: gaps in the departures ``cmd_t``; late states (arrival
    ``arrival`` after their time ``t_state`` on the link's clock by more than ``LATE``);
    missing states (``t_state`` further apart than 1.5 ``period``)."""
    cmd_period = float(np.median(np.diff(cmd_t)))
    gap = np.flatnonzero(np.diff(cmd_t) > GAP * cmd_period)
    late = np.flatnonzero(arrival - t_state > LATE)
    missing = np.flatnonzero(np.diff(t_state) > 1.5 * period)
    spans = np.concatenate([np.column_stack([cmd_t[gap], cmd_t[gap + 1]]),
                            np.column_stack([t_state[late] - period, t_state[late]]),
                            np.column_stack([t_state[missing], t_state[missing + 1]])])
    return merge(spans)


def merge(spans: np.ndarray) -> np.ndarray:
    """Overlapping or touching spans (rows start, end) joined, in order."""
    if not len(spans):
        return np.zeros((0, 2))
    spans = spans[np.argsort(spans[:, 0])]
    out = [spans[0].copy()]
    for a, b in spans[1:]:
        if a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append(np.array([a, b]))
    return np.array(out)


def clear_of(t: np.ndarray, spans: np.ndarray, before: float, after: float) -> np.ndarray:
    """Whether each time of ``t`` lies outside every span [a − ``before``, b + ``after``] of
    ``spans`` (merged rows a, b in order)."""
    if not len(spans):
        return np.ones(len(t), bool)
    start, end = spans[:, 0] - before, spans[:, 1] + after
    # merged spans widened alike keep their ends in order too: t is inside one if it is
    # inside the last that starts at or before it
    i = np.searchsorted(start, t, side="right") - 1
    return ~((i >= 0) & (t <= end[np.maximum(i, 0)]))


def log_path(run_dir: Path) -> tuple[dict, Path]:
    """(the run's recorded config, the path of its link log); SysidError if there is none."""
    cfg_file = run_dir / "config.yaml"
    if not run_dir.is_dir():
        raise SysidError(f"{run_dir}: no such run directory")
    if not cfg_file.is_file():
        raise SysidError(f"{run_dir}: not a run directory (no config.yaml)")
    try:
        config = yamlfile.loads(cfg_file.read_text())
    except yaml.YAMLError:
        raise SysidError(f"{cfg_file}: unreadable") from None
    if not isinstance(config, dict) or robot_name(config) not in robots.ROBOTS:
        raise SysidError(f"{cfg_file}: no known robot in the config")
    log_file = (config.get("plant") or {}).get("log_file") or ""
    if not log_file:
        raise SysidError(f"{run_dir}: no robot link log (the run did not set plant.log_file; "
                         f"run a sysid config, e.g. go1_sysid_gantry)")
    path = Path(log_file)
    return config, path if path.is_absolute() else run_dir / path


def load(run_dir: str | Path, cutoff: float = CUTOFF) -> RunData:
    """Read run directory ``run_dir`` for identification (module docstring); SysidError
    naming what is missing."""
    run_dir = Path(run_dir)
    config, path = log_path(run_dir)
    try:
        log = link_log.read(path)
    except link_log.LinkLogError as e:
        raise SysidError(str(e)) from None
    robot = robots.info(robot_name(config))
    slot_joint = dict(zip(robot.motor_slots, robot.motor_joints, strict=True))
    joints = [slot_joint[int(s)] for s in log["slots"]]
    task = str((config.get("task") or {}).get("name", ""))

    # the robot's clock on the link's, by the earliest arrival
    tick = log["state_tick"].astype(float) * 1e-6
    arrival = log["state_t"]
    order = np.argsort(tick, kind="stable")
    tick, arrival = tick[order], arrival[order]
    period = float(np.median(np.diff(tick)))
    if not period > 0:
        raise SysidError(f"{path}: the states' ticks do not advance")
    width = max(1, int(CLOCK_WINDOW / period))
    offset = minimum_filter1d(arrival - tick, size=width, mode="nearest")
    t_state = tick + offset

    # the run's controller phase: from the first to the last command of the controller
    run = log["cmd_phase"] == "run"
    if not run.any():
        raise SysidError(f"{path}: the controller never commanded the robot (no command of "
                         f"phase run)")
    cmd_t = log["cmd_t"]
    t_first, t_last = float(cmd_t[run][0]), float(cmd_t[run][-1])
    grid = np.arange(max(t_first, t_state[0]), min(t_last, t_state[-1]), period)
    if len(grid) < int(5.0 / period):
        raise SysidError(f"{path}: less than 5 s of commanded motion logged")
    fs = 1.0 / period
    if not 0 < cutoff < fs / 2:
        raise SysidError(f"cutoff {cutoff} Hz must be below half the state rate ({fs / 2:g} Hz)")
    sos = butter(4, cutoff, fs=fs, output="sos")

    def on_grid(values: np.ndarray) -> np.ndarray:
        values = values[order].astype(float)
        return np.stack([np.interp(grid, t_state, v) for v in values.T], axis=1)

    q_raw = on_grid(log["state_q"])
    q = sosfiltfilt(sos, q_raw, axis=0)
    dq = np.gradient(q, period, axis=0)
    ddq = np.gradient(dq, period, axis=0)
    quat = sosfiltfilt(sos, on_grid(log["state_quat"]), axis=0)
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    gyro = sosfiltfilt(sos, on_grid(log["state_gyro"]), axis=0)
    accel = sosfiltfilt(sos, on_grid(log["state_accel"]), axis=0)

    # the commands, held from each departure to the next, on a fine grid, filtered
    step = period / FINE
    fine = np.arange(grid[0] - 0.2, grid[-1] + 0.05, step)
    held = np.clip(np.searchsorted(cmd_t, fine, side="right") - 1, 0, len(cmd_t) - 1)
    kp, kd = log["cmd_kp"].astype(float), log["cmd_kd"].astype(float)
    raw = {"kp": kp, "kd": kd, "kpq": kp * log["cmd_q"], "kddq": kd * log["cmd_dq"],
           "tau": log["cmd_tau"].astype(float)}
    sos_fine = butter(4, cutoff, fs=1.0 / step, output="sos")
    signals = {k: sosfiltfilt(sos_fine, v[held], axis=0) for k, v in raw.items()}
    sign = sosfiltfilt(sos, np.sign(dq), axis=0)
    return RunData(run_dir, robot, task, joints, grid, period, q, dq, ddq, sign, quat, gyro,
                   np.gradient(gyro, period, axis=0), accel, Commands(fine[0], step, signals),
                   q_raw, cmd_t, log["cmd_q"].astype(float),
                   suspect_spans(cmd_t, t_state, arrival, period), cutoff)
