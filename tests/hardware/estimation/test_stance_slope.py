"""The ground's slope from the chords between feet standing together (hardware/estimation/
stance_slope.py), and what it changes for the Kalman filter's contact belief on a recorded
Go2 walking down a 10° ramp on the deploy path."""

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robots
from hardware.estimation.stance_slope import StanceSlope
from mpc.app.config import load_config

DATA = Path(__file__).parent / "data"
sys.path.insert(0, str(DATA))
from make_level_reference import replay  # noqa: E402

#: A quadruped's feet relative to its base (x forward, y left), FL FR RL RR.
STANCE = np.array([[0.19, 0.13, -0.27], [0.19, -0.13, -0.27], [-0.19, 0.13, -0.27],
                   [-0.19, -0.13, -0.27]])


def on_plane(slope, offset=(0.0, 0.0)) -> np.ndarray:
    """STANCE shifted by ``offset`` with each foot's height on the plane z = a · (x, y)."""
    feet = STANCE.copy()
    feet[:, 0:2] += offset
    feet[:, 2] += feet[:, 0:2] @ np.asarray(slope)
    return feet


@settings(max_examples=30, deadline=None)
@given(st.floats(-0.5, 0.5), st.floats(-0.5, 0.5), st.floats(-0.1, 0.1))
def test_a_trots_two_diagonals_give_the_slope(a1, a2, shift):
    """The two diagonal pairs of a trot, standing one after the other (the base moved between
    them), span the plane: the slope comes back within the prior's shrinkage."""
    fit = StanceSlope(4)
    fit.observe(on_plane((a1, a2)), np.array([True, False, False, True]), 0.01)
    slope = fit.observe(on_plane((a1, a2), (shift, 0.0)), np.array([False, True, True, False]),
                        0.2)
    np.testing.assert_allclose(slope, (a1, a2), atol=0.02 * max(abs(a1), abs(a2)) + 1e-9)


def test_old_chords_are_forgotten():
    """A chord older than ``memory`` no longer counts: the slope is that of the newer ground."""
    fit = StanceSlope(4, memory=1.0)
    fit.observe(on_plane((0.0, 0.0)), np.ones(4, bool), 0.0)  # standing on the level
    fit.observe(on_plane((-0.18, 0.0)), np.array([True, False, False, True]), 0.5)
    fit.observe(on_plane((-0.18, 0.0)), np.array([False, True, True, False]), 0.6)
    np.testing.assert_allclose(fit.slope, (-0.18, 0.0), atol=0.01)


def test_no_pitch_from_feet_side_by_side():
    """Two feet side by side say nothing about pitch: the prior keeps it level."""
    fit = StanceSlope(4)
    slope = fit.observe(on_plane((0.3, 0.1)), np.array([True, True, False, False]), 0.0)
    assert abs(slope[0]) < 1e-9 and slope[1] == pytest.approx(0.1, abs=0.01)


@pytest.fixture(scope="module")
def ramp() -> dict:
    """3.5 s of the Go2 (go2_hw_terrain) walking down ramp_down_10 on realistic sensors: the
    filter's inputs, the true base position, which feet truly stood still
    (data/make_ramp_reference.py)."""
    return dict(np.load(DATA / "ramp_reference.npz"))


def believed_when_still(ramp: dict, cue_slope: str) -> tuple[np.ndarray, float]:
    """Per foot, the fraction of the steps on the slope (true x 0.6-1.9 m) it truly stood
    still with the gait schedule having it down that the filter believed it down; and the
    largest height error over the record."""
    contact: list = []
    out = replay("kalman", ramp, robot="go2", contact=contact, ground="carried",
                 cue_slope=cue_slope)
    believed = np.array(contact) > 0.5
    x = ramp["true_pos"][:, 0]
    still = ramp["true_still"] & (ramp["planned"] > 0.5) & ((x > 0.6) & (x < 1.9))[:, None]
    assert (still.sum(axis=0) > 100).all()
    fraction = np.array([believed[still[:, i], i].mean() for i in range(still.shape[1])])
    return fraction, float(np.abs(out[:, 2] - ramp["true_pos"][:, 2]).max())


def test_the_uphill_feet_are_believed_on_the_ramp(ramp):
    """With the chords every foot the gait schedule has down and that truly stands still is
    believed down at least 80 % of the time on the slope (each 93-97 %), and the height error
    stays under 3 cm over the 3.5 s (2.5 cm)."""
    fraction, height = believed_when_still(ramp, "chords")
    assert (fraction > 0.8).all(), fraction
    assert height < 0.03


def test_footholds_lock_the_uphill_feet_out(ramp):
    """With the slope of the plane through the remembered footholds (the default) the hind
    feet, uphill, are never believed on the slope: the footholds they left on the plateau hold
    the fitted slope too shallow, so they count as too high and their footholds never move;
    the filter runs on the IMU alone 53 % of the time on the slope and the height error
    reaches 4.0 cm. This is what ``cue_slope: chords`` fixes."""
    fraction, height = believed_when_still(ramp, "footholds")
    hind = [i for i, f in enumerate(robots.info("go2").feet) if f.startswith("R")]
    assert (fraction[hind] < 0.1).all(), fraction
    assert height > 0.035


def test_the_go1_terrain_config_takes_the_chords():
    assert load_config("configs/go1_hw_terrain.yaml").plant["base_state"]["cue_slope"] == "chords"
