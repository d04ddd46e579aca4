"""Joint targets kept within a servo's reach: the model feels no change, a motor damps as the
model does, and only force-limited position servos are touched."""

import mujoco
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robots
from common.trajectory import ModelLayout
from mpc.app.plants.plant_base import PlantState
from mpc.app.runtime.feedback import FeedbackController
from mpc.app.runtime.servo_reach import ServoReach
from mpc.planner.policy import Policy
from tests.mpc.app.runtime.test_feedback import RecordingPlant

LIMIT, KP, DAMPING = 10.0, 100.0, 2.0

# A hinge on a force-limited position servo (damping in the joint, as in the robots' models),
# a second hinge on a torque motor and a third on a servo without a force limit.
ARM = f"""
<mujoco>
  <option timestep="0.002"/>
  <worldbody>
    <body name="a"><joint name="servo" axis="0 1 0" damping="{DAMPING}" range="-2 2"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.2" size="0.02" mass="1"/>
      <body name="b" pos="0 0 -0.2"><joint name="motor" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.2" size="0.02" mass="0.5"/>
        <body name="c" pos="0 0 -0.2"><joint name="free_servo" axis="0 1 0"/>
          <geom type="sphere" size="0.02" mass="0.2"/></body></body></body>
  </worldbody>
  <actuator>
    <position joint="servo" kp="{KP}" forcerange="-{LIMIT} {LIMIT}" ctrlrange="-2 2"/>
    <motor joint="motor" ctrlrange="-5 5"/>
    <position joint="free_servo" kp="{KP}"/>
  </actuator>
</mujoco>"""


def arm() -> mujoco.MjModel:
    return mujoco.MjModel.from_xml_string(ARM)


def model_force(model, qpos, qvel, ctrl) -> np.ndarray:
    data = mujoco.MjData(model)
    data.qpos[:], data.qvel[:], data.ctrl[:] = qpos, qvel, ctrl
    mujoco.mj_forward(model, data)
    return data.actuator_force.copy()


def test_only_force_limited_position_servos_are_kept_within_reach():
    assert ServoReach(arm()).actuators.tolist() == [0]
    for name in ("a1", "go1", "go2"):
        assert len(ServoReach(robots.load_model(name)).actuators) == 12
    assert len(ServoReach(robots.load_model("h1")).actuators) == 0  # torque motors


angles = st.floats(-1.9, 1.9)
speeds = st.floats(-30.0, 30.0)
targets = st.floats(-2.0, 2.0)


@settings(max_examples=200, deadline=None)
@given(q=angles, dq=speeds, u=targets)
def test_the_model_feels_the_same_force_and_a_motor_gives_the_model_torque(q, dq, u):
    """At the state it is computed for, the clamped target gives the model the same actuator
    force, and a motor's PD, which clamps its sum (τ = clamp(K_p (u − q) − K_d q̇, ±τ̄)), the
    model's joint torque: its clamped force less the joint damping (within ±τ̄)."""
    model = arm()
    qpos, qvel = np.array([q, 0.0, 0.0]), np.array([dq, 0.0, 0.0])
    ctrl = np.array([u, 1.0, 0.3])
    clamped = ctrl.copy()
    ServoReach(model).clamp(qpos, qvel, clamped)
    np.testing.assert_array_equal(clamped[1:], ctrl[1:])  # the motor and the unlimited servo
    assert q - LIMIT / KP - 1e-12 <= clamped[0] <= q + LIMIT / KP + 1e-12
    force = model_force(model, qpos, qvel, ctrl)
    np.testing.assert_allclose(model_force(model, qpos, qvel, clamped), force, atol=1e-9)
    motor = np.clip(KP * (clamped[0] - q) - DAMPING * dq, -LIMIT, LIMIT)
    assert motor == pytest.approx(np.clip(force[0] - DAMPING * dq, -LIMIT, LIMIT), abs=1e-9)


def test_a_joint_driven_past_the_limit_reaches_the_models_speed_not_more():
    """A leg (a 2 kg rod on a hinge, no gravity) driven to a target far past the limit by a
    motor that clamps its PD sum (the robot's), the target resent every 4 ms as the feedback
    law does: sent as planned, the joint speeds far past τ̄ / d (the model's top speed, 5 rad/s
    here); kept within reach, it stays near it."""
    model = mujoco.MjModel.from_xml_string("""
<mujoco><option gravity="0 0 0"/><worldbody><body><joint axis="0 1 0"/>
  <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.02" mass="2"/></body></worldbody>
</mujoco>""")
    reach = ServoReach(arm())  # its servo is on the first joint, as the rod's hinge
    top = {}
    for kept in (False, True):
        data = mujoco.MjData(model)
        data.qpos[0] = -1.9
        target = np.array([1.9, 0.0, 0.0])  # the arm's controls: the servo's first
        sent = target.copy()
        fastest = 0.0
        for k in range(500):
            if k % 2 == 0:  # a command every other 2 ms step
                sent = target.copy()
                if kept:
                    reach.clamp(data.qpos, data.qvel, sent)
            data.qfrc_applied[0] = np.clip(KP * (sent[0] - data.qpos[0]) - DAMPING * data.qvel[0],
                                           -LIMIT, LIMIT)
            mujoco.mj_step(model, data)
            fastest = max(fastest, abs(data.qvel[0]))
        top[kept] = fastest
    assert top[True] < 1.1 * LIMIT / DAMPING and top[False] > 3 * LIMIT / DAMPING, top


def test_the_feedback_law_sends_targets_within_reach():
    """A plan whose target lies far past the limit: sent kept within reach of the measured
    state (carried ahead by the command lead)."""
    model = arm()
    lay = ModelLayout.of(model)
    qpos = np.array([0.3, 0.0, 0.0])
    pol = Policy.build(lay, np.array([0.0, 0.1]), np.stack([qpos, qpos]),
                       np.zeros((2, model.nv)), np.zeros((2, 0)),
                       np.tile([1.9, 0.5, 1.0], (2, 1)))
    qvel = np.array([2.0, 0.0, 0.0])
    plant = RecordingPlant()
    lead = 0.01
    feedback = FeedbackController(plant, model.nu, timeout=0.3, lead=lead, model=model)
    feedback.step(pol, PlantState(0.05, qpos.copy(), qvel, np.zeros(0)))
    np.testing.assert_allclose(plant.sent[0], [0.3 + 2.0 * lead + LIMIT / KP, 0.5, 1.0])
    assert feedback.reach.kept == 1  # the run's summary: targets_kept_in_reach
