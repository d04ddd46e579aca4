"""The feedback law never sends non-finite commands and damps on an expired policy."""

import numpy as np
import pytest

from common.trajectory import ModelLayout
from mpc.app.plants.plant_base import Plant, PlantState
from mpc.app.runtime.feedback import MAX_NONFINITE, FeedbackController
from mpc.planner.policy import Policy


class RecordingPlant(Plant):
    """Keeps every command it is sent."""

    realtime_only = True

    def __init__(self):
        self.sent: list[np.ndarray] = []
        self.damped: str | None = None

    def read_state(self):
        raise NotImplementedError

    def send(self, ctrl):
        self.sent.append(np.array(ctrl))

    def damp(self, reason):
        self.damped = reason

    def close(self):
        pass


def policy_and_state(model, nan_gain=False):
    lay = ModelLayout.of(model)
    qpos = model.qpos0.copy()
    gains = np.zeros((2, model.nu, lay.nx))
    if nan_gain:
        gains[:, 0, 0] = np.nan
    pol = Policy.build(lay, np.array([0.0, 0.1]), np.stack([qpos, qpos]),
                       np.zeros((2, model.nv)), np.zeros((2, 0)), np.zeros((2, model.nu)),
                       gains)
    state = PlantState(0.05, qpos + np.r_[0.01, np.zeros(model.nq - 1)], np.zeros(model.nv),
                       np.zeros(0))
    return pol, state


def test_finite_actions_are_sent(floating_model):
    plant = RecordingPlant()
    fb = FeedbackController(plant, floating_model.nu, timeout=0.3)
    pol, state = policy_and_state(floating_model)
    fb.step(pol, state)
    assert len(plant.sent) == 1 and np.all(np.isfinite(plant.sent[0]))


def test_non_finite_actions_never_reach_the_plant_and_end_in_damping(floating_model):
    plant = RecordingPlant()
    fb = FeedbackController(plant, floating_model.nu, timeout=0.3)
    pol, state = policy_and_state(floating_model, nan_gain=True)
    for _ in range(MAX_NONFINITE + 2):
        fb.step(pol, state)
    assert plant.sent == []
    assert plant.damped is not None and "non-finite" in plant.damped


def test_invalid_nominal_is_caught_not_raised(floating_model):
    """A zero quaternion in a policy yields NaN inside the kernel, which the guard catches."""
    plant = RecordingPlant()
    fb = FeedbackController(plant, floating_model.nu, timeout=0.3)
    pol, state = policy_and_state(floating_model)
    bad = Policy.build(pol.layout, pol.times, np.zeros_like(pol.qpos), pol.qvel, pol.act,
                       pol.ctrl, pol.gains + 1.0)
    fb.step(bad, state)
    assert plant.sent == []


def test_expired_policy_damps(floating_model):
    plant = RecordingPlant()
    fb = FeedbackController(plant, floating_model.nu, timeout=0.3)
    pol, state = policy_and_state(floating_model)
    fb.step(pol, PlantState(0.5, state.qpos, state.qvel, state.act))
    assert plant.sent == []
    assert "expired" in plant.damped


def test_gain_scale_multiplies_the_feedback_term(floating_model):
    """u = u* + g K (x ⊖ x*): with u* = 0 the command is linear in g."""
    pol, state = policy_and_state(floating_model)
    gains = pol.gains.copy()
    gains[:, :, 0] = 3.0  # every control reacts to the base x offset (0.01 m)
    pol = Policy.build(pol.layout, pol.times, pol.qpos, pol.qvel, pol.act, pol.ctrl, gains)
    sent = {}
    for g in (0.0, 0.5, 1.0):
        plant = RecordingPlant()
        FeedbackController(plant, floating_model.nu, timeout=0.3, gain=g).step(pol, state)
        sent[g] = plant.sent[0]
    assert np.all(sent[1.0] != 0)
    np.testing.assert_allclose(sent[0.5], 0.5 * sent[1.0], rtol=1e-12)
    np.testing.assert_array_equal(sent[0.0], 0.0)


def test_a_command_lead_sends_the_action_for_when_the_command_arrives(floating_model):
    """With a command lead δ the command sent at s is the policy's action at s + δ, at the
    measured state carried δ along by its speeds (the motors obey it from s + δ)."""
    model = floating_model
    lay = ModelLayout.of(model)
    qpos = model.qpos0.copy()
    gains = np.zeros((2, model.nu, lay.nx))
    gains[:, :, 0] = 2.0  # feedback on the base's x position
    pol = Policy.build(lay, np.array([0.0, 0.1]), np.stack([qpos, qpos]),
                       np.zeros((2, model.nv)), np.zeros((2, 0)),
                       np.stack([np.zeros(model.nu), np.full(model.nu, 1.0)]), gains)
    qvel = np.zeros(model.nv)
    qvel[0] = 0.5  # moving along x: δ later it is 0.5 δ further
    state = PlantState(0.05, qpos.copy(), qvel, np.zeros(0))
    lead = 0.008
    plant = RecordingPlant()
    FeedbackController(plant, model.nu, timeout=0.3, gain=0.5, lead=lead,
                       model=model).step(pol, state)
    ahead = qpos.copy()
    ahead[0] += 0.5 * lead
    expected, _ = pol.action(0.05 + lead, ahead, qvel, np.zeros(0), feedback=0.5)
    np.testing.assert_allclose(plant.sent[0], expected, rtol=1e-12)
    now, _ = pol.action(0.05, qpos, qvel, np.zeros(0), feedback=0.5)
    assert not np.allclose(plant.sent[0], now)  # not what the law without a lead sends
    np.testing.assert_array_equal(state.qpos, qpos)  # the measured state is left alone


def test_a_command_lead_needs_the_model_and_cannot_be_negative(floating_model):
    with pytest.raises(ValueError, match="command lead"):
        FeedbackController(RecordingPlant(), floating_model.nu, timeout=0.3, lead=0.01)
    with pytest.raises(ValueError, match="command lead"):
        FeedbackController(RecordingPlant(), floating_model.nu, timeout=0.3, lead=-0.01,
                           model=floating_model)
