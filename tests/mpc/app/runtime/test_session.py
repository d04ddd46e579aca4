"""The session: a run that fails to start leaves no plant running."""

import logging
import threading

import pytest

import robots
from mpc.app.config import load_config
from mpc.app.errors import UserError
from mpc.app.plants.sim_plant import SimPlant
from mpc.app.run import run
from mpc.app.runtime.session import Session


class ClosingPlant(SimPlant):
    closed = 0

    def close(self) -> None:
        self.closed += 1


def test_a_failure_after_the_plant_is_up_closes_the_plant(tmp_path):
    """A robot link must not outlive a run that never started (here: telemetry on an LCM URL
    that cannot be opened, which fails after the plant was built)."""
    cfg = load_config("configs/a1_trot.yaml", ["runtime.mode=lockstep",
                                               "telemetry.lcm_url=udpm://999.1.1.1:7667"])
    plant = ClosingPlant(robots.info("a1"))
    with pytest.raises(ValueError, match=r"telemetry\.lcm_url"):
        Session(cfg, tmp_path, plant=plant)
    assert plant.closed == 1


class ClockedPlant(SimPlant):
    """A plant on its own clock, as a robot's is."""

    realtime_only = True


def test_lockstep_refuses_a_given_plant_on_its_own_clock(tmp_path):
    """``run(config, plant=...)`` in lockstep with a plant that runs on its own clock is
    refused before anything is built (the plants that configs name are refused the same way:
    tests/hardware/unitree/test_mpc_run_hardware.py, bad input)."""
    cfg = load_config("configs/a1_trot.yaml", ["runtime.mode=lockstep"])
    plant = ClockedPlant(robots.info("a1"))
    with pytest.raises(UserError, match=r"lockstep needs a plant stepped by the run .*; "
                                         r"ClockedPlant drives a robot on its own clock"):
        run(cfg, out=tmp_path / "run", plant=plant)
    assert not (tmp_path / "run").exists()


def test_a_run_that_never_started_leaves_no_record_writer_or_log_handler(tmp_path):
    cfg = load_config("configs/a1_trot.yaml", ["runtime.mode=lockstep",
                                               "telemetry.lcm_url=udpm://999.1.1.1:7667"])
    handlers = list(logging.getLogger().handlers)
    with pytest.raises(ValueError, match=r"telemetry\.lcm_url"):
        Session(cfg, tmp_path, plant=ClosingPlant(robots.info("a1")))
    assert logging.getLogger().handlers == handlers
    assert not [t for t in threading.enumerate() if t.name == "run-record"]
