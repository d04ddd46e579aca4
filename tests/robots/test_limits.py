"""Where a robot's physical limits come from (robots/limits.py): its documented figures,
narrowed by the model where the model limits a joint; never infinite."""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np
import pytest

import robots
from robots.limits import joint_limits


def unlimited(name: str) -> mujoco.MjModel:
    """Robot ``name``'s model with every joint and actuator limit removed."""
    spec = mujoco.MjSpec.from_file(str(robots.model_path(name)))
    for joint in spec.joints:  # as a joint without a range: limited false, range (0, 0)
        joint.limited = mujoco.mjtLimited.mjLIMITED_FALSE
        joint.range = [0.0, 0.0]
    for act in spec.actuators:
        act.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE
        act.forcelimited = mujoco.mjtLimited.mjLIMITED_FALSE
        act.ctrlrange = act.forcerange = [0.0, 0.0]
    return spec.compile()


@pytest.mark.parametrize("name", robots.available())
def test_every_robot_has_finite_limits_within_its_documented_ones(name):
    info = robots.info(name)
    lower, upper, torque = joint_limits(info, robots.load_model(name), info.motor_joints)
    documented = np.array(info.joint_limits)
    assert np.isfinite(np.concatenate([lower, upper, torque])).all()
    assert np.all(lower < upper) and np.all(torque > 0)
    assert np.all(lower >= documented[:, 0]) and np.all(upper <= documented[:, 1])
    assert np.all(torque <= np.array(info.torque_limit))


@pytest.mark.parametrize("name", robots.available())
def test_a_model_without_limits_leaves_the_documented_figures(name):
    info = robots.info(name)
    lower, upper, torque = joint_limits(info, unlimited(name), info.motor_joints)
    np.testing.assert_array_equal(np.c_[lower, upper], np.array(info.joint_limits))
    np.testing.assert_array_equal(torque, info.torque_limit)


def test_the_model_narrows_the_documented_figures():
    """Go1: the hardware allows the abduction +-1.047 rad, the model +-0.863."""
    info = robots.info("go1")
    lower, upper, _ = joint_limits(info, robots.load_model("go1"), ["FR_hip_joint"])
    assert (lower[0], upper[0]) == (-0.863, 0.863)


def test_a_joint_without_documented_limits_is_an_error():
    info = dataclasses.replace(robots.info("a1"), torque_limit=(33.5,) * 11 + (np.inf,))
    with pytest.raises(ValueError, match=r"RL_calf_joint.*no usable limits"):
        joint_limits(info, unlimited("a1"), info.motor_joints)
    with pytest.raises(ValueError, match="'left_knee' has no documented limits"):
        joint_limits(robots.info("a1"), robots.load_model("h1"), ["left_knee"])
