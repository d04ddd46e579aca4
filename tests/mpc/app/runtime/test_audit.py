"""The derivative audit in a run: its checks in the run directory and the summary, the
dashboard's status, a disagreement saved as a state a test can replay, and the switch to fd."""

from __future__ import annotations

import csv
import json
import time

import mujoco
import numpy as np
import pytest

import derivatives
from derivatives.oracle import oracle_model
from mpc.app.config import ConfigError, load_config
from mpc.app.runtime.audit import load_state
from mpc.app.runtime.lockstep import run_lockstep
from mpc.app.runtime.session import Session


def audited_run(tmp_path, duration, *audit):
    cfg = load_config("configs/a1_trot.yaml", ["runtime.mode=lockstep",
                                                "derivatives.backend=analytic", *audit])
    session = Session(cfg, tmp_path)
    run_lockstep(session, duration)
    if session.audit.settings.switch_to_fd:
        # the low-priority worker may finish its first check only after the run: wait for
        # it, then one more iteration, which must run on fd
        deadline = time.monotonic() + 60
        while not session.audit.switch_requested and time.monotonic() < deadline:
            time.sleep(0.05)
        session.plan(session.plant.read_state())
    summary = session.close("lockstep")
    return session, session.audit.latest(), summary


@pytest.fixture(scope="module")
def flagged(tmp_path_factory):
    """Every check a disagreement (threshold below rounding), fd requested on the first."""
    path = tmp_path_factory.mktemp("audit")
    session, status, summary = audited_run(
        path, 0.3, "derivatives.audit.every=1", "derivatives.audit.threshold=1.0e-300",
        "derivatives.audit.switch_to_fd=true")
    return path, session, status, summary


def test_audit_writes_its_checks_and_statistics(flagged):
    path, _, status, summary = flagged
    audit = summary["derivative_audit"]
    assert json.loads((path / "summary.json").read_text())["derivative_audit"] == audit
    with open(path / "audit.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == audit["checks"] >= 1
    errors = [float(r["err"]) for r in rows]
    assert audit["worst_error"] == pytest.approx(max(errors))
    assert (path / "audit.png").stat().st_size > 0
    # what the dashboard shows: checks, last, worst, disagreements
    assert status == (audit["checks"], errors[-1], max(errors), audit["disagreements"])


def test_a_disagreement_is_logged_saved_replayable_and_switches_to_fd(flagged):
    path, session, _, summary = flagged
    audit = summary["derivative_audit"]
    assert audit["disagreements"] >= 1 and audit["switched_to_fd"]
    assert "disagrees with centered finite differences" in (path / "events.log").read_text()
    assert session.planner.provider.name == "fd"
    saved = sorted((path / "audit").glob("disagreement_*.npz"))
    assert len(saved) == audit["disagreements"]
    m, d, arrays = load_state(saved[0])
    A, B = derivatives.make_provider("analytic", m, threads=1).transition(d)
    np.testing.assert_allclose(A, arrays["A"], rtol=0, atol=1e-9 * np.abs(A).max())
    np.testing.assert_allclose(B, arrays["B"], rtol=0, atol=1e-9 * np.abs(B).max())
    oracle = oracle_model(m)
    A_fd, B_fd = np.zeros_like(A), np.zeros_like(B)
    mujoco.mjd_transitionFD(oracle, d, float(arrays["eps"]), True, A_fd, B_fd, None, None)
    np.testing.assert_allclose(A_fd, arrays["A_fd"], rtol=0, atol=1e-9 * np.abs(A_fd).max())


def test_analytic_derivatives_pass_the_audit(tmp_path):
    _, _, summary = audited_run(tmp_path, 0.3, "derivatives.audit.every=2")
    audit = summary["derivative_audit"]
    assert audit["checks"] >= 1 and audit["disagreements"] == 0
    assert audit["worst_smooth_error"] is None or audit["worst_smooth_error"] < 1e-3
    assert not (tmp_path / "audit").exists()


def test_audit_settings_are_checked():
    with pytest.raises(ConfigError, match="threshold"):
        load_config("configs/a1_trot.yaml", ["derivatives.audit.every=3",
                                             "derivatives.audit.threshold=-1"])
    with pytest.raises(ConfigError, match="evry"):
        load_config("configs/a1_trot.yaml", ["derivatives.audit.evry=3"])


def test_each_check_is_in_audit_csv_as_soon_as_it_is_done(tmp_path):
    """The audit keeps no list of its checks (a day's run would hold them all): each goes to
    audit.csv when it finishes, where a run killed before its close leaves it too."""
    cfg = load_config("configs/a1_trot.yaml", ["runtime.mode=lockstep",
                                               "derivatives.audit.every=2"])
    session = Session(cfg, tmp_path)
    try:
        run_lockstep(session, 0.2)
        deadline = time.monotonic() + 120  # the worker runs at the lowest priority
        while (session.audit.latest() or (0,))[0] < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        checks = session.audit.latest()[0]
        with open(tmp_path / "audit.csv") as f:  # before the close
            rows = list(csv.DictReader(f))
        assert len(rows) >= checks >= 2
    finally:
        summary = session.close("lockstep")
    assert summary["derivative_audit"]["checks"] >= len(rows)


def test_the_audit_checks_where_the_task_moved_its_terrain(tmp_path):
    """Planning on a map given whole, the task raises the map to meet the standing feet before
    each plan (mpc.tasks.map_ground.MapGround.register): the audit follows the map's pose, so
    the analytic derivatives agree with it (checked on the map's pose the audit's model was
    copied with, a knot near the feet's contacts disagrees)."""
    cfg = load_config("configs/go2_hw_terrain.yaml", [
        "runtime.mode=lockstep", "output.mcap=false", "plant={type: sim, terrain: flat}",
        "task.ground=map", "task.map=configs/maps/step_8cm.yaml",
        "derivatives.audit.every=1", "derivatives.audit.threshold=0.05"])
    session = Session(cfg, tmp_path)
    run_lockstep(session, 0.2)
    deadline = time.monotonic() + 120  # the worker runs at the lowest priority
    while (session.audit.latest() or (0,))[0] < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    shift = session.task.map_ground.shift
    summary = session.close("lockstep")
    assert abs(shift) > 1e-4  # the map was moved
    audit = summary["derivative_audit"]
    assert audit["checks"] >= 2 and audit["disagreements"] == 0, audit
