"""Closing a run: the plant first whatever fails, every other step whatever fails before it,
and Ctrl-C (once to stop, again while closing) never costs the record."""

from __future__ import annotations

import json
import os
import signal
import sys

import numpy as np
import pytest

import robots
from mpc.app import assembly, cli
from mpc.app.commands.scripted import ScriptedCommand
from mpc.app.observers.observer_base import Observer
from mpc.app.plants.sim_plant import SimPlant
from mpc.app.record import recorder
from mpc.app.record.reader import load_run
from mpc.app.record.store import INCREMENTAL
from mpc.app.run import run
from mpc.app.runtime.audit import DerivativeAudit
from mpc.app.runtime.session import Session


class CountingPlant(SimPlant):
    """A simulated A1 that counts its closes (and can fail in it, after closing)."""

    def __init__(self, fail: bool = False):
        super().__init__(robots.info("a1"))
        self.closes = 0
        self.fail = fail

    def close(self) -> None:
        self.closes += 1
        super().close()
        if self.fail:
            raise RuntimeError("boom: the plant's close")


class Watcher(Observer):
    """Notes whether the plant was closed when the observers are; can fail in its close."""

    def __init__(self, plant: CountingPlant, fail: bool = False):
        self.plant, self.fail = plant, fail
        self.plant_closed_before = None

    def close(self, summary: dict) -> None:
        self.plant_closed_before = self.plant.closes > 0
        if self.fail:
            raise RuntimeError("boom: an observer's close")


def boom(what: str):
    def fail(*_args, **_kwargs):
        raise RuntimeError(f"boom: {what}")
    return fail


def failing_planner(monkeypatch):
    build = assembly.build_planner

    def build_failing(cfg, task):
        planner = build(cfg, task)
        close = planner.close

        def close_then_fail():
            close()
            raise RuntimeError("boom: the planner's close")
        planner.close = close_then_fail
        return planner
    monkeypatch.setattr(assembly, "build_planner", build_failing)


#: Where a step of the close fails: (config, extra overrides, how to make it fail).
FAILURES = {
    "summary": ("a1_trot", [], lambda mp: mp.setattr(Session, "summary", boom("summary"))),
    "plant": ("a1_trot", [], None),
    "planner": ("a1_trot", [], failing_planner),
    "observer": ("a1_trot", [], None),
    "command source": ("a1_velocity", [], lambda mp: mp.setattr(
        ScriptedCommand, "close", boom("command source"), raising=False)),
    "derivative audit": ("a1_trot", ["derivatives.audit.every=1000"],
                         lambda mp: mp.setattr(DerivativeAudit, "close", boom("audit"))),
}


@pytest.mark.parametrize("where", list(FAILURES))
def test_a_failing_step_of_the_close_still_closes_the_plant_and_writes_the_record(
        where, tmp_path, monkeypatch):
    config, extra, make_fail = FAILURES[where]
    if make_fail is not None:
        make_fail(monkeypatch)
    plant = CountingPlant(fail=where == "plant")
    watchers: list[Watcher] = []

    def watcher(session):
        watchers.append(Watcher(plant, fail=where == "observer"))
        return watchers[-1]

    with pytest.raises(RuntimeError, match="boom"):
        run(config, ["runtime.mode=lockstep", "runtime.duration=0.1", *extra], out=tmp_path,
            observers=[watcher], plant=plant)
    assert plant.closes == 1
    assert watchers[0].plant_closed_before  # the plant came first
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["robot"] == "a1" and summary["mode"] == "lockstep"
    if where == "summary":
        assert "summary_error" in summary
    else:
        assert summary["sim_time_s"] == pytest.approx(0.1)
    with np.load(tmp_path / "timeseries.npz") as z:
        assert len(z["state_time"]) >= 10
    assert "boom" in (tmp_path / "error.log").read_text()
    assert "closing the run" in (tmp_path / "events.log").read_text()


