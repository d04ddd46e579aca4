"""The fake motors' law over a simulation step is the leapfrog's: the angle at the step's
instant, the speed there the mean of the speeds either side."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hardware.fake.actuators import MotorTruth

floats = st.floats(-3.0, 3.0)


@settings(max_examples=50, deadline=None)
@given(kp=st.floats(0.0, 200.0), kd=st.floats(0.0, 5.0), q_des=floats, dq_des=floats,
       ff=floats, q=floats, v0=floats, v1=floats, sp=st.floats(0.7, 1.3),
       sd=st.floats(0.5, 1.5))
def test_the_step_torque_is_the_law_at_the_steps_instant(
        kp, kd, q_des, dq_des, ff, q, v0, v1, sp, sd):
    """Explicit part plus the implicit damping at the step's end speed v1 equals the law at
    the step's start angle and the mean of the speeds either side of it."""
    motor = MotorTruth(np.array([sp]), np.array([sd]), np.array([1e6]))
    a = np.array
    explicit, implicit = motor.step_torque(a([kp]), a([q_des]), a([kd]), a([dq_des]), a([ff]),
                                           a([q]), a([v0]))
    applied = explicit - implicit * v1
    law = sp * kp * (q_des - q) + sd * kd * (dq_des - (v0 + v1) / 2) + ff
    assert np.allclose(applied, law, atol=1e-9, rtol=1e-12)


def test_a_saturated_motor_applies_its_limit_explicitly():
    motor = MotorTruth(np.ones(1), np.ones(1), np.array([5.0]))
    a = np.array
    explicit, implicit = motor.step_torque(a([100.0]), a([1.0]), a([2.0]), a([0.0]), a([0.0]),
                                           a([0.0]), a([0.0]))
    assert explicit[0] == 5.0 and implicit[0] == 0.0
