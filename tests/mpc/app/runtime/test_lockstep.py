"""Lockstep runs: progress toward the goal, determinism, rates."""

import numpy as np
import pytest

from mpc.app.config import load_config
from mpc.app.runtime.lockstep import run_lockstep
from mpc.app.runtime.session import Session


def run(tmp_path, duration, *overrides):
    cfg = load_config("configs/a1_trot.yaml", ["runtime.mode=lockstep", "derivatives.backend=fd",
                                               *overrides])
    session = Session(cfg, tmp_path)
    run_lockstep(session, duration)
    summary = session.close("lockstep")
    return summary, np.load(tmp_path / "timeseries.npz")


@pytest.fixture(scope="module")
def trot(tmp_path_factory):
    return run(tmp_path_factory.mktemp("trot"), 2.0)


def test_a1_makes_progress_toward_the_goal(trot):
    summary, series = trot
    assert not summary["fell"]
    assert summary["goal_distance_start_m"] == pytest.approx(2.0)
    assert summary["goal_distance_end_m"] < 1.5
    # it trots: every foot leaves the ground at some point and lands again
    contacts = series["state_contacts"][50:]
    assert np.all(contacts.min(axis=0) == 0) and np.all(contacts.max(axis=0) == 1)


def test_rates_are_the_configured_ones_in_lockstep(trot):
    summary, _ = trot
    configured = load_config("configs/a1_trot.yaml").runtime.planning_rate
    assert summary["planning_rate_hz"] == pytest.approx(configured, rel=0.03)
    assert summary["feedback_rate_hz"] == pytest.approx(250, rel=0.03)  # 300 Hz on a 2 ms grid
    assert summary["failed_iterations"] == 0


def test_same_seed_same_result(tmp_path):
    _a, sa = run(tmp_path / "a", 0.2, "plant.init_noise=0.02", "runtime.seed=3")
    _b, sb = run(tmp_path / "b", 0.2, "plant.init_noise=0.02", "runtime.seed=3")
    _c, sc = run(tmp_path / "c", 0.2, "plant.init_noise=0.02", "runtime.seed=4")
    np.testing.assert_array_equal(sa["state_qpos"], sb["state_qpos"])
    assert not np.array_equal(sa["state_qpos"], sc["state_qpos"])


@pytest.mark.parametrize("dry_run", [False, True])
def test_a_fall_stops_the_run_except_in_a_dry_run(tmp_path, dry_run):
    """Nothing is commanded in a dry run (the robot may lie on a table or hang on a gantry),
    so a fall is recorded but does not end it."""
    from mpc.app.plants.plant_base import PlantState

    cfg = load_config("configs/a1_trot.yaml", ["runtime.mode=lockstep",
                                                f"safety.dry_run={str(dry_run).lower()}"])
    session = Session(cfg, tmp_path)
    state = session.plant.read_state()
    lying = state.qpos.copy()
    lying[2] = 0.05
    keep_going = session.observe(PlantState(state.time, lying, state.qvel, state.act))
    session.close("lockstep")
    assert session.fell is not None
    assert keep_going == dry_run
