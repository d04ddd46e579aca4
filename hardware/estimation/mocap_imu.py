"""Base state from motion capture fused with the IMU: a delay-compensating alpha-beta filter.

Inputs, all stamped in one clock (the robot's):
- IMU samples (~500 Hz): body-frame gyro w and specific force f;
- mocap base poses (~100 Hz) stamped with their *capture* time, which lies in the past when they
  arrive (latency), with gaps (dropouts).

Between poses the state is propagated at every IMU sample (dt):
    q <- q exp(w dt)                                  (body-frame rate, as MuJoCo integrates)
    a  = R(q) f + g   (or 0 with use_accel=False: a constant-velocity prediction)
    p <- p + v dt + a dt^2 / 2,   v <- v + a dt       (world frame)
A pose captured at time t_c corrects the state *at t_c*, read from the stored history:
    r = p_mocap - p(t_c),    dp = alpha r,    dv = (beta / h) r
with alpha, beta the steady-state Kalman gains of a constant-velocity model driven by white
acceleration noise (Kalata's formulas; h = 1 / pose_rate). Because propagation is linear in
(p, v), that correction moves every later state by exactly dp + (t - t_c) dv, so the stored
history up to "now" is shifted in one vectorized step instead of being replayed: latency costs no
accuracy as long as it is shorter than the history. Orientation is corrected the same way: the
body-frame error e = log(q(t_c)* q_mocap) becomes the world-frame rotation exp(k R(q(t_c)) e),
which is the same rotation at every later time, and is applied to the whole tail of the history.
(The replayed accelerations are not re-rotated by that small orientation change: second order.)

Outputs follow MuJoCo's free joint: position and quaternion (w, x, y, z) in the world, linear
velocity in the world frame, angular velocity in the body frame (the gyro, which measures it).
With the accelerometer off this is a filtered finite difference of the mocap positions.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from hardware.estimation.base_state import BaseState, BaseStateSource, ImuSample
from hardware.rotations import quat_conj, quat_exp, quat_log, quat_mul, quat_normalize, quat_rotate

GRAVITY = np.array([0.0, 0.0, -9.81])
#: A pose captured more than this after the newest IMU sample is refused (s). One stamped in
#: the future would make the pose age negative, blind the stale-mocap watchdog and refuse every
#: real pose until the robot's clock caught up with it. A real pose leads the IMU by the
#: transport's jitter, and by up to 0.2 s (1 - r) with the robot's clock mapped from this
#: computer's (:class:`hardware.estimation.clock_sync.ClockOffset`) when the robot is a
#: simulation running at r times real time (70 ms was seen at r = 0.65).
MAX_POSE_LEAD = 0.25


def alpha_beta_gains(accel_noise: float, pos_noise: float, period: float) -> tuple[float, float]:
    """Steady-state Kalman gains (alpha, beta) of the model p'' = white noise of standard
    deviation ``accel_noise`` (piecewise constant over ``period``), measured every ``period``
    with position noise ``pos_noise``; the velocity gain is beta / period (Kalata 1984)."""
    lam = accel_noise * period**2 / pos_noise
    root = np.sqrt(lam**2 + 8.0 * lam)
    alpha = -(lam**2 + 8.0 * lam - (lam + 4.0) * root) / 8.0
    beta = (lam**2 + 4.0 * lam - lam * root) / 4.0
    return float(alpha), float(beta)


@dataclass(frozen=True)
class EstimatorOptions:
    """Settings of :class:`MocapImuEstimator` (config section ``plant.estimator``)."""

    #: Bounds of the options, read by mpc.app.schema.check_kwargs (see mpc/app/schema.py).
    RANGES: ClassVar[dict[str, dict[str, float]]] = {
        "pose_rate": {"gt": 0.0, "max": 10000.0},
        "pos_noise": {"gt": 0.0, "max": 1.0},
        "accel_noise": {"gt": 0.0, "max": 1000.0},
        "orientation_gain": {"min": 0.0, "max": 1.0},
        "gate": {"gt": 0.0, "max": 100.0},
        "gate_angle": {"gt": 0.0, "max": math.pi},
        "reset_after": {"min": 1, "max": 100000},
        "history": {"gt": 0.0, "max": 10.0},
        "dropout_gap": {"gt": 0.0, "max": 10.0},
    }

    #: Nominal mocap rate (Hz); sets the filter's gains.
    pose_rate: float = 100.0
    #: Standard deviation of a mocap position (m).
    pos_noise: float = 0.002
    #: Standard deviation of the prediction's acceleration error (m/s^2): accelerometer error
    #: with ``use_accel``, otherwise the robot's own accelerations.
    accel_noise: float = 2.0
    use_accel: bool = True
    #: Fraction of the orientation error removed per pose.
    orientation_gain: float = 0.3
    #: Poses further than this from the prediction are rejected (m, rad) ...
    gate: float = 0.25
    gate_angle: float = 0.5
    #: ... and this many rejections in a row re-initialize the filter on the mocap pose.
    reset_after: int = 10
    #: Seconds of IMU history kept: the largest pose latency that can be compensated.
    history: float = 0.3
    #: A gap between consecutive poses longer than this counts as one dropout (s).
    dropout_gap: float = 0.025


class _History:
    """Filter states at IMU sample times, oldest first, covering the last ``span`` seconds."""

    def __init__(self, span: float, capacity: int = 1024):
        self.span = span
        self.t = np.empty(capacity)
        self.p = np.empty((capacity, 3))
        self.v = np.empty((capacity, 3))
        self.q = np.empty((capacity, 4))
        self.w = np.empty((capacity, 3))
        self.lo = self.hi = 0

    def _arrays(self):
        return self.t, self.p, self.v, self.q, self.w

    def reset(self, t, p, v, q, w) -> None:
        self.lo = self.hi = 0
        self.append(t, p, v, q, w)

    def append(self, t, p, v, q, w) -> None:
        if self.hi == len(self.t):
            n = self.hi - self.lo
            if n == len(self.t):  # full of entries younger than span: keep the newest half
                self.lo += n // 2
                n -= n // 2
            for a in self._arrays():
                a[:n] = a[self.lo:self.hi]
            self.lo, self.hi = 0, n
        i = self.hi
        self.t[i], self.p[i], self.v[i], self.q[i], self.w[i] = t, p, v, q, w
        self.hi += 1
        self.lo += int(np.searchsorted(self.t[self.lo:self.hi], t - self.span))
        self.lo = min(self.lo, self.hi - 1)

    @property
    def last(self) -> int:
        return self.hi - 1


class MocapImuEstimator(BaseStateSource):
    """Fuses delayed mocap poses (:meth:`add_pose`) with IMU samples (:meth:`update`).

    Thread-safe: the IMU, the mocap client and the control loop may call from their own threads.
    """

    def __init__(self, options: EstimatorOptions | None = None):
        self.options = opt = options or EstimatorOptions()
        self.period = 1.0 / opt.pose_rate
        self.alpha, self.beta = alpha_beta_gains(opt.accel_noise, opt.pos_noise, self.period)
        self._hist = _History(opt.history)
        self._lock = threading.Lock()
        self._initialized = False
        self._gyro = np.zeros(3)
        self._last_pose_time = -np.inf
        #: Time of the newest IMU sample (None: none yet).
        self._imu_time: float | None = None
        self._in_a_row = 0
        self.counts = {"poses": 0, "dropouts": 0, "rejected": 0, "stale": 0, "future": 0,
                       "untracked": 0, "resets": 0}
        self.longest_gap = 0.0

    # --- inputs --------------------------------------------------------------------------------
    def update(self, imu: ImuSample, joint_q: np.ndarray, joint_dq: np.ndarray) -> None:
        """Propagate to ``imu.time`` (joints are not needed by this source)."""
        gyro = np.asarray(imu.gyro, float)
        with self._lock:
            self._gyro = gyro
            if self._imu_time is None or imu.time > self._imu_time:
                self._imu_time = imu.time
            if not self._initialized:
                return
            h, i = self._hist, self._hist.last
            dt = imu.time - h.t[i]
            if dt <= 0.0:  # repeated or reordered sample
                return
            q = quat_normalize(quat_mul(h.q[i], quat_exp(gyro * dt)))
            a = (quat_rotate(q, imu.accel) + GRAVITY if self.options.use_accel
                 else np.zeros(3))
            p = h.p[i] + h.v[i] * dt + 0.5 * a * dt * dt
            h.append(imu.time, p, h.v[i] + a * dt, q, gyro)

    def add_pose(self, time: float, pos: np.ndarray, quat: np.ndarray,
                 valid: bool = True) -> None:
        """Fuse the base pose (world frame, quaternion (w, x, y, z)) captured at ``time``."""
        with self._lock:
            if not valid:
                self.counts["untracked"] += 1
                return
            if self._imu_time is not None and time > self._imu_time + MAX_POSE_LEAD:
                self.counts["future"] += 1  # see MAX_POSE_LEAD
                return
            if not self._initialized:
                self._reset(time, pos, quat)
                return
            h = self._hist
            if time <= self._last_pose_time or time < h.t[h.lo]:
                self.counts["stale"] += 1  # reordered, repeated, or older than the history
                return
            gap = time - self._last_pose_time
            if gap > self.options.dropout_gap:
                self.counts["dropouts"] += 1
            self.longest_gap = max(self.longest_gap, gap)
            self._correct(time, np.asarray(pos, float), quat_normalize(quat))

    def _reset(self, time: float, pos, quat) -> None:
        self._hist.reset(time, pos, np.zeros(3), quat_normalize(quat), self._gyro)
        self._initialized = True
        self._last_pose_time = time
        self._in_a_row = 0
        self.counts["poses"] += 1

    def _correct(self, time: float, pos: np.ndarray, quat: np.ndarray) -> None:
        h, opt = self._hist, self.options
        j = h.lo + int(np.searchsorted(h.t[h.lo:h.hi], time, side="right")) - 1
        tau = time - h.t[j]
        rate = h.w[j + 1] if j + 1 < h.hi else h.w[j]  # the rate held over (t_j, t_j+1]
        p_c = h.p[j] + h.v[j] * tau
        q_c = quat_mul(h.q[j], quat_exp(rate * tau))
        r = pos - p_c
        e = quat_log(quat_mul(quat_conj(q_c), quat))
        if np.linalg.norm(r) > opt.gate or np.linalg.norm(e) > opt.gate_angle:
            self.counts["rejected"] += 1
            self._in_a_row += 1
            if self._in_a_row >= opt.reset_after:
                self.counts["resets"] += 1
                self._reset(time, pos, quat)
            return
        self._in_a_row = 0
        dp = self.alpha * r
        dv = (self.beta / self.period) * r
        tail = slice(j, h.hi)
        h.p[tail] += dp + (h.t[tail] - time)[:, None] * dv
        h.v[tail] += dv
        turn = quat_exp(opt.orientation_gain * quat_rotate(q_c, e))
        h.q[tail] = quat_normalize(quat_mul(turn, h.q[tail]))
        self._last_pose_time = time
        self.counts["poses"] += 1

    # --- outputs -------------------------------------------------------------------------------
    def estimate(self) -> BaseState | None:
        with self._lock:
            if not self._initialized:
                return None
            h, i = self._hist, self._hist.last
            return BaseState(float(h.t[i]), h.p[i].copy(), h.q[i].copy(), h.v[i].copy(),
                             h.w[i].copy())

    def health(self) -> dict[str, float]:
        """``pose_age``: time since the capture of the last fused pose (s, inf before any);
        ``dropouts``: gaps longer than ``dropout_gap``; ``longest_gap`` (s); counts of fused,
        rejected, stale (too old or reordered), future (see :data:`MAX_POSE_LEAD`) and untracked
        poses, and of re-initializations."""
        with self._lock:
            now = self._hist.t[self._hist.last] if self._initialized else np.inf
            return {"pose_age": float(now - self._last_pose_time),
                    "longest_gap": self.longest_gap,
                    **{k: float(v) for k, v in self.counts.items()}}
