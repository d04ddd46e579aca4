"""Full model <-> planning model maps by name, and the hold torques of the locked joints."""

import dataclasses

import mujoco
import numpy as np
import pytest

import robots
from robots.locked import LockedJointMap


@pytest.fixture(scope="module")
def h1():
    info = robots.info("h1")
    full, planning = robots.load_model("h1"), robots.load_planning_model("h1")
    return info, full, planning, LockedJointMap.build(info, full, planning)


def test_state_and_controls_map_by_name(h1):
    _, full, planning, m = h1
    assert len(m.qpos) == planning.nq and len(m.qvel) == planning.nv
    assert len(m.ctrl) == planning.nu
    for j in range(planning.njnt):
        fj = full.joint(planning.joint(j).name)
        assert m.qpos[planning.jnt_qposadr[j]] == fj.qposadr[0]
        assert m.qvel[planning.jnt_dofadr[j]] == fj.dofadr[0]
    for a in range(planning.nu):
        assert full.actuator(int(m.ctrl[a])).name == planning.actuator(a).name
    # the planning model's home state is the full model's, read through the map
    np.testing.assert_allclose(full.key("home").qpos[m.qpos], planning.key("home").qpos)
    np.testing.assert_allclose(full.key("home").ctrl[m.ctrl], planning.key("home").ctrl)


def test_locked_joints_are_the_upper_body_with_their_own_actuators(h1):
    info, full, _, m = h1
    names = [full.joint(full.actuator_trnid[a, 0]).name for a in m.locked_ctrl]
    assert names == list(info.locked_joints)
    assert set(m.locked_ctrl).isdisjoint(m.ctrl)
    assert len(m.locked_ctrl) + len(m.ctrl) == full.nu


def test_hold_torques_are_home_torques_plus_joint_pd(h1):
    info, full, _, m = h1
    key = full.key("home")
    qpos, qvel = key.qpos.copy(), np.zeros(full.nv)
    np.testing.assert_allclose(m.hold_torques(qpos, qvel), key.ctrl[m.locked_ctrl])
    torso = info.locked_joints.index("torso")
    qpos[m.locked_qpos[torso]] += 0.1
    qvel[m.locked_qvel[torso]] = 0.5
    kp, kd = info.hw_kp[info.motor_joints.index("torso")], info.hw_kd[
        info.motor_joints.index("torso")]
    expected = key.ctrl[m.locked_ctrl].copy()
    expected[torso] += -kp * 0.1 - kd * 0.5
    np.testing.assert_allclose(m.hold_torques(qpos, qvel), expected)


def test_locked_joints_need_torque_actuators():
    go1 = dataclasses.replace(robots.info("go1"), locked_joints=("FR_hip_joint",))
    model = robots.load_model("go1")
    with pytest.raises(ValueError, match="torque"):
        LockedJointMap.build(go1, model, model)


def test_hold_torques_bring_the_upper_body_back_home_under_gravity(h1):
    """The full H1 (legs on their home torques), upper body displaced by 0.1 rad: after 0.6 s
    the hold has brought it back within 0.02 rad of home (home torques alone leave it 0.1 rad
    off)."""
    _, full, _, m = h1
    data = mujoco.MjData(full)
    mujoco.mj_resetDataKeyframe(full, data, full.key("home").id)
    data.qpos[m.locked_qpos] += 0.1
    for _ in range(300):
        data.ctrl[m.locked_ctrl] = m.hold_torques(data.qpos, data.qvel)
        mujoco.mj_step(full, data)
    np.testing.assert_allclose(data.qpos[m.locked_qpos], m.locked_home, atol=0.02)
