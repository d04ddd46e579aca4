"""The quadruped task's residual and its Jacobian through MuJoCo."""

import mujoco
import numpy as np
import pytest

import robots
from mpc.tasks import make_task


def home_data(model):
    d = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, d, 0)
    mujoco.mj_forward(model, d)
    return d


def test_residual_jacobian_matches_finite_differences_of_the_residual(a1_task, rng):
    task, model = a1_task
    d = home_data(model)
    s = d.sensordata.copy() + 0.01 * rng.standard_normal(model.nsensordata)
    for t in (0.05, 0.13, 0.31):  # stance and swing phases
        J = task.residual_jacobian(s, np.array(t))
        h = 1e-6
        fd = np.zeros_like(J)
        for j in range(model.nsensordata):
            e = np.zeros(model.nsensordata)
            e[j] = h
            rp, rm = task.residual(s + e, np.array(t)), task.residual(s - e, np.array(t))
            fd[:, j] = (rp - rm) / (2 * h)
        np.testing.assert_allclose(J, fd, atol=1e-7)


def test_residual_terms_mean_what_they_say(a1_task):
    task, model = a1_task
    d = home_data(model)
    r = task.residual(d.sensordata.copy(), np.array(0.0))
    sl = dict(zip([t.name for t in task.terms], task.term_slices, strict=False))
    # upright at the home pose, posture at home, zero actuator force at home ctrl
    np.testing.assert_allclose(r[sl["upright"]], 0.0, atol=1e-12)
    np.testing.assert_allclose(r[sl["posture"]], 0.0, atol=1e-12)
    np.testing.assert_allclose(r[sl["effort"]], 0.0, atol=1e-9)
    # position: base 2 m short of the goal at [2, 0]
    np.testing.assert_allclose(r[sl["position"]], [-2.0, 0.0], atol=1e-9)
    # height: base z minus mean foot z minus 0.25
    feet_z = np.mean([d.site_xpos[model.site(f).id][2] for f in task.robot.feet])
    assert r[sl["height"]][0] == pytest.approx(d.site_xpos[model.site("imu").id][2]
                                               - feet_z - 0.25)


def test_gait_residual_is_zero_in_stance_and_tracks_lift_in_swing(a1_task):
    task, model = a1_task
    d = home_data(model)
    s = d.sensordata.copy()
    sl = dict(zip([t.name for t in task.terms], task.term_slices, strict=False))["gait"]
    times = np.linspace(0, 0.5, 101)
    r = task.residual(np.broadcast_to(s, (len(times), len(s))), times)[:, sl]
    lift = task.swing_targets(times)
    assert np.all(r[lift == 0] == 0)
    feet_z = np.array([d.site_xpos[model.site(f).id][2] for f in task.robot.feet])
    swing = lift > 0
    expected = (feet_z - task.foot_height - lift)[swing]
    np.testing.assert_allclose(r[swing], expected, atol=1e-12)


@pytest.mark.parametrize("robot", ["a1", "go2"])
def test_a_resting_foot_is_on_target_where_its_swing_begins(robot):
    """At the edges of a foot's swing window the step target is near zero: a foot resting on
    the ground (the standing robot, settled) must then be on target, not asked to be a
    centimetre up (with the foot radius as the target, every foot had to leave the ground at
    once where the trot's two windows meet)."""
    task = make_task("quadruped_flat", robots.info(robot), goal=[1.0, 0.0])
    model = task.planning_model(0.01)
    d = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, d, model.key(task.robot.home_key).id)
    for _ in range(100):
        mujoco.mj_step(model, d)
    mujoco.mj_forward(model, d)
    times = np.linspace(0.0, 1.0, 2001)
    lift = task.swing_targets(times)
    edge = (lift > 0) & (lift < 1e-3)  # swing has begun, the target has not risen yet
    assert edge.sum() > 10
    sl = dict(zip([t.name for t in task.terms], task.term_slices, strict=False))["gait"]
    r = task.residual(np.broadcast_to(d.sensordata, (len(times), model.nsensordata)),
                      times)[:, sl]
    assert np.abs(r[edge]).max() < 2e-3


def test_a_given_foot_height_replaces_the_measured_one():
    measured = make_task("quadruped_flat", robots.info("go2"), goal=[1.0, 0.0])
    measured.planning_model(0.01)
    given = make_task("quadruped_flat", robots.info("go2"), goal=[1.0, 0.0], foot_height=0.022)
    given.planning_model(0.01)
    assert given.foot_height == 0.022
    assert measured.foot_height == pytest.approx(0.009, abs=0.002)


def test_the_planning_model_takes_the_robot_impratio_unless_given():
    task = make_task("quadruped_flat", robots.info("a1"), goal=[1.0, 0.0])
    assert task.planning_model(0.01).opt.impratio == robots.load_model("a1").opt.impratio == 100
    assert task.planning_model(0.01, impratio=1.0).opt.impratio == 1.0


def test_waypoints_advance_when_reached():
    task = make_task("quadruped_flat", robots.info("a1"), goal=[[1.0, 0.0], [1.0, 1.0]])
    task.planning_model(0.01)
    qpos = np.zeros(19)
    task.update(0.0, qpos, np.zeros(18))
    np.testing.assert_allclose(task.goal, [1.0, 0.0])
    qpos[:2] = [0.95, 0.02]
    task.update(0.1, qpos, np.zeros(18))
    np.testing.assert_allclose(task.goal, [1.0, 1.0])


@pytest.mark.parametrize("bad", [dict(gait="hop"), dict(goal=[1, 2, 3]),
                                 dict(weights={"uprite": 1.0})])
def test_bad_parameters_are_rejected(bad):
    with pytest.raises(ValueError):
        make_task("quadruped_flat", robots.info("a1"), **bad)
