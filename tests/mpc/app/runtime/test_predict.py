"""Planning ahead: the predicted state is the planning model rolled forward under the policy
in force, by the median recent planning time."""

import mujoco
import numpy as np
import pytest

from common.trajectory import ModelLayout
from mpc.app.plants.plant_base import PlantState
from mpc.app.runtime.predict import StatePredictor
from mpc.planner.policy import Policy


def falling_state(model) -> PlantState:
    qvel = np.zeros(model.nv)
    qvel[0], qvel[5] = 0.3, 1.0  # moving sideways, spinning
    return PlantState(2.0, model.qpos0.copy(), qvel, np.zeros(model.na))


def feedback_policy(model, state) -> Policy:
    """Hold the nominal controls with feedback gains on every state coordinate."""
    lay = ModelLayout.of(model)
    gains = np.full((2, model.nu, lay.nx), 0.5)
    return Policy.build(lay, np.array([state.time, state.time + 1.0]),
                        np.stack([state.qpos] * 2), np.zeros((2, model.nv)),
                        np.zeros((2, model.na)), np.full((2, model.nu), 0.2), gains)


def test_no_lead_returns_the_measured_state(floating_model):
    state = falling_state(floating_model)
    predictor = StatePredictor(floating_model, feedback_gain=1.0)
    assert predictor.lead == 0.0
    assert predictor.predict(state, feedback_policy(floating_model, state)) is state


def test_lead_is_the_median_planning_time(floating_model):
    predictor = StatePredictor(floating_model, feedback_gain=1.0, window=3)
    predictor.note(2.5)  # compiling: too few samples to trust
    predictor.note(0.04)
    assert predictor.lead == 0.0
    for seconds in (0.06, 0.05):  # the oldest falls out of the window
        predictor.note(seconds)
    assert predictor.lead == 0.05
    for seconds in (0.3, 0.4, 0.5):  # a starved planner: the lead stays short
        predictor.note(seconds)
    assert predictor.lead == predictor.max_lead == 0.1


def test_prediction_rolls_the_policy_forward(floating_model):
    model = floating_model
    model.opt.timestep = 0.01
    state = falling_state(model)
    policy = feedback_policy(model, state)
    predictor = StatePredictor(model, feedback_gain=0.5)
    for _ in range(3):
        predictor.note(0.052)  # rounds to 5 steps
    predicted = predictor.predict(state, policy)

    d = mujoco.MjData(model)
    d.time, d.qpos[:], d.qvel[:] = state.time, state.qpos, state.qvel
    for _ in range(5):
        d.ctrl[:], _ = policy.action(d.time, d.qpos, d.qvel, d.act, feedback=0.5)
        mujoco.mj_step(model, d)
    assert predicted.time == pytest.approx(state.time + 0.05)
    np.testing.assert_array_equal(predicted.qpos, d.qpos)
    np.testing.assert_array_equal(predicted.qvel, d.qvel)
    assert not np.allclose(predicted.qpos, state.qpos)


def test_non_finite_prediction_falls_back_to_the_measured_state(floating_model):
    state = falling_state(floating_model)
    policy = feedback_policy(floating_model, state)
    bad = Policy.build(policy.layout, policy.times, policy.qpos, policy.qvel, policy.act,
                       policy.ctrl, policy.gains * np.nan)
    predictor = StatePredictor(floating_model, feedback_gain=1.0)
    for _ in range(3):
        predictor.note(0.02)
    assert predictor.predict(state, bad) is state
