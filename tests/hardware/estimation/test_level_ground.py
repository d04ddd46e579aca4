"""The leg estimators' ``ground`` option: ``level`` (the default) is the flat-floor filter the
project had before the option, ``carried`` (blind terrain) is not; a bad value is one config
error."""

import sys
from pathlib import Path

import numpy as np
import pytest

from mpc.app.config import load_config
from mpc.app.errors import UserError

DATA = Path(__file__).parent / "data"
sys.path.insert(0, str(DATA))
from make_level_reference import SOURCES, replay  # noqa: E402


@pytest.fixture(scope="module")
def recorded() -> dict:
    """A 1.5 s lockstep trot of the A1: the sources' inputs and the estimates main's filters
    made from them before the option existed (data/make_level_reference.py)."""
    return dict(np.load(DATA / "level_reference.npz"))


@pytest.mark.parametrize("kind", SOURCES)
def test_the_default_ground_gives_the_flat_floor_filters_estimates(kind, recorded):
    """Equal to the bit on the development machine; 1e-9 allows another processor's BLAS
    kernels their last bits (the carried height differs by centimetres)."""
    np.testing.assert_allclose(replay(kind, recorded), recorded[kind], rtol=0.0, atol=1e-9)


@pytest.mark.parametrize("kind", SOURCES)
def test_the_carried_ground_is_another_filter(kind, recorded):
    """The comparison above can tell them apart: with ``ground: carried`` the height leaves
    the flat-floor filter's by millimetres within the 1.5 s; the horizontal position less."""
    carried = replay(kind, recorded, ground="carried")
    assert np.max(np.abs(carried[:, 2] - recorded[kind][:, 2])) > 1e-3


@pytest.mark.parametrize("override, key", [
    ("plant.base_state={type: kalman, ground: flat}", "plant.base_state.ground"),
    ("plant.base_state={type: leg_odometry, ground: fit}", "plant.base_state.ground"),
    ("task.ground=carried", "task.ground"),
])
def test_an_unknown_ground_is_one_config_error(override, key):
    with pytest.raises(UserError, match=rf"'{key}' must be one of"):
        load_config("configs/go1_hw.yaml", [override])
