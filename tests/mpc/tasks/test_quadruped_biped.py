"""The two-legged quadruped task: posture residuals, support-pair gait and balance, loose lifted
legs, exact Jacobian and the fall criterion between the four- and two-leg postures."""

import mujoco
import numpy as np
import pytest

import robots
from mpc.tasks import make_task


def pitched(model, data, angle):
    """Home joint angles with the base pitched by ``angle`` about y (negative: nose up)."""
    mujoco.mj_resetDataKeyframe(model, data, model.key("home").id)
    mujoco.mju_axisAngle2Quat(data.qpos[3:7], np.array([0.0, 1.0, 0.0]), angle)
    mujoco.mj_forward(model, data)
    return data.sensordata.copy()


@pytest.fixture(scope="module", params=["hind", "front"])
def biped(request):
    task = make_task("quadruped_biped", robots.info("go1"), support=request.param)
    model = task.planning_model(0.01)
    return task, model, mujoco.MjData(model)


def rows(task):
    return dict(zip([t.name for t in task.terms], task.term_slices, strict=True))


def test_upright_and_heading_vanish_in_the_two_leg_posture_only(biped):
    task, model, data = biped
    sl = rows(task)
    up = task.residual(pitched(model, data, -task.sign * np.pi / 2), np.array(0.0))
    np.testing.assert_allclose(up[sl["upright"]], 0.0, atol=1e-12)
    np.testing.assert_allclose(up[sl["heading"]], 0.0, atol=1e-12)
    flat = task.residual(pitched(model, data, 0.0), np.array(0.0))
    np.testing.assert_allclose(flat[sl["upright"]], [1.0, 0.0, -task.sign], atol=1e-12)
    # turned 90 degrees about the vertical in the two-leg posture: heading error, upright none
    pitched(model, data, -task.sign * np.pi / 2)
    turn = np.zeros(4)
    mujoco.mju_axisAngle2Quat(turn, np.array([0.0, 0.0, 1.0]), np.pi / 2)
    mujoco.mju_mulQuat(data.qpos[3:7], turn, data.qpos[3:7].copy())
    mujoco.mj_forward(model, data)
    turned = task.residual(data.sensordata.copy(), np.array(0.0))
    np.testing.assert_allclose(turned[sl["upright"]], 0.0, atol=1e-12)
    np.testing.assert_allclose(turned[sl["heading"]], [-1.0, 1.0], atol=1e-12)


def test_height_and_balance_are_measured_from_the_support_pair(biped):
    task, model, data = biped
    s = pitched(model, data, 0.0)
    r = task.residual(s, np.array(0.0))
    sl = rows(task)
    support = [data.site(task.robot.feet[i]).xpos for i in task.support_feet]
    assert all(task.robot.feet[i][0] == ("R" if task.support == "hind" else "F")
               for i in task.support_feet) and len(task.support_feet) == 2
    base = data.site("imu").xpos
    assert r[sl["height"]][0] == pytest.approx(base[2] - np.mean([f[2] for f in support]) - 0.5)
    com = data.subtree_com[model.body("trunk").id]
    np.testing.assert_allclose(r[sl["balance"]], com[:2] - np.mean(support, axis=0)[:2],
                               atol=1e-9)


def test_only_the_support_pair_steps_half_a_cycle_apart(biped):
    task, _, _ = biped
    half = 500  # samples per half cycle
    lift = task.swing_targets(np.arange(6 * half) * (0.5 / task.gait.cadence / half))
    lifted = [i for i in range(4) if i not in task.support_feet]
    assert np.all(lift[:, lifted] == 0.0)
    first, second = (lift[:, i] for i in task.support_feet)
    assert first.max() == pytest.approx(task.gait.amplitude)
    np.testing.assert_allclose(second[half:], first[:-half], atol=1e-9)


def test_lifted_legs_hip_and_knee_are_loose(biped):
    task, model, _ = biped
    gains = task.posture_gains(model)
    lifted = "F" if task.support == "hind" else "R"
    for a in range(model.nu):
        joint = model.joint(model.actuator_trnid[a, 0]).name
        loose = joint.startswith(lifted) and not joint.endswith("_hip_joint")
        expected = (2.0 if joint.endswith("_hip_joint") else 1.0) * (0.03 if loose else 1.0)
        assert gains[a] == pytest.approx(expected), joint


def test_residual_jacobian_matches_finite_differences(biped, rng):
    task, model, data = biped
    s = pitched(model, data, -0.7) + 0.01 * rng.standard_normal(model.nsensordata)
    for t in (0.05, 0.2, 0.31):
        J = task.residual_jacobian(s, np.array(t))
        fd = np.zeros_like(J)
        for j in range(model.nsensordata):
            e = np.zeros(model.nsensordata)
            e[j] = 1e-6
            fd[:, j] = (task.residual(s + e, np.array(t))
                        - task.residual(s - e, np.array(t))) / 2e-6
        np.testing.assert_allclose(J, fd, atol=1e-7)


@pytest.mark.parametrize("pitch_deg, roll_deg, fallen", [
    (0, 0, False),     # on four legs
    (45, 0, False),    # on the way up
    (90, 0, False),    # on two legs
    (135, 0, False),   # 45 degrees past the two-leg posture
    (160, 0, True),    # 70 degrees past it: over on its back (hind) / belly (front)
    (-70, 0, True),    # tipped the wrong way
    (90, 70, True),    # on two legs, toppled sideways
    (0, 180, True),    # upside down
])
def test_fall_criterion_allows_every_posture_between_four_and_two_legs(
        biped, pitch_deg, roll_deg, fallen):
    task, _, _ = biped
    qpos = np.zeros(19)
    qpos[2] = 0.4
    pitch, roll = np.zeros(4), np.zeros(4)
    # pitch toward the task's two-leg posture: nose up (negative about y) for a foot stand
    mujoco.mju_axisAngle2Quat(pitch, np.array([0.0, 1.0, 0.0]),
                              -task.sign * np.radians(pitch_deg))
    mujoco.mju_axisAngle2Quat(roll, np.array([1.0, 0.0, 0.0]), np.radians(roll_deg))
    mujoco.mju_mulQuat(qpos[3:7], roll, pitch)
    assert (task.fall_reason(qpos) is not None) == fallen


def test_fall_criterion_keeps_the_height_limit(biped):
    task, _, _ = biped
    qpos = np.zeros(19)
    qpos[3] = 1.0
    qpos[2] = task.robot.fall_height - 0.01
    assert "height" in task.fall_reason(qpos)


def test_unknown_support_is_rejected():
    with pytest.raises(ValueError, match="support"):
        make_task("quadruped_biped", robots.info("go1"), support="left")
