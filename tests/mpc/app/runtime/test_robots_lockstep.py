"""Short closed-loop lockstep runs of the shipped Go1, Go2 and H1 configs: progress toward the
goal, reaching and holding a posture, stepping, without falling. The full-length acceptance
runs are in scripts/eval_robots.py."""

import numpy as np
import pytest

from mpc.app.config import load_config
from mpc.app.runtime.lockstep import run_lockstep
from mpc.app.runtime.session import Session
from mpc.tasks.task_base import base_axes


def run(tmp_path, config, duration, *overrides):
    cfg = load_config(config, ["runtime.mode=lockstep", "derivatives.backend=fd", *overrides])
    session = Session(cfg, tmp_path)
    run_lockstep(session, duration)
    summary = session.close("lockstep")
    with np.load(tmp_path / "timeseries.npz") as npz:
        return summary, {k: npz[k] for k in npz.files}


def feet_lift_offs(series) -> np.ndarray:
    """How many times each foot left the ground."""
    return (np.diff(series["state_contacts"].astype(int), axis=0) == -1).sum(axis=0)


@pytest.mark.parametrize("robot", ["go1", "go2"])
def test_quadruped_trots_toward_the_goal(tmp_path, robot):
    summary, series = run(tmp_path, f"configs/{robot}_trot.yaml", 1.5)
    assert not summary["fell"] and summary["failed_iterations"] == 0
    assert summary["goal_distance_start_m"] == pytest.approx(2.0)
    # measured on native, AVX2 and generic targets: Go1 1.06 m, Go2 1.11 m
    assert summary["goal_distance_end_m"] < 1.4
    assert np.all(feet_lift_offs(series) >= 2)


def test_go1_rears_up_onto_its_hind_legs_and_stays_up(tmp_path):
    """As shipped: analytic derivatives, which cover its self-contacts (no fd fallback)."""
    summary, series = run(tmp_path, "configs/go1_biped.yaml", 2.0, "derivatives.backend=analytic")
    assert not summary["fell"] and summary["fd_evaluations"] == 0
    t = series["state_time"]
    body_axis_up = np.array([base_axes(q)[2, 0] for q in series["state_qpos"]])
    assert body_axis_up[0] == pytest.approx(0.0, abs=1e-6)  # starts on four legs
    # for the last 0.5 s: body axis within 20 degrees of vertical, base well above its
    # four-legged height (0.29 m); balancing, it bobs by several centimetres (0.395-0.55 m
    # measured), and by how much depends on rounding in the planner's kernels
    last = t > t[-1] - 0.5
    assert np.all(body_axis_up[last] > np.cos(np.radians(20)))
    assert np.all(series["state_qpos"][last, 2] > 0.35)


def test_h1_stands(tmp_path):
    summary, series = run(tmp_path, "configs/h1_stand.yaml", 1.5)
    assert not summary["fell"] and summary["failed_iterations"] == 0
    qpos = series["state_qpos"]
    assert np.all(np.abs(qpos[:, 2] - qpos[0, 2]) < 0.02)
    assert np.all([base_axes(q)[2, 2] > np.cos(np.radians(2)) for q in qpos])
    assert series["state_contacts"].all()  # both feet stay down


def test_h1_steps_and_walks_toward_the_goal(tmp_path):
    summary, series = run(tmp_path, "configs/h1_trot.yaml", 2.5, "task.hold_time=0.5")
    assert not summary["fell"] and summary["failed_iterations"] == 0
    assert np.all(feet_lift_offs(series) >= 3)
    # Its first steps touch down at the contact switch, where a forward difference of a position
    # once straddled it and became gains that saturated the motors: whether the H1 walked then
    # hung on the rounding (0.47 m here, 0.13 m with OpenBLAS's AVX2 kernels, as on an AVX2-only
    # EPYC). With the fd backend's position columns on the nominal's side of the switch
    # (derivatives/fd.py) it walks 0.47-0.50 m with numba, numpy and OpenBLAS on this CPU's,
    # AVX2 and generic kernels, with 1 or 2 threads and with initial joint noise: 0.2 m leaves
    # a margin of 0.27 m, ten times the spread.
    assert summary["goal_distance_end_m"] < summary["goal_distance_start_m"] - 0.2


def test_h1_walks_at_the_commanded_speed(tmp_path):
    """h1_hw_velocity as shipped (analytic derivatives, its 0.35 s horizon) on the simulated
    robot, commanded 0.3 m/s from the start. With the capture point measured from the feet
    (not relative to the commanded walk) it walked 0.21 m/s here; 0.31 m/s with it."""
    summary, series = run(tmp_path, "configs/h1_hw_velocity.yaml", 4.0,
                          "derivatives.backend=analytic", "plant={type: sim, timestep: 0.002}",
                          "command.source={type: scripted, profile: [[0, 0.3, 0, 0]]}")
    assert not summary["fell"] and summary["failed_iterations"] == 0
    t, x = series["state_time"], series["state_qpos"][:, 0]
    last = t >= t[-1] - 2.0  # the command reached 0.3 m/s at 1 s
    speed = (x[last][-1] - x[last][0]) / (t[last][-1] - t[last][0])
    assert speed > 0.26
