"""The Kalman filter's contact cue with feet on two levels (``ground: carried``): a Go2 standing
still with its front feet 8 cm above its hind feet (on a step), all four planned down. The
height cue alone counts only the feet level with the lowest, so the front feet were dropped and
the height carried by the hind feet alone; standing still under a planned stance they count."""

import mujoco
import numpy as np
import pytest
from scipy.optimize import least_squares

import robots
from hardware.estimation.base_state import ImuSample
from hardware.estimation.kalman import LegKalman

RISE = 0.08  # m, the front feet above the hind ones
RATE = 500.0  # Hz, the IMU


@pytest.fixture(scope="module")
def go2():
    """The planning model, its robot info and the home joint angles with the front feet raised
    by RISE in the base frame (the base level), found by least squares on the front legs."""
    robot = robots.info("go2")
    model = robots.load_planning_model("go2")
    data = mujoco.MjData(model)
    key = model.key(robot.home_key).id
    jnt = model.actuator_trnid[:, 0]
    qadr = model.jnt_qposadr[jnt]
    home = model.key_qpos[key, qadr].copy()
    sites = [model.site(f).id for f in robot.feet]

    def feet(q):
        data.qpos[:] = model.key_qpos[key]
        data.qpos[0:3] = 0.0
        data.qpos[qadr] = q
        mujoco.mj_kinematics(model, data)
        return data.site_xpos[sites].copy()

    start = feet(home)
    front = [i for i, f in enumerate(robot.feet) if f.startswith("F")]
    target = start.copy()
    target[front, 2] += RISE
    prefixes = tuple(robot.feet[i].split("_")[0] + "_" for i in front)
    legs = [a for a in range(model.nu) if model.joint(jnt[a]).name.startswith(prefixes)]

    def error(x):
        q = home.copy()
        q[legs] = x
        return (feet(q) - target).ravel()

    sol = least_squares(error, home[legs])
    q = home.copy()
    q[legs] = sol.x
    assert np.abs(error(sol.x)).max() < 1e-3
    return model, robot, q, front, legs


def stand(model, robot, q, planned, steps=250, dq=None):
    """The filter after ``steps`` IMU samples of a robot standing still at joint angles ``q``
    (joint velocities ``dq``), the schedule's ``planned`` stance."""
    kf = LegKalman(model, robot, ground="carried")
    kf.set_planned_stance(planned)
    dq = np.zeros_like(q) if dq is None else dq
    for k in range(steps):
        imu = ImuSample(k / RATE, np.array([1.0, 0.0, 0.0, 0.0]), np.zeros(3),
                        np.array([0.0, 0.0, 9.81]))
        kf.update(imu, q, dq)
    return kf


def test_the_upper_feet_count_standing_still_under_a_planned_stance(go2):
    model, robot, q, front, _ = go2
    kf = stand(model, robot, q, np.ones(4, bool))
    assert (kf.contact[front] > 0.5).all()
    assert (kf.contact > 0.5).all()


def test_without_a_planned_stance_the_upper_feet_are_off(go2):
    """No schedule (a bridge that does not hand one): the height cue decides, as before."""
    model, robot, q, front, _ = go2
    kf = stand(model, robot, q, None)
    assert (kf.contact[front] < 0.5).all()


def test_an_upper_foot_moving_under_a_planned_stance_is_off(go2):
    """A front foot still reaching down (its knee moving) is no foothold however planned."""
    model, robot, q, front, legs = go2
    dq = np.zeros_like(q)
    leg = robot.feet[front[0]].split("_")[0]
    knee = [a for a in legs if model.joint(model.actuator_trnid[a, 0]).name == f"{leg}_calf_joint"]
    dq[knee] = 2.0  # rad/s at the knee: the foot moves at about 0.4 m/s
    kf = stand(model, robot, q, np.ones(4, bool), dq=dq)
    assert kf.contact[front[0]] < 0.5
    assert kf.contact[front[1]] > 0.5
