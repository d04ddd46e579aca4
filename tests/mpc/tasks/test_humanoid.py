"""The humanoid task (H1): residual meaning, exact Jacobians, the capture-point projection, the
timed goal and the biped gait."""

import mujoco
import numpy as np
import pytest

import robots
from mpc.tasks import make_task
from mpc.tasks.humanoid import segment_residual


@pytest.fixture(scope="module")
def h1():
    task = make_task("humanoid_flat", robots.info("h1"), gait="trot", goal=[1.0, 0.0])
    model = task.planning_model(0.01)
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key("home").id)
    mujoco.mj_forward(model, data)
    task.update(0.0, data.qpos, data.qvel)
    return task, model, data


def rows(task):
    return dict(zip([t.name for t in task.terms], task.term_slices, strict=True))


def central_difference(f, x, h=1e-6):
    cols = []
    for j in range(x.shape[-1]):
        e = np.zeros_like(x)
        e[..., j] = h
        cols.append((f(x + e) - f(x - e)) / (2 * h))
    return np.stack(cols, axis=-1)


def test_plans_on_the_legs_only_model(h1):
    task, model, _ = h1
    assert model.nu == 10 and model.nq == 17
    assert rows(task)["effort"].stop - rows(task)["effort"].start == 10


def test_residual_terms_mean_what_they_say_at_home(h1):
    task, model, data = h1
    r = task.residual(data.sensordata.copy(), np.array(0.0))
    sl = rows(task)
    for name in ("upright", "feet_upright", "heading", "posture"):
        np.testing.assert_allclose(r[sl[name]], 0.0, atol=1e-12, err_msg=name)
    feet = [data.site(f).xpos for f in task.robot.feet]
    pelvis = data.site("imu").xpos
    assert r[sl["height"]][0] == pytest.approx(pelvis[2] - np.mean([f[2] for f in feet]) - 1.01)
    np.testing.assert_allclose(r[sl["position"]], pelvis[:2] - [1.0, 0.0], atol=1e-12)
    # the home pose has its centre of mass behind the foot centres: the capture point (at rest,
    # the CoM) lies between the feet laterally, so the balance residual is purely sagittal
    com = data.subtree_com[model.body("pelvis").id]
    mid = 0.5 * (feet[0] + feet[1])
    np.testing.assert_allclose(r[sl["balance"]], [com[0] - mid[0], 0.0], atol=1e-9)
    assert r[sl["balance"]][0] < -0.02


@pytest.mark.parametrize("noise", [0.0, 0.02, 0.3])
def test_residual_jacobian_matches_finite_differences(h1, rng, noise):
    """Small noise keeps the capture point inside the foot segment, large noise moves it past
    an end (the clamped branch)."""
    task, model, data = h1
    s = data.sensordata.copy() + noise * rng.standard_normal(model.nsensordata)
    for t in (0.05, 0.2, 0.41, 0.55):  # double support and each foot's swing
        J = task.residual_jacobian(s, np.array(t))
        fd = central_difference(lambda x, t=t: task.residual(x, np.array(t)), s)
        np.testing.assert_allclose(J, fd, atol=1e-7)


def test_residual_jacobian_is_batched_over_knots(h1, rng):
    task, model, data = h1
    s = data.sensordata + 0.1 * rng.standard_normal((5, model.nsensordata))
    t = np.linspace(0.0, 0.6, 5)
    J = task.residual_jacobian(s, t)
    for k in range(5):
        np.testing.assert_array_equal(J[k], task.residual_jacobian(s[k], t[k]))


@pytest.mark.parametrize("point, expected", [
    ([0.3, 0.1], [0.3, 0.0]),      # off the line: the perpendicular offset
    ([0.0, -0.1], [0.0, 0.0]),     # on the segment
    ([0.0, 0.35], [0.0, 0.1]),     # past the left end (segment y in [-0.25, 0.25])
    ([-0.2, -0.4], [-0.2, -0.15]),  # past the right end
])
def test_capture_point_is_free_along_the_segment_between_the_feet(point, expected):
    left, right = np.array([0.0, 0.3]), np.array([0.0, -0.3])
    r, *_ = segment_residual(np.array(point), left, right, margin=0.05)
    np.testing.assert_allclose(r, expected, atol=1e-12)


@pytest.mark.parametrize("point", [[0.1, 0.05], [0.1, 0.5], [-0.1, -0.6], [0.02, 0.0]])
@pytest.mark.parametrize("margin", [0.05, 0.4])  # 0.4: the segment shrinks to its midpoint
def test_segment_residual_jacobians_match_finite_differences(point, margin):
    left, right = np.array([0.05, 0.3]), np.array([-0.03, -0.25])
    x = np.concatenate([point, left, right])
    _, dp, dl, dr = segment_residual(x[:2], x[2:4], x[4:], margin)
    fd = central_difference(lambda y: segment_residual(y[:2], y[2:4], y[4:], margin)[0], x)
    np.testing.assert_allclose(np.concatenate([dp, dl, dr], axis=1), fd, atol=1e-7)


