"""A stalled planner on hardware: the runtime's feedback law keeps following the last valid
plan until it expires, then the robot goes to damping; checked on what the robot received."""

import time

import numpy as np
from unitree_helpers import commands, first_damping

from common.trajectory import ModelLayout
from hardware.safety.layer import SafetyConfig
from mpc.app.runtime.feedback import FeedbackController
from mpc.planner.policy import Policy


def test_last_plan_is_held_until_it_expires_then_damping(fake_robot, udp_bridge):
    fake = fake_robot("a1")
    plant = udp_bridge(fake, safety=SafetyConfig(ramp_time=0.2, state_timeout=0.5,
                                                 max_command_age=0.5, command_timeout=0.2))
    layout = ModelLayout.of(plant.model)
    Policy.hold(layout, 0.0, *[np.zeros(n) for n in (layout.nq, layout.nv, layout.na,
                                                      layout.nu)]).action(
        0.0, np.zeros(layout.nq), np.zeros(layout.nv), np.zeros(layout.na))  # compile first
    state = plant.read_state()
    target = plant.map.home[plant.map.actuator_slots] + 0.05
    # One plan, then the planner stalls: no newer policy is ever published.
    policy = Policy.hold(layout, state.time, state.qpos, state.qvel, state.act, target)
    timeout = 0.25
    feedback = FeedbackController(plant, layout.nu, timeout)
    t_plan = time.monotonic()
    while feedback.stopped is None and time.monotonic() - t_plan < 3.0:
        feedback.step(policy, plant.read_state())
        time.sleep(1 / 300)
    assert feedback.stopped is not None and feedback.stopped.startswith("policy expired"), (
        feedback.stopped, feedback.sent, plant.counts)
    assert plant.damping_reason.startswith("policy expired")
    time.sleep(0.05)
    held = commands(fake, t_plan + 0.02)
    before = held["t"] < t_plan + timeout - 0.05
    slots = plant.map.actuator_slots
    np.testing.assert_allclose(held["q"][before][:, slots],
                               np.broadcast_to(target, (before.sum(), len(slots))), atol=1e-6)
    damped = first_damping(fake, t_plan, plant.safety.damping_kd)
    assert timeout - 0.05 < damped - t_plan < timeout + 0.1
