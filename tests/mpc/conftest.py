"""Run directories of short lockstep runs, shared by the recorder, plot and replay tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from mpc.app.run import run

#: Series that run directories written before plotting existed do not have.
NEW_SERIES = ("state_wall_time", "state_feedback_steps", "state_planned_contacts",
              "state_actuator_force", "plan_goal", "plan_base_path", "plan_foot_paths",
              "event_time", "event_level", "event_message")


def record_run(run_dir: Path, duration: float, *overrides: str) -> Path:
    """A lockstep A1 trot of ``duration`` simulated seconds, recorded in ``run_dir``."""
    run("configs/a1_trot.yaml", ["runtime.mode=lockstep", f"runtime.duration={duration}",
                                 *overrides], out=run_dir)
    return run_dir


@pytest.fixture(scope="session")
def trot_run(tmp_path_factory) -> Path:
    """1.5 s of the A1 trotting toward its goal."""
    return record_run(tmp_path_factory.mktemp("trot") / "trot", 1.5)


@pytest.fixture(scope="session")
def damped_run(tmp_path_factory) -> Path:
    """A run that ends in damping: the safety layer on the simulated plant with a tilt
    tripwire of 0.004 rad, which the trot exceeds within a fraction of a second; the damped
    robot then sinks below its fall height and the run stops."""
    return record_run(tmp_path_factory.mktemp("damped") / "damped", 1.5,
                      "safety.in_simulation=true", "safety.max_tilt=0.004")


@pytest.fixture(scope="session")
def old_run(tmp_path_factory, trot_run) -> Path:
    """``trot_run`` as a run directory from before the plotting series were recorded."""
    d = tmp_path_factory.mktemp("old") / "old"
    shutil.copytree(trot_run, d)
    with np.load(d / "timeseries.npz") as z:
        kept = {k: z[k] for k in z.files if k not in NEW_SERIES}
    np.savez_compressed(d / "timeseries.npz", **kept)
    return d
