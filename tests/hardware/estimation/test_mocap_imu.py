"""The mocap + IMU estimator against a tumbling, thrusting body simulated in MuJoCo."""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np
import pytest
import scipy.linalg

from hardware.estimation.base_state import ImuSample
from hardware.estimation.mocap_imu import EstimatorOptions, MocapImuEstimator, alpha_beta_gains
from hardware.rotations import quat_angle, quat_rotate

BODY = """
<mujoco>
  <option timestep="0.002"/>
  <worldbody>
    <body name="b" pos="0 0 1">
      <freejoint/>
      <geom type="box" size=".2 .1 .05" mass="2" contype="0" conaffinity="0"/>
      <site name="imu"/>
    </body>
  </worldbody>
  <sensor><gyro site="imu"/><accelerometer site="imu"/></sensor>
</mujoco>"""


@dataclass
class Flight:
    """Truth at every 2 ms step: time, qpos, qvel (MuJoCo free joint), gyro, accelerometer."""

    t: np.ndarray
    qpos: np.ndarray
    qvel: np.ndarray
    gyro: np.ndarray
    accel: np.ndarray


def tumble(duration: float, thrust: float = 15.0) -> Flight:
    """A box spinning about all three axes (body rates 2, -1, 4 rad/s, so it tumbles), thrown at
    (1, 0.5, 3) m/s and pushed along its own z axis: its world-frame velocity and body-frame
    rate differ a lot from their expressions in the other frame."""
    m = mujoco.MjModel.from_xml_string(BODY)
    d = mujoco.MjData(m)
    d.qvel[:] = [1.0, 0.5, 3.0, 2.0, -1.0, 4.0]
    rows = []
    for _ in range(round(duration / m.opt.timestep) + 1):
        d.xfrc_applied[1, :3] = quat_rotate(d.qpos[3:7], [0.0, 0.0, thrust])
        mujoco.mj_forward(m, d)
        rows.append((d.time, d.qpos.copy(), d.qvel.copy(), d.sensordata[:3].copy(),
                     d.sensordata[3:6].copy()))
        mujoco.mj_step(m, d)
    t, qpos, qvel, gyro, accel = (np.array(c) for c in zip(*rows, strict=True))
    return Flight(t, qpos, qvel, gyro, accel)


def run_estimator(flight: Flight, options: EstimatorOptions | None = None, latency: float = 0.0,
                  stamp_arrival: bool = False, drop=lambda t: False, pos_noise: float = 0.0,
                  seed: int = 0):
    """Feed IMU samples every step and a pose every 5th step (100 Hz), delivered ``latency``
    after capture and stamped with the capture time (or, with ``stamp_arrival``, wrongly with
    the arrival time). Returns the estimator and the estimates at every step (None before the
    first pose) as arrays (time index, pos, quat, linvel, angvel)."""
    rng = np.random.default_rng(seed)
    est = MocapImuEstimator(options)
    pending = []
    rows = []
    for k, t in enumerate(flight.t):
        if k % 5 == 0 and not drop(t):
            pos = flight.qpos[k, :3] + pos_noise * rng.standard_normal(3)
            pending.append((t + latency, t, pos, flight.qpos[k, 3:7]))
        while pending and pending[0][0] <= t + 1e-9:
            arrival, capture, pos, quat = pending.pop(0)
            est.add_pose(arrival if stamp_arrival else capture, pos, quat)
        est.update(ImuSample(t, flight.qpos[k, 3:7], flight.gyro[k], flight.accel[k]),
                   np.zeros(0), np.zeros(0))
        e = est.estimate()
        if e is not None:
            rows.append((k, e.pos, e.quat, e.linvel, e.angvel))
    k, pos, quat, linvel, angvel = (np.array(c) for c in zip(*rows, strict=True))
    return est, k, pos, quat, linvel, angvel


