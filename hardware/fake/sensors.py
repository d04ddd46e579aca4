"""What a legged robot's own sensors report: the simulator's truth made as imperfect as the
real sensors are.

One :class:`SensorModel` turns true signals (sampled every ``dt``) into readings:

- IMU gyro (body frame):  w_m = w + b_g + n_g,   b_g' = n_bg   (white noise, bias random walk);
- IMU accelerometer (specific force, body frame): f_m = f + b_a + n_a,  b_a' = n_ba;
  the biases start at a draw of the turn-on bias (``*_bias_init``, per axis);
- IMU orientation (the IMU's own attitude filter): q_m = q exp(e), where the roll/pitch error
  e_xy is a first-order Gauss-Markov process (std ``attitude_error``, correlation time
  ``attitude_tau``: an AHRS tilt error wanders slowly, it is not white) and the yaw error e_z a
  random walk (``yaw_walk``: the heading of a magnetometer-free AHRS drifts);
- joint encoders: q_m = quantize(q, ``encoder_step``); speeds dq_m = dq + n_dq (the motor
  driver's speed is a filtered difference of encoder counts: noisy);
- foot force (``foot_force``): "gauge" — a per-foot offset and gain error plus noise
  (A1/Go1 foot sensors: usable as a contact cue after removing the offset); "unreliable" —
  Go2/H1: the reading is mostly offset drift and noise, weakly tied to the load; "ideal";
- latency: every reading is delayed by ``latency`` (rounded to samples).

Noise densities (per sqrt(Hz)) become per-sample standard deviations density * sqrt(1 / (2 dt))
(white noise band-limited to the Nyquist frequency). Figures and sources:
see :class:`SensorSpec` and docs/estimation.md (Realistic sensors).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import asdict, dataclass, fields

import mujoco
import numpy as np

FOOT_FORCE_MODES = ("ideal", "gauge", "unreliable")
_X_AXIS = np.array([1.0, 0.0, 0.0])


@dataclass(frozen=True)
class SensorSpec:
    """Sensor figures. The defaults are a consumer MEMS IMU of the BMI088 class (Unitree does
    not name the part; the BMI088 datasheet's typical figures: gyro noise 0.014 deg/s/sqrt(Hz),
    accelerometer 175 ug/sqrt(Hz) (we round up to 200), turn-on offsets after calibration well
    inside the datasheet's +-1 deg/s and +-20 mg), 15-bit rotor encoders behind a 9.1:1 gear
    (A1/Go1 motors), a motor-reported joint speed noise of 0.05 rad/s (assumed from the
    filtering legged_control applies), and 2 ms of sensor-to-message latency."""

    #: False: every reading is the truth, undelayed (the "ideal" switch).
    enabled: bool = True
    gyro_noise: float = 2.4e-4          # rad/s/sqrt(Hz)
    gyro_bias_init: float = 0.003       # rad/s, std of the turn-on bias per axis
    gyro_bias_walk: float = 1e-4        # rad/s/sqrt(s)
    accel_noise: float = 2.0e-3         # m/s^2/sqrt(Hz)
    accel_bias_init: float = 0.05       # m/s^2, std of the turn-on bias per axis
    accel_bias_walk: float = 1e-3       # m/s^2/sqrt(s)
    attitude_error: float = 0.004       # rad (0.23 deg), std of the AHRS roll/pitch error
    attitude_tau: float = 5.0           # s, its correlation time
    yaw_walk: float = 0.002             # rad/sqrt(s) of AHRS heading drift
    encoder_step: float = 2 * math.pi / 2**15 / 9.1  # rad
    joint_speed_noise: float = 0.05     # rad/s
    foot_force: str = "gauge"
    foot_force_noise: float = 5.0       # N
    latency: float = 0.002              # s

    def __post_init__(self):
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "foot_force":
                if v not in FOOT_FORCE_MODES:
                    raise ValueError(f"sensors.foot_force must be one of "
                                     f"{', '.join(FOOT_FORCE_MODES)}, got {v!r}")
            elif f.name != "enabled" and not (isinstance(v, (int, float))
                                              and math.isfinite(v) and v >= 0):
                raise ValueError(f"sensors.{f.name} must be a finite number >= 0, got {v!r}")
        if self.attitude_tau <= 0:
            raise ValueError(f"sensors.attitude_tau must be > 0, got {self.attitude_tau!r}")
        if self.latency > 0.1:
            raise ValueError(f"sensors.latency must be <= 0.1 s, got {self.latency!r}")
        if self.attitude_error > 0.1 or self.yaw_walk > 0.1:
            raise ValueError("sensors.attitude_error and sensors.yaw_walk must be <= 0.1 rad "
                             "(an IMU that bad cannot be flown on)")

    @classmethod
    def build(cls, options: dict | None, **defaults) -> SensorSpec:
        """From a config mapping; unknown keys name themselves."""
        options = {**defaults, **dict(options or {})}
        known = {f.name for f in fields(cls)}
        for key in options:
            if key not in known:
                raise ValueError(f"sensors.{key} is not a sensor setting (known: "
                                 f"{', '.join(sorted(known))})")
        return cls(**options)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class SensorReading:
    """One low-level state as the robot reports it (joint arrays in the caller's order)."""

    time: float
    quat: np.ndarray      # w, x, y, z
    gyro: np.ndarray
    accel: np.ndarray
    q: np.ndarray
    dq: np.ndarray
    foot_force: np.ndarray


class SensorModel:
    """Seeded, so a lockstep run with noisy sensors is repeatable."""

    def __init__(self, spec: SensorSpec, dt: float, n_feet: int, seed: int = 0):
        self.spec = s = spec
        self.dt = dt
        self.rng = rng = np.random.default_rng(seed)
        self.per_sample = math.sqrt(0.5 / dt)  # density -> per-sample std
        self.bg = s.gyro_bias_init * rng.standard_normal(3)
        self.ba = s.accel_bias_init * rng.standard_normal(3)
        self.att = np.zeros(3)
        self.att[:2] = s.attitude_error * rng.standard_normal(2)
        self.ff_offset = 20.0 * rng.standard_normal(n_feet)
        self.ff_gain = 1.0 + 0.1 * rng.standard_normal(n_feet)
        self.delay = deque(maxlen=max(1, round(s.latency / dt) + 1))

    def measure(self, time: float, quat: np.ndarray, gyro: np.ndarray, accel: np.ndarray,
                q: np.ndarray, dq: np.ndarray, foot_force: np.ndarray) -> SensorReading:
        """The reading the robot publishes at ``time`` given the true signals now.

        It runs on every simulation step of a fake robot (500 Hz on the wire), so it draws all
        of a step's noise in one call and turns the attitude error with MuJoCo's quaternion
        product (scipy's Rotation costs a hundred microseconds a step)."""
        s, rng, dt = self.spec, self.rng, self.dt
        if not s.enabled:
            return SensorReading(time, np.array(quat, float), np.array(gyro, float),
                                 np.array(accel, float), np.array(q, float),
                                 np.array(dq, float), np.array(foot_force, float))
        nj, n = len(dq), len(foot_force)
        # one draw: bias walks (6), attitude (3), gyro, accel (6), joint speeds, and per foot
        # the gauge's noise, or the unreliable sensor's offset walk and noise (the order and
        # count of separate draws: the same seed gives the same readings)
        feet = {"gauge": n, "unreliable": 2 * n}.get(s.foot_force, 0)
        z = rng.standard_normal(15 + nj + feet)
        self.bg += s.gyro_bias_walk * math.sqrt(dt) * z[0:3]
        self.ba += s.accel_bias_walk * math.sqrt(dt) * z[3:6]
        a = math.exp(-dt / s.attitude_tau)
        self.att[:2] = a * self.att[:2] + s.attitude_error * math.sqrt(1 - a * a) * z[6:8]
        self.att[2] += s.yaw_walk * math.sqrt(dt) * z[8]
        turn = np.empty(4)  # exp(att), then q_m = q exp(att)
        angle = math.sqrt(float(self.att @ self.att))
        mujoco.mju_axisAngle2Quat(turn, self.att / angle if angle > 0 else _X_AXIS, angle)
        quat_m = np.empty(4)
        mujoco.mju_mulQuat(quat_m, np.asarray(quat, float), turn)
        gyro_m = gyro + self.bg + s.gyro_noise * self.per_sample * z[9:12]
        accel_m = accel + self.ba + s.accel_noise * self.per_sample * z[12:15]
        q = np.asarray(q, float)
        q_m = np.round(q / s.encoder_step) * s.encoder_step if s.encoder_step > 0 else q.copy()
        dq_m = np.asarray(dq, float) + s.joint_speed_noise * z[15:15 + nj]
        ff = np.asarray(foot_force, float)
        noise = z[15 + nj:]
        if s.foot_force == "gauge":
            ff = self.ff_gain[:n] * ff + self.ff_offset[:n] + s.foot_force_noise * noise
        elif s.foot_force == "unreliable":
            self.ff_offset[:n] += 5.0 * math.sqrt(dt) * noise[:n]
            ff = 0.2 * ff + self.ff_offset[:n] + 4 * s.foot_force_noise * noise[n:]
        self.delay.append(SensorReading(time, quat_m, gyro_m, accel_m, q_m, dq_m, ff))
        return self.delay[0]
