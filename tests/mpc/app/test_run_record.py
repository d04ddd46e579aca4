"""A run directory holds one run, and whatever ends the run (SIGKILL included) leaves a record
that mpc-plot and mpc-replay read, up to about its last second."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from mpc.app import cli
from mpc.app import run as run_module
from mpc.app.errors import UserError
from mpc.app.plots import cli as plot_cli
from mpc.app.record.reader import load_run
from mpc.app.record.store import FLUSH_PERIOD, INCREMENTAL, read_record
from mpc.app.run import run
from mpc.app.view.replay import Replayer

REPO = Path(__file__).resolve().parents[3]
#: A lockstep run that logs a damping and a fall early (a tilt trip at 0.004 rad) and goes
#: on (a dry run is not stopped by a fall), so that it is still running when it is killed.
KILLED = ["a1_trot", "--mode", "lockstep", "--duration", "600", "--quiet",
          "--set", "safety.in_simulation=true", "--set", "safety.max_tilt=0.004",
          "--set", "safety.dry_run=true"]
#: How far behind the moment of the kill the record may end: one flush period, and the
#: writer thread's turn on a loaded machine.
LAG = FLUSH_PERIOD + 1.5


def recorded(run_dir: Path) -> tuple[float, int]:
    """Wall time of the latest state sample on disk and the samples' count ((0, 0) before
    the first flush)."""
    try:
        t = read_record(run_dir / INCREMENTAL)["state_wall_time"]
    except (OSError, ValueError, KeyError):
        return 0.0, 0
    return (float(t[-1]), len(t)) if len(t) else (0.0, 0)


@pytest.fixture(scope="module")
def killed_run(tmp_path_factory) -> tuple[Path, float]:
    """An mpc-run killed with SIGKILL after a few seconds; (run directory, how long after
    the run's start, in its wall clock, the kill came)."""
    out = tmp_path_factory.mktemp("killed") / "run"
    proc = subprocess.Popen([sys.executable, "-m", "mpc.app.cli", *KILLED, "--out", str(out)],
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    # The run's clock starts once the planner and the plant are built (config.yaml comes
    # before): at the latest, each flush's newest sample's wall time before it was seen.
    started = np.inf
    try:
        deadline = time.monotonic() + 600  # a first run compiles the kernels
        # some seconds and some samples: a loaded machine may take seconds for the first
        while ((wall := recorded(out))[0] < 3.0 or wall[1] < 50) and proc.poll() is None:
            assert time.monotonic() < deadline, "the run recorded nothing"
            if wall[1]:
                started = min(started, time.monotonic() - wall[0])
            time.sleep(0.02)
        assert proc.poll() is None, proc.communicate()[1]
        started = min(started, time.monotonic() - wall[0])
        time.sleep(1.7)  # past a flush: the record must hold what came after it as well
        proc.send_signal(signal.SIGKILL)
        killed_at = time.monotonic() - started  # at most the true time since the start
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return out, killed_at


def test_a_killed_run_keeps_its_record_up_to_its_last_second(killed_run):
    out, killed_at = killed_run
    assert not (out / "timeseries.npz").exists() and not (out / "summary.json").exists()
    run = load_run(out)
    assert not run.closed
    wall = run.series["state_wall_time"]
    print(f"\nkilled {killed_at:.2f} s into the run; record ends at {wall[-1]:.2f} s")
    assert killed_at - LAG < wall[-1] <= killed_at + 0.5
    n = len(run.series["state_time"])
    # lockstep at a fraction of real time on a loaded machine: tens of samples, not hundreds
    assert n > 20 and all(len(run.series[k]) == n for k in run.series if k.startswith("state_"))
    assert np.all(np.diff(run.series["state_time"]) > 0)
    assert len(run.series["plan_time"]) > 10
    # the trip and the fall, each at its simulated time
    kinds = {e.kind: e for e in run.events}
    assert 0.0 <= kinds["damping"].time < kinds["fall"].time < run.series["state_time"][-1]
    assert "plant damping: tilt" in (out / "events.log").read_text()


def test_mpc_plot_reads_a_run_that_did_not_close(killed_run, tmp_path, capsys):
    out, _ = killed_run
    assert plot_cli.main([str(out), "--out", str(tmp_path)]) == 0
    assert (tmp_path / "report.html").is_file() and list(tmp_path.glob("*.png"))


def test_mpc_replay_reads_a_run_that_did_not_close(killed_run, display):
    out, _ = killed_run
    player = Replayer(load_run(out), speed=200.0)
    try:
        player.play()
        assert player.shown == len(player.times) - 1
    finally:
        player.close()


# --- one run per directory -------------------------------------------------------------------
SHORT = ["runtime.mode=lockstep", "runtime.duration=0.05"]


def test_out_naming_a_used_run_directory_is_refused_with_one_line(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["a1_trot", "--mode", "lockstep", "--duration", "0.05", "--quiet", "--out", str(out)]
    assert cli.main(args) == 0
    before = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    capsys.readouterr()
    assert cli.main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"mpc-run: error: run directory {out} already holds files (another run's?): "
                   "a run directory is never reused, name a new or empty one"]
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == before


def test_a_killed_runs_directory_is_refused_too(killed_run):
    out, _ = killed_run
    with pytest.raises(UserError, match="already holds files"):
        run("a1_trot", SHORT, out=out)


def test_an_empty_directory_is_taken(tmp_path):
    summary = run("a1_trot", SHORT, out=tmp_path)
    assert summary["run_dir"] == str(tmp_path)
    assert (tmp_path / "timeseries.npz").is_file()
    assert not (tmp_path / INCREMENTAL).exists()  # in timeseries.npz now


def test_runs_started_in_the_same_second_get_directories_of_their_own(tmp_path, monkeypatch):
    same = tmp_path / "20250101-120000_a1_trot_analytic_lockstep"
    monkeypatch.setattr(run_module, "default_run_dir", lambda cfg: same)
    first = run("a1_trot", [*SHORT, "runtime.seed=1"])
    second = run("a1_trot", [*SHORT, "runtime.seed=2"])
    assert first["run_dir"] == str(same)
    assert second["run_dir"] == str(same) + "-2"
    for summary in (first, second):
        d = Path(summary["run_dir"])
        assert json.loads((d / "summary.json").read_text())["seed"] == summary["seed"]
        assert (d / "timeseries.npz").is_file()