def test_gains_are_the_steady_state_kalman_gains():
    h, sa, sp = 0.01, 2.0, 0.002
    F = np.array([[1.0, h], [0.0, 1.0]])
    G = np.array([[h * h / 2], [h]])
    H = np.array([[1.0, 0.0]])
    P = scipy.linalg.solve_discrete_are(F.T, H.T, sa**2 * G @ G.T, np.array([[sp**2]]))
    K = P @ H.T / (H @ P @ H.T + sp**2)
    alpha, beta = alpha_beta_gains(sa, sp, h)
    np.testing.assert_allclose([alpha, beta / h], K.ravel(), rtol=1e-6)


@pytest.mark.parametrize("use_accel", [True, False])
def test_linear_velocity_in_world_frame_angular_in_body_frame(use_accel):
    flight = tumble(2.0)
    _, k, pos, quat, linvel, angvel = run_estimator(
        flight, EstimatorOptions(use_accel=use_accel, accel_noise=2.0 if use_accel else 20.0))
    settled = k * 0.002 > 0.3
    k, linvel, angvel = k[settled], linvel[settled], angvel[settled]
    truth_v, truth_w = flight.qvel[k, :3], flight.qvel[k, 3:]
    quat_true = flight.qpos[k, 3:7]
    err_v = np.linalg.norm(linvel - truth_v, axis=1)
    err_w = np.linalg.norm(angvel - truth_w, axis=1)
    # The same vectors in the other frame are metres per second away: the check discriminates.
    other_v = quat_rotate(quat_true * [1, -1, -1, -1], truth_v)
    other_w = quat_rotate(quat_true, truth_w)
    assert np.median(np.linalg.norm(other_v - truth_v, axis=1)) > 1.0
    assert np.median(np.linalg.norm(other_w - truth_w, axis=1)) > 1.0
    assert np.percentile(err_v, 95) < (0.05 if use_accel else 0.3), np.percentile(err_v, 95)
    assert err_w.max() < 1e-9
    assert np.max(np.linalg.norm(pos[settled] - flight.qpos[k, :3], axis=1)) < 0.01
    assert np.max(quat_angle(quat[settled], quat_true)) < 0.01


def test_latency_compensated_by_capture_time_stamps():
    flight = tumble(1.5)
    latency = 0.03

    def errors(**kw):
        _, k, pos, quat, linvel, _ = run_estimator(flight, latency=latency, **kw)
        s = k * 0.002 > 0.3
        k = k[s]
        return (np.percentile(np.linalg.norm(pos[s] - flight.qpos[k, :3], axis=1), 95),
                np.percentile(quat_angle(quat[s], flight.qpos[k, 3:7]), 95),
                np.percentile(np.linalg.norm(linvel[s] - flight.qvel[k, :3], axis=1), 95))

    pos_err, ang_err, vel_err = errors()
    naive_pos, naive_ang, _ = errors(stamp_arrival=True)
    # The body moves ~0.1-0.3 m and turns ~0.1 rad in 30 ms: ignoring the latency shows.
    assert naive_pos > 0.05 and naive_ang > 0.05
    assert pos_err < 0.005 and ang_err < 0.005 and vel_err < 0.1, (pos_err, ang_err, vel_err)


@pytest.mark.parametrize("use_accel", [True, False])
def test_100ms_dropouts_do_not_diverge(use_accel):
    flight = tumble(3.0, thrust=5.0)
    gaps = [(0.5, 0.6), (1.2, 1.3), (1.9, 2.0), (2.5, 2.6)]

    def dropped(t):
        return any(a <= t < b for a, b in gaps)

    est, k, pos, quat, linvel, _ = run_estimator(
        flight, EstimatorOptions(use_accel=use_accel, accel_noise=2.0 if use_accel else 20.0),
        latency=0.02, drop=dropped, pos_noise=0.001)
    t = k * 0.002
    err_p = np.linalg.norm(pos - flight.qpos[k, :3], axis=1)
    err_v = np.linalg.norm(linvel - flight.qvel[k, :3], axis=1)
    err_q = quat_angle(quat, flight.qpos[k, 3:7])
    after = t > 0.3
    # Without the accelerometer the prediction coasts at constant velocity while gravity and
    # thrust (~12 m/s^2 together) act: about a t over the gap, removed within a few poses.
    bound_p, bound_v = (0.01, 0.1) if use_accel else (0.15, 2.5)
    assert err_p[after].max() < bound_p, err_p[after].max()
    assert err_v[after].max() < bound_v, err_v[after].max()
    assert err_q[after].max() < 0.01
    end = t > 2.8
    assert err_p[end].max() < (0.005 if use_accel else 0.015)
    assert err_v[end].max() < (0.05 if use_accel else 0.6)
    h = est.health()
    assert h["dropouts"] == len(gaps)
    assert 0.1 <= h["longest_gap"] < 0.13  # 100 ms of missing frames plus one frame period
    assert h["rejected"] == 0


