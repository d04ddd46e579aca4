"""Velocity mode of the tasks: residual rows, the integrated reference, speed-adapted gait."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

import robots
from mpc.tasks import make_task
from mpc.tasks.gait import QUADRUPED_GAITS, SpeedGait
from mpc.tasks.task_base import body_velocity
from mpc.tasks.velocity import VelocityReference


@pytest.fixture(scope="module")
def a1_velocity():
    task = make_task("quadruped_flat", robots.info("a1"), mode="velocity")
    return task, task.planning_model(0.01)


def moving_state(model, rng):
    d = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, d, 0)
    quat = np.array([0.95, 0.05, -0.03, 0.3])
    d.qpos[3:7] = quat / np.linalg.norm(quat)
    d.qvel[:6] = rng.standard_normal(6)
    mujoco.mj_forward(model, d)
    return d


def test_velocity_residual_is_body_velocity_minus_command(a1_velocity, rng):
    task, model = a1_velocity
    d = moving_state(model, rng)
    task.set_command([0.5, -0.1, 0.3])
    task.update(0.0, d.qpos, d.qvel)
    rows = dict(zip([t.name for t in task.terms], task.term_slices, strict=True))
    r = task.residual(d.sensordata[None], np.array([0.0]))[0]
    np.testing.assert_allclose(r[rows["velocity"]],
                               body_velocity(d.qpos, d.qvel) - [0.5, -0.1, 0.3], atol=1e-9)
    J = task.residual_jacobian(d.sensordata[None], np.array([0.0]))[0]
    eps = 1e-6 * rng.standard_normal(d.sensordata.shape)  # residual affine in the sensors
    r2 = task.residual((d.sensordata + eps)[None], np.array([0.0]))[0]
    np.testing.assert_allclose(r2 - r, J @ eps, atol=1e-12)


def test_goal_mode_has_no_velocity_terms():
    task = make_task("quadruped_flat", robots.info("a1"))
    assert "velocity" not in [t.name for t in task.terms]
    with pytest.raises(NotImplementedError):
        task.set_command([0, 0, 0])


def test_reference_moves_with_the_command_and_stays_within_its_lead():
    ref = VelocityReference(lead=0.2)
    qpos = np.array([1.0, 2.0, 0.3, np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)])  # yaw 90°
    ref.advance(0.0, qpos, np.array([0.5, 0.0, 0.4]))
    np.testing.assert_allclose(ref.position(0.2), [1.0, 2.1], atol=1e-9)  # forward is +y
    assert ref.heading(0.5) == pytest.approx(np.pi / 2 + 0.2)
    ref.advance(2.0, qpos, np.array([0.0, 0.0, 0.0]))  # the robot did not move: pulled 0.2 m
    np.testing.assert_allclose(ref.position(5.0), [1.0, 2.2], atol=1e-9)
    assert ref.heading(5.0) == pytest.approx(np.pi / 2 + 0.3)


def test_speed_gait_stands_at_zero_and_steps_faster_and_higher_with_speed():
    trot = QUADRUPED_GAITS["trot"]
    g = SpeedGait(cadence_gain=1.0, max_cadence=3.5, lift_gain=0.03, max_lift=0.08,
                  stand_speed=0.05, hip_radius=0.25)
    assert g.timing(trot, np.zeros(3)) == (1.0, trot.cadence, 0.0)
    duty, f1, a1 = g.timing(trot, np.array([0.5, 0.0, 0.0]))
    _, f2, a2 = g.timing(trot, np.array([1.0, 0.0, 0.0]))
    assert duty == trot.duty and trot.cadence < f1 < f2 and trot.amplitude < a1 < a2
    assert g.timing(trot, np.array([5.0, 0.0, 0.0]))[1:] == (3.5, 0.08)
    assert g.speed(np.array([0.0, 0.0, 0.8])) == pytest.approx(0.2)


def test_humanoid_velocity_mode_tracks_heading_from_the_command():
    task = make_task("humanoid_flat", robots.info("h1"), gait="trot", mode="velocity")
    model = task.planning_model(0.01)
    d = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, d, 0)
    mujoco.mj_forward(model, d)
    task.set_command([0.0, 0.0, 0.5])
    task.update(0.0, d.qpos, d.qvel)
    rows = dict(zip([t.name for t in task.terms], task.term_slices, strict=True))
    r = task.residual(np.stack([d.sensordata] * 2), np.array([0.0, 0.4]))
    np.testing.assert_allclose(r[0, rows["heading"]], 0.0, atol=1e-6)
    np.testing.assert_allclose(r[1, rows["heading"]], [1 - np.cos(0.2), -np.sin(0.2)],
                               atol=1e-6)
