"""The session: a run that fails to start leaves no plant running."""

import pytest

import robots
from mpc.app.config import load_config
from mpc.app.plants.sim_plant import SimPlant
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
