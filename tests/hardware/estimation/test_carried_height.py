"""The carried height (``ground: carried``) on a recorded A1 trot on the deploy path: a landing
foot left to settle (``settle_time``) keeps the height; held from the moment the contact
belief comes up, its springing-back contact carried the height down by centimetres."""

import sys
from pathlib import Path

import numpy as np
import pytest

from mpc.app.config import load_config

DATA = Path(__file__).parent / "data"
sys.path.insert(0, str(DATA))
from make_level_reference import replay  # noqa: E402


@pytest.fixture(scope="module")
def recorded() -> dict:
    """3 s of the A1 (a1_hw_terrain) trotting on the level floor, simulated from the Menagerie
    description on realistic sensors: the filter's inputs and the true base height
    (data/make_carried_reference.py)."""
    return dict(np.load(DATA / "carried_reference.npz"))


def height_error(recorded: dict, **options) -> np.ndarray:
    """Estimated minus true base height after each update, a1_hw_terrain's filter with
    ``options`` changed."""
    spec = {**load_config("configs/a1_hw_terrain.yaml").plant["base_state"], **options}
    spec.pop("type")
    return replay("kalman", recorded, **spec)[:, 2] - recorded["true_z"]


def test_the_a1_config_settles_its_landing_feet(recorded):
    assert load_config("configs/a1_hw_terrain.yaml").plant["base_state"]["settle_time"] > 0


def test_a_settled_foothold_keeps_the_height(recorded):
    """With the A1 config's settling time the height stays within 1.5 cm of the truth over
    the 3 s (about 0.5 cm); without it the same inputs carry it 6-7 cm down."""
    settled = height_error(recorded)
    unsettled = height_error(recorded, settle_time=0.0)
    assert np.abs(settled).max() < 0.015
    assert unsettled[-1] < -0.04


def test_settling_is_carried_ground_only(recorded):
    """On the level floor the height row holds every standing foot: ``settle_time`` changes
    nothing there."""
    np.testing.assert_array_equal(replay("kalman", recorded, settle_time=0.06),
                                  replay("kalman", recorded))