def test_goal_holds_the_start_position_until_hold_time():
    task = make_task("humanoid_flat", robots.info("h1"), goal=[1.0, 0.0], hold_time=2.0)
    qpos = np.zeros(17)
    qpos[:2] = [0.2, -0.1]
    task.update(0.0, qpos, np.zeros(16))
    np.testing.assert_allclose(task.goal, [0.2, -0.1])
    qpos[:2] = [0.5, 0.5]  # the hold point is the first plan's position, not the current one
    task.update(1.9, qpos, np.zeros(16))
    np.testing.assert_allclose(task.goal, [0.2, -0.1])
    task.update(2.0, qpos, np.zeros(16))
    np.testing.assert_allclose(task.goal, [1.0, 0.0])


def test_dragging_the_goal_activates_it_at_once():
    task = make_task("humanoid_flat", robots.info("h1"), goal=[1.0, 0.0], hold_time=5.0)
    task.update(0.0, np.zeros(17), np.zeros(16))
    task.set_goal([0.0, 2.0])
    np.testing.assert_allclose(task.goal, [0.0, 2.0])


def test_feet_alternate_and_one_is_always_down(h1):
    task, _, _ = h1
    half = 600  # samples per half cycle
    times = np.arange(6 * half) * (0.5 / task.gait.cadence / half)
    lift = task.swing_targets(times)
    assert np.all((lift > 0).sum(axis=1) <= 1)
    swing = (lift > 0).mean(axis=0)
    np.testing.assert_allclose(swing, 1 - task.gait.duty, atol=2e-3)
    np.testing.assert_allclose(lift[half:, 1], lift[:-half, 0], atol=1e-9)


@pytest.mark.parametrize("bad", [dict(gait="gallop"), dict(duty=0.4), dict(goal=[1, 2, 3]),
                                 dict(weights={"balanse": 1.0})])
def test_bad_parameters_are_rejected(bad):
    with pytest.raises(ValueError):
        make_task("humanoid_flat", robots.info("h1"), **bad)


def test_needs_two_feet():
    with pytest.raises(ValueError, match="needs a robot with 2 feet"):
        make_task("humanoid_flat", robots.info("go1"))


@pytest.fixture(scope="module")
def h1_walking():
    """The H1 in velocity mode, commanded 0.3 m/s forward while facing 90° left (so the
    walking velocity is world +y), at home."""
    task = make_task("humanoid_flat", robots.info("h1"), gait="trot", mode="velocity")
    model = task.planning_model(0.01)
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key("home").id)
    data.qpos[3:7] = [np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4)]
    mujoco.mj_forward(model, data)
    task.set_command([0.3, 0.0, 0.0])
    task.update(0.0, data.qpos, data.qvel)
    return task, model, data


def test_walking_at_the_command_costs_the_balance_of_standing(h1_walking, h1):
    """The capture point is taken relative to the commanded walk: a CoM moving at the
    commanded velocity (world frame, turned by the heading) has the balance residual a still
    CoM has at zero command, and a still CoM is behind by T·v̂."""
    task, _, data = h1_walking
    still = data.sensordata.copy()
    moving = still.copy()
    vel = task.sensor("com_vel")
    moving[vel.start : vel.start + 2] = [0.0, 0.3]  # facing +y: 0.3 m/s forward
    balance = rows(task)["balance"]
    standing = h1[0]  # goal mode: v̂ = 0
    r_moving = task.residual(moving, np.array(0.0))[balance]
    expected = segment_residual(*standing._balance_inputs(still), task.balance_margin)[0]
    np.testing.assert_allclose(r_moving, expected, atol=1e-9)
    # standing still against the command: the capture point T·0.3 m behind (along -y)
    shift = segment_residual(*task._balance_inputs(still), task.balance_margin)[0] - expected
    assert shift[1] < -0.5 * task.balance_time * 0.3


def test_velocity_mode_residual_jacobian_matches_finite_differences(h1_walking, rng):
    task, model, data = h1_walking
    s = data.sensordata.copy() + 0.02 * rng.standard_normal(model.nsensordata)
    for t in (0.05, 0.41):
        J = task.residual_jacobian(s, np.array(t))
        fd = central_difference(lambda x, t=t: task.residual(x, np.array(t)), s)
        np.testing.assert_allclose(J, fd, atol=1e-7)