def test_a_time_series_that_cannot_be_written_leaves_the_summary_and_the_incremental_record(
        tmp_path, monkeypatch):
    monkeypatch.setattr(recorder, "write_npz", boom("no space left on device"))
    with pytest.raises(RuntimeError, match="no space left"):
        run("a1_trot", ["runtime.mode=lockstep", "runtime.duration=0.1"], out=tmp_path)
    assert json.loads((tmp_path / "summary.json").read_text())["sim_time_s"] == \
        pytest.approx(0.1)
    assert not (tmp_path / "timeseries.npz").exists()
    assert (tmp_path / INCREMENTAL).is_dir()
    recorded = load_run(tmp_path)
    assert not recorded.closed and recorded.series["state_time"][-1] == pytest.approx(0.1)


# --- Ctrl-C --------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["lockstep", "realtime"])
def test_ctrl_c_ends_the_run_and_a_second_one_during_the_close_loses_nothing(
        mode, tmp_path, monkeypatch, capsys):
    """SIGINT at 0.3 s of plant time, and again while the plant closes: the run stops
    there, closes completely, and mpc-run says it was interrupted (exit code 130), not that
    it never started."""
    step, close = SimPlant.step, SimPlant.close
    sent = []

    def step_and_interrupt(self):
        step(self)
        if not sent and self.data.time >= 0.3:
            sent.append(self.data.time)
            os.kill(os.getpid(), signal.SIGINT)

    def interrupt_and_close(self):
        os.kill(os.getpid(), signal.SIGINT)
        close(self)

    monkeypatch.setattr(SimPlant, "step", step_and_interrupt)
    monkeypatch.setattr(SimPlant, "close", interrupt_and_close)
    out = tmp_path / "run"
    code = cli.main(["a1_trot", "--mode", mode, "--duration", "20", "--quiet", "--out",
                     str(out)])
    err = capsys.readouterr().err
    assert code == cli.EXIT_INTERRUPTED, err
    assert "before the run started" not in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] and summary["sim_time_s"] < 3.0
    with np.load(out / "timeseries.npz") as z:
        # every state the controller read is kept: in lockstep it reads the one the signal
        # came with; in real time the signal may come between its 300 Hz reads (0.298 s was
        # seen), or a loaded machine may delay one: three reads' time
        assert z["state_time"][-1] >= sent[0] - (0.01 if mode == "realtime" else 1e-9)
    events = (out / "events.log").read_text()
    assert "interrupted by SIGINT" in events
    assert "SIGINT ignored: the run is closing" in events
    assert not (out / "error.log").exists()


class SignalledLinkPlant(SimPlant):
    """A simulated A1 standing in for a robot's link process that gets a signal of its own:
    the ``report``-th time the run asks why the robot is in damping (Session.trip_reason, the
    run's reads of the reason; the plant's own reads while commanding do not count), the read
    brings the link's report, the reason and the signal at once, as the link plant's drain of
    its pipe does. Runs on its own clock: the realtime loop does not step it."""

    realtime_only = True

    def __init__(self, report: int):
        self._reason: str | None = None
        self.asked, self.report = 0, report
        super().__init__(robots.info("a1"))

    @property
    def damping_reason(self) -> str | None:
        if sys._getframe(1).f_code.co_name == "trip_reason":
            self.asked += 1
            if self.asked == self.report:
                self.interrupted_by, self._reason = "SIGINT", "e-stop: SIGINT"
        return self._reason

    @damping_reason.setter
    def damping_reason(self, value: str | None) -> None:
        self._reason = value


@pytest.mark.parametrize("report", [20, 21])
def test_a_signal_the_link_reports_interrupts_the_run_whichever_read_brings_it(
        report, tmp_path):
    """The run asks for the damping reason more than once per step of its main loop: whichever
    read brings the link's report of a signal, the run ends interrupted by it (exit code 130 in
    mpc-run), not as a trip (before, a report brought by the step's last read ended the run as
    tripped)."""
    plant = SignalledLinkPlant(report)
    summary = run("a1_trot", ["runtime.mode=realtime", "runtime.duration=30"], out=tmp_path,
                  plant=plant)
    assert plant.asked >= report
    assert summary["interrupted"] is True, summary
    assert "interrupted by SIGINT" in (tmp_path / "events.log").read_text()
