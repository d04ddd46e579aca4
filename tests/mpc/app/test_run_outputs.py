"""A run's outputs hold in every case: summary.json and mpc-run's last line are strict JSON
(null for what was not measured), and a run that fails leaves error.log in its run
directory, whether it failed while being built, in a realtime thread or in the loop."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from mpc.app import assembly, cli
from mpc.app.config import load_config
from mpc.app.record.recorder import strict_json
from mpc.app.run import run
from mpc.app.runtime.session import Session

LOCKSTEP = ["a1_trot", "--mode", "lockstep", "--duration", "0.02", "--quiet"]


def strict_loads(text: str):
    """json.loads that rejects NaN/Infinity, as strict readers (jq, JavaScript) do."""
    def reject(token):
        raise ValueError(f"not JSON: {token}")
    return json.loads(text, parse_constant=reject)


def test_strict_json_writes_null_for_nan_and_infinities_and_plain_numbers_for_numpy():
    value = {"a": math.nan, "b": [math.inf, -math.inf, 1.5], "c": np.float64("nan"),
             "d": np.array([1.0, np.nan]), "e": np.int64(3), "f": np.bool_(True), "g": None}
    assert strict_loads(strict_json(value)) == {"a": None, "b": [None, None, 1.5], "c": None,
                                                "d": [1.0, None], "e": 3, "f": True, "g": None}


@pytest.fixture
def no_planning(monkeypatch):
    """Runs in which the planner never runs: nothing about it is measured."""
    monkeypatch.setattr(Session, "plan", lambda self, state: None)


def test_a_run_that_plans_nothing_writes_strict_json(no_planning, tmp_path, capsys):
    out = tmp_path / "run"
    assert cli.main([*LOCKSTEP, "--out", str(out)]) == 0
    summary = strict_loads((out / "summary.json").read_text())
    assert summary["planner_iterations"] == 0
    assert summary["iteration_ms_median"] is None and summary["iteration_ms_p95"] is None
    assert summary["derivative_ms_median"] is None
    assert summary["final_term_costs"] is None and abs(summary["final_base_yaw"]) < 1e-3
    last = strict_loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert last["iteration_ms_median"] is None


def test_an_error_while_building_the_run_goes_to_error_log(monkeypatch, tmp_path, capsys):
    def broken(cfg, task):
        raise RuntimeError("the planner could not be built")

    monkeypatch.setattr(assembly, "build_planner", broken)
    out = tmp_path / "run"
    assert cli.main([*LOCKSTEP, "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"mpc-run: internal error, traceback in {out / 'error.log'}"]
    log = (out / "error.log").read_text()
    assert "Traceback" in log and "the planner could not be built" in log


def test_a_user_error_while_building_the_run_goes_to_error_log_too(monkeypatch, tmp_path,
                                                                    capsys):
    def unreachable(cfg, run_dir=None):
        raise OSError("no robot answers at 192.168.123.10")

    monkeypatch.setattr(assembly, "make_plant", unreachable)
    out = tmp_path / "run"
    assert cli.main([*LOCKSTEP, "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip() == \
        "mpc-run: error: no robot answers at 192.168.123.10"
    assert (out / "error.log").read_text() == "no robot answers at 192.168.123.10\n"


def test_an_error_in_a_realtime_thread_goes_to_error_log(monkeypatch, tmp_path):
    def broken(self, state):
        raise RuntimeError("the feedback thread failed")

    monkeypatch.setattr(Session, "act", broken)
    cfg = load_config("a1_trot", ["runtime.mode=realtime", "runtime.duration=0.5"])
    out = tmp_path / "run"
    with pytest.raises(RuntimeError, match="the feedback thread failed"):
        run(cfg, out=out)
    assert "the feedback thread failed" in (out / "error.log").read_text()
    assert strict_loads((out / "summary.json").read_text())["mode"] == "realtime"
