"""Per-robot metadata (robots.info) against the models, the reference descriptions and the
motor layouts documented in ../shared/notes/hardware.md."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from reference_models import load_reference

import robots

ROBOTS = robots.available()
QUADRUPED_LEGS = ("FR", "FL", "RR", "RL")
QUADRUPED_JOINTS = ("hip", "thigh", "calf")

#: H1 SDK2 (unitree_go) slots as hardware.md lists them, arms right then left.
H1_SLOTS_FROM_NOTES = {
    0: "right_hip_roll", 1: "right_hip_pitch", 2: "right_knee",
    3: "left_hip_roll", 4: "left_hip_pitch", 5: "left_knee",
    6: "torso", 7: "left_hip_yaw", 8: "right_hip_yaw",
    10: "left_ankle", 11: "right_ankle",
    12: "right_shoulder_pitch", 13: "right_shoulder_roll", 14: "right_shoulder_yaw",
    15: "right_elbow",
    16: "left_shoulder_pitch", 17: "left_shoulder_roll", 18: "left_shoulder_yaw",
    19: "left_elbow",
}


def actuated_joints(model: mujoco.MjModel) -> list[str]:
    return [model.joint(model.actuator_trnid[a, 0]).name for a in range(model.nu)]


def test_available_and_unknown_robot():
    assert ROBOTS == ["a1", "go1", "go2", "h1"]
    with pytest.raises(ValueError, match="unknown robot 'b2'"):
        robots.info("b2")


@pytest.mark.parametrize("robot", ROBOTS)
def test_names_exist_in_models(robot):
    info = robots.info(robot)
    for model in (robots.load_model(robot), robots.load_planning_model(robot)):
        assert model.body(info.base_body).jntnum[0] == 1
        assert model.jnt_type[model.body(info.base_body).jntadr[0]] == mujoco.mjtJoint.mjJNT_FREE
        for site in (*info.feet, "imu", "head"):
            model.site(site)
        model.key(info.home_key)
        np.testing.assert_allclose(model.site("imu").pos, 0.0)  # at the base origin
        assert model.site_bodyid[model.site("imu").id] == model.body(info.base_body).id


@pytest.mark.parametrize("robot", ROBOTS)
def test_motor_joints_cover_the_actuators(robot):
    """The full model actuates exactly the motor joints; the planning model all but the locked."""
    info = robots.info(robot)
    n = len(info.motor_joints)
    assert len(info.motor_slots) == len(set(info.motor_slots)) == n
    for figures in (info.hw_kp, info.hw_kd, info.torque_limit, info.joint_limits):
        assert len(figures) == n
    assert sorted(actuated_joints(robots.load_model(robot))) == sorted(info.motor_joints)
    planning = robots.load_planning_model(robot)
    assert sorted(actuated_joints(planning)) == sorted(
        set(info.motor_joints) - set(info.locked_joints))
    joint_names = {planning.joint(j).name for j in range(planning.njnt)}
    assert joint_names.isdisjoint(info.locked_joints)


@pytest.mark.parametrize("robot", ["a1", "go1", "go2"])
def test_quadruped_slots_follow_unitree_order(robot):
    """Motor index = 3 * leg + joint, legs FR, FL, RR, RL (hardware.md; SDK2 Go2 likewise)."""
    info = robots.info(robot)
    for joint in info.motor_joints:
        leg, kind, _ = joint.split("_")
        expected = 3 * QUADRUPED_LEGS.index(leg) + QUADRUPED_JOINTS.index(kind)
        assert info.slot_of(joint) == expected, joint


def test_h1_slots_follow_hardware_notes():
    info = robots.info("h1")
    assert {info.slot_of(j): j for j in info.motor_joints} == H1_SLOTS_FROM_NOTES


def test_h1_planning_model_locks_the_upper_body():
    info = robots.info("h1")
    assert set(info.locked_joints) == {j for j in info.motor_joints
                                       if j == "torso" or "shoulder" in j or "elbow" in j}
    assert robots.load_planning_model("h1").nu == 10
    assert robots.planning_model_path("h1").name == "h1_legs.xml"
    assert robots.planning_model_path("go2") == robots.model_path("go2")


@pytest.mark.parametrize("robot", ROBOTS)
def test_torque_limits_match_reference(robot):
    info, ref = robots.info(robot), load_reference(robot)
    for joint, limit in zip(info.motor_joints, info.torque_limit, strict=True):
        a = [i for i in range(ref.nu) if ref.joint(ref.actuator_trnid[i, 0]).name == joint]
        assert len(a) == 1, joint
        bounds = (ref.actuator_forcerange[a[0]] if ref.actuator_forcelimited[a[0]]
                  else ref.actuator_ctrlrange[a[0]] * ref.actuator_gear[a[0], 0])
        np.testing.assert_allclose(bounds, (-limit, limit), err_msg=joint)


@pytest.mark.parametrize("robot", ["a1", "go2", "h1"])
def test_joint_limits_match_reference(robot):
    """A1 (hardware figures, rounded), Go2 and H1 (reference figures) agree with the reference's
    ranges. Go1's hardware limits differ from its reference model's, on purpose."""
    info, ref = robots.info(robot), load_reference(robot)
    for joint, limits in zip(info.motor_joints, info.joint_limits, strict=True):
        np.testing.assert_allclose(limits, ref.joint(joint).range, atol=5e-3, err_msg=joint)


@pytest.mark.parametrize("robot", ROBOTS)
def test_home_pose_within_joint_limits(robot):
    info, model = robots.info(robot), robots.load_model(robot)
    qpos = model.key(info.home_key).qpos
    for joint, (lo, hi) in zip(info.motor_joints, info.joint_limits, strict=True):
        assert lo < qpos[model.joint(joint).qposadr[0]] < hi, joint


@pytest.mark.parametrize("robot", ROBOTS)
def test_control_kind_matches_actuators(robot):
    info = robots.info(robot)
    for model in (robots.load_model(robot), robots.load_planning_model(robot)):
        position = model.actuator_biastype == mujoco.mjtBias.mjBIAS_AFFINE
        assert np.all(position) if info.control == "position" else not np.any(position)


@pytest.mark.parametrize("robot", ROBOTS)
def test_foot_radius_is_the_foot_spheres(robot):
    info, model = robots.info(robot), robots.load_model(robot)
    feet = [g for g in range(model.ngeom)
            if model.geom(g).name.endswith(("_foot", "_heel", "_toe"))]
    assert feet
    np.testing.assert_array_equal(model.geom_size[feet, 0], info.foot_radius)