def test_health_reports_pose_age_during_a_dropout():
    flight = tumble(1.0)
    est = MocapImuEstimator()
    assert est.estimate() is None and est.health()["pose_age"] == np.inf
    ages = []
    for k, t in enumerate(flight.t):
        if k % 5 == 0 and not 0.4 <= t < 0.5:
            est.add_pose(t, flight.qpos[k, :3], flight.qpos[k, 3:7])
        est.update(ImuSample(t, flight.qpos[k, 3:7], flight.gyro[k], flight.accel[k]),
                   np.zeros(0), np.zeros(0))
        ages.append(est.health()["pose_age"])
    ages = np.array(ages)
    assert ages[flight.t < 0.39].max() < 0.01
    assert ages[np.searchsorted(flight.t, 0.498)] == pytest.approx(0.108, abs=0.003)


def test_outliers_rejected_then_a_persistent_jump_reinitializes():
    flight = tumble(1.0)
    est = MocapImuEstimator(EstimatorOptions(reset_after=5))
    jump = np.array([1.0, 0.0, 0.0])
    for k, t in enumerate(flight.t):
        if k % 5 == 0:
            offset = jump if (t > 0.5 or abs(t - 0.3) < 1e-6) else 0.0
            est.add_pose(t, flight.qpos[k, :3] + offset, flight.qpos[k, 3:7])
        est.update(ImuSample(t, flight.qpos[k, 3:7], flight.gyro[k], flight.accel[k]),
                   np.zeros(0), np.zeros(0))
        if abs(t - 0.4) < 1e-6:  # one outlier at 0.3 s: rejected, estimate unharmed
            assert est.health()["rejected"] == 1
            assert np.linalg.norm(est.estimate().pos - flight.qpos[k, :3]) < 0.01
    h = est.health()
    assert h["resets"] == 1 and h["rejected"] == 6
    assert np.linalg.norm(est.estimate().pos - flight.qpos[-1, :3] - jump) < 0.01


def test_a_pose_from_the_future_is_refused_and_the_pose_age_stays_true():
    """A pose stamped a second after the newest IMU sample (a corrupted stamp, another clock)
    is refused: fused, it would make the pose age negative (the stale-mocap watchdog blind)
    and every real pose until then 'stale'."""
    est = MocapImuEstimator(EstimatorOptions(use_accel=False))
    quat = np.array([1.0, 0.0, 0.0, 0.0])
    pos = np.array([0.0, 0.0, 0.3])
    for k in range(101):
        t = 0.002 * k
        est.update(ImuSample(t, quat, np.zeros(3), np.array([0.0, 0.0, 9.81])), None, None)
        if k % 5 == 0:
            est.add_pose(t, pos, quat)
    fused = est.health()["poses"]
    est.add_pose(0.2 + 1.0, pos, quat)
    h = est.health()
    assert h["future"] == 1 and h["poses"] == fused and h["pose_age"] == pytest.approx(0.0)
    est.update(ImuSample(0.202, quat, np.zeros(3), np.array([0.0, 0.0, 9.81])), None, None)
    est.add_pose(0.2015, pos, quat)  # real poses go on being fused
    assert est.health()["poses"] == fused + 1 and est.health()["stale"] == 0
