"""scripts/eval_sysid.py's velocity-profile figures: the steady seconds of a profile, and the
fake robot's true base velocity at the states the controller read."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import robots

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import eval_sysid

from mpc.tasks.task_base import body_velocity


def test_steady_profile_leaves_out_the_seconds_the_command_changes():
    # 100 Hz for 4 s: standing, then a ramp to 0.3 m/s within second 1, then 0.3 m/s; the
    # times summed from steps as a run's clock does (the last one a rounding error short of 4)
    t = np.concatenate(([0.0], np.cumsum(np.full(400, 0.01))))
    assert t[-1] < 4.0
    command = np.zeros((401, 3))
    command[:, 0] = np.clip((t - 1.2) / 0.6, 0.0, 1.0) * 0.3
    velocity = command.copy()
    velocity[:, 0] -= np.where(t < 1.0, 0.0, np.where(t < 2.0, 0.1, 0.004))  # lag, then 4 mm/s
    velocity[:, 1] += 0.003 * (t >= 3.0)
    velocity[:, 2] += 0.002
    # a sway within each second averages out
    velocity[:, 0] += 0.05 * np.sin(2 * np.pi * 2 * t)
    fig = eval_sysid.steady_profile(t, velocity, command)
    assert fig["steady_seconds"] == 3  # seconds 0, 2, 3; second 1 holds the ramp
    # per steady second (vx, vy): (0, 0), (-4, 0), (-4, 3) mm/s
    assert fig["steady_vxy_mm"] == pytest.approx(np.sqrt((16 + 16 + 9) / 6), abs=1e-6)
    assert fig["worst_vxy_mm"] == pytest.approx(4.0, abs=1e-6)
    assert fig["steady_yaw_mrad"] == pytest.approx(2.0, abs=1e-6)


def test_steady_profile_without_a_steady_second_is_nan():
    t = np.arange(150) / 100.0
    command = np.zeros((150, 3))
    command[:, 0] = t * 0.1  # the command never holds
    fig = eval_sysid.steady_profile(t, command, command)
    assert fig["steady_seconds"] == 0 and np.isnan(fig["steady_vxy_mm"])


def test_truth_plant_reports_the_true_twist_of_each_state_read():
    plant = eval_sysid._TruthPlant(robots.info("go1"))
    plant.sim.data.qvel[0:3] = [0.4, -0.2, 0.0]  # the base moving: a twist worth checking
    plant.sim.data.qvel[5] = 0.3
    states = []
    for _ in range(5):
        states.append(plant.read_state())  # the true base state: no base_state estimator
        plant.read_state()  # a second read at the same time changes nothing
        plant.step()
    times = np.array([s.time for s in states])
    assert len(set(times)) == 5
    expected = np.array([body_velocity(s.qpos, s.qvel) for s in states])
    assert np.abs(expected[0, :2]).max() > 0.1
    np.testing.assert_allclose(plant.true_velocity(times), expected, atol=1e-12)


def test_coverage_counts_each_figure_in_its_standard_deviations():
    from mpc.app.sysid.actuators import ActuatorFit, JointFit
    from mpc.app.sysid.identify import Identification
    from mpc.app.sysid.trunk import TrunkFit
    from robots.overlay import Overlay

    truth = eval_sysid.draw("go1", 0)
    joint, params = next(iter(truth.joints.items()))
    true = params.as_dict()
    values = {k: v + 0.1 for k, v in true.items()}  # 0.1 off each
    std = {"armature": 0.02, "damping": 0.1, "frictionloss": 1.0, "kp": 0.0}
    fit = ActuatorFit(truth.delay + 0.002 + 0.003, 0.001,  # loop delay: 3 ms off
                      [JointFit(joint, values, std, 0.0, 1.0, 100)])
    body = TrunkFit(truth.trunk_mass - 0.4, np.add(truth.trunk_com, (0.01, 0.0, -0.02)),
                    0.1, np.array([0.005, 0.01, 0.01]), 0.0, 1.0, 100)
    nominal = Overlay("go1", {})
    ident = Identification("go1", nominal, fit, body, [], [])
    z = eval_sysid.coverage(truth, ident)
    assert z["armature"] == [pytest.approx(5.0)] and z["damping"] == [pytest.approx(1.0)]
    assert z["frictionloss"] == [pytest.approx(0.1)] and z["kp"] == [float("inf")]
    assert z["delay"] == [pytest.approx(3.0)]  # the overlay's delay: the loop's less 2 ms
    assert z["trunk_mass"] == [pytest.approx(4.0)]
    assert z["trunk_com"] == [pytest.approx(2.0), pytest.approx(0.0), pytest.approx(2.0)]
    rows = eval_sysid.coverage_rows([{"sigmas": z}, {"sigmas": z}])
    com = next(r for r in rows if r["figure"] == "trunk_com")
    assert com["n"] == 6 and com["within_2_sd_%"] == 100.0 and com["worst_sd"] == 2.0
    kp = next(r for r in rows if r["figure"] == "kp")
    assert kp["within_2_sd_%"] == 0.0
