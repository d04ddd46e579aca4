"""The joint excitation stays inside the joints' limits and the speed it is given, holds home
outside its window, and sweeps every joint."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robots
from mpc.tasks.excitation import JointExcitation
from robots.limits import joint_limits


@settings(max_examples=15, deadline=None)
@given(robot=st.sampled_from(["go1", "go2", "a1"]), amplitude=st.floats(0.05, 1.5),
       speed=st.floats(0.5, 8.0), top=st.floats(2.0, 12.0), margin=st.floats(0.0, 0.3))
def test_the_reference_stays_within_the_limits(robot, amplitude, speed, top, margin):
    info = robots.info(robot)
    task = JointExcitation(info, start=0.5, duration=8.0, ramp=1.0, amplitude=amplitude,
                           max_speed=speed, band=[0.3, top], sweep=4.0, margin=margin)
    lower, upper, _ = joint_limits(info, robots.load_planning_model(robot), task.joints)
    t = np.arange(0.0, 10.0, 0.001)
    q, dq = task.reference(t)
    assert np.all(q >= lower + margin - 1e-9) and np.all(q <= upper - margin + 1e-9)
    # the speed bound holds of the chirp; the envelope's fade adds at most e' A <= 1.5 A / ramp
    assert np.all(np.abs(dq) <= speed * 1.05 + 1.5 * task.amplitude / 1.0 + 1e-6)
    measured = np.gradient(q, t, axis=0)
    assert np.abs(measured - dq).max() < 0.05 * max(speed, 1.0)


def test_it_holds_home_outside_its_window_and_moves_every_joint_inside():
    task = JointExcitation(robots.info("go1"), start=1.0, duration=6.0, ramp=1.0)
    q, dq = task.reference(np.array([0.0, 0.99, 7.01, 9.0]))
    assert np.allclose(q, task.home) and np.allclose(dq, 0.0)
    inside, _ = task.reference(np.arange(2.0, 6.0, 0.002))
    assert np.all(np.ptp(inside, axis=0) > 0.1)


def test_torque_controlled_robots_are_refused():
    with pytest.raises(ValueError, match="position-controlled"):
        JointExcitation(robots.info("h1"))
