"""The feedback law never sends non-finite commands and damps on an expired policy."""

import numpy as np

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
