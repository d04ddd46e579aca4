"""What a run directory records for the plots and the replay, checked against the run."""

import json
import re

import numpy as np
import pytest

from mpc.tasks.gait import QUADRUPED_GAITS, step_height
from mpc.tasks.task_base import base_yaw

A1_TORQUE_LIMIT = 33.5


def test_planned_contacts_follow_the_gait_schedule(trot_run):
    z = np.load(trot_run / "timeseries.npz")
    trot = QUADRUPED_GAITS["trot"]
    t = z["state_time"]
    lift = step_height(2 * np.pi * trot.cadence * t, np.array(trot.offsets), trot.duty,
                       trot.amplitude)
    np.testing.assert_array_equal(z["state_planned_contacts"], lift == 0)
    # a trot: diagonal pairs alternate, each foot in the air for part of the cycle
    assert 0.3 < z["state_planned_contacts"].mean() < 0.7


def test_actuator_forces_feedback_steps_and_wall_time_per_state_sample(trot_run):
    z = np.load(trot_run / "timeseries.npz")
    n = len(z["state_time"])
    force = z["state_actuator_force"]
    assert force.shape == (n, 12)
    assert np.abs(force).max() <= A1_TORQUE_LIMIT + 1e-6
    assert np.abs(force).max() > 1.0  # the legs carry the robot
    assert np.all(np.diff(z["state_feedback_steps"]) >= 0)
    assert z["state_feedback_steps"][-1] > 0
    assert np.all(np.diff(z["state_wall_time"]) > 0)


def test_planned_paths_and_goal_per_iteration(trot_run):
    z = np.load(trot_run / "timeseries.npz")
    n = len(z["plan_time"])
    base, feet = z["plan_base_path"], z["plan_foot_paths"]
    assert base.shape[0] == n and base.shape[2] == 3
    assert feet.shape == (n, 4, base.shape[1], 3)
    # the nominal starts at the measured state: the base path starts over the base
    i = np.searchsorted(z["state_time"], z["plan_time"])
    np.testing.assert_allclose(base[:, 0, :2], z["state_qpos"][i, :2], atol=0.05)
    assert np.all(np.abs(feet[..., 2]) < 0.15)  # feet near the ground
    np.testing.assert_array_equal(z["plan_goal"], np.tile([2.0, 0.0], (n, 1)))


def test_events_carry_their_simulated_time(damped_run):
    z = np.load(damped_run / "timeseries.npz")
    messages = list(z["event_message"])
    damping = next(i for i, m in enumerate(messages) if m.startswith("plant damping: tilt"))
    fall = next(i for i, m in enumerate(messages) if m.startswith("robot fell at"))
    assert z["event_level"][damping] == "WARNING" and z["event_level"][fall] == "ERROR"
    # the fall message states its time itself; events carry the latest recorded state's
    stated = float(re.search(r"t=([\d.]+) s", messages[fall])[1])
    assert stated - 0.01 - 1e-9 <= z["event_time"][fall] <= stated
    # damping tripped at the first state beyond 0.004 rad of pitch or roll, before the fall
    assert 0.0 < z["event_time"][damping] < z["event_time"][fall]
    assert "plant damping" in (damped_run / "events.log").read_text()


def test_a_simulation_behind_the_safety_layer_reports_contacts_and_forces(damped_run):
    z = np.load(damped_run / "timeseries.npz")
    assert z["state_contacts"][:5].any(axis=0).all()  # standing at the start
    assert np.abs(z["state_actuator_force"]).max() > 1.0


def test_the_summary_states_the_final_yaw_and_each_terms_final_cost(trot_run):
    summary = json.loads((trot_run / "summary.json").read_text())
    z = np.load(trot_run / "timeseries.npz")
    # the summary reads the state at the end, the series samples it at 100 Hz
    assert summary["final_base_yaw"] == pytest.approx(base_yaw(z["state_qpos"][-1]), abs=0.01)
    costs = summary["final_term_costs"]
    assert list(costs) == list(z["term_names"])
    last = z["plan_term_costs"][np.isfinite(z["plan_term_costs"]).all(axis=1)][-1]
    np.testing.assert_array_equal(list(costs.values()), last)
    assert costs["position"] > 0.0  # 1.5 s into a walk to a goal 2 m ahead
