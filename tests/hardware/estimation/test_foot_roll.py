"""The Kalman filter's rolling foot on a slope (``plant.base_state.foot_roll``, ``ground:
carried``): a standing round foot turns about its contact point, a foot radius along the
ground's normal, so its centre moves along the ground (down a ramp as it rolls downhill)."""

import sys
from pathlib import Path

import numpy as np
import pytest

import robots
from hardware.estimation.kalman import LegKalman
from mpc.app.config import load_config

DATA = Path(__file__).parent / "data"
STAIRS = Path(__file__).resolve().parents[3] / "configs" / "maps" / "stairs_12cm.yaml"
sys.path.insert(0, str(DATA))
from make_level_reference import replay  # noqa: E402


def test_the_centre_rolls_along_the_ground():
    """A knee turning with the base still: the foot centre's rolling velocity w_foot x r n is
    along the ground (normal to n), and on a 10° slope it has a vertical part, which the
    vertical offset of the level floor (foot_roll off) leaves out."""
    info = robots.info("go2")
    model = robots.load_planning_model("go2")
    kf = LegKalman(model, info, ground="carried", cue_slope="chords", foot_roll=True)
    slope = np.array([-np.tan(np.radians(10.0)), 0.0])
    kf.stance_slope.slope = slope
    q = np.tile([0.0, 0.8, -1.6], 4)
    dq = np.tile([0.0, 0.0, 2.0], 4)  # the knees turn at 2 rad/s
    kf._kinematics(np.array([1.0, 0.0, 0.0, 0.0]), np.zeros(3), q, dq)
    normal = np.array([-slope[0], -slope[1], 1.0])
    normal /= np.linalg.norm(normal)
    roll = kf.roll_vel
    np.testing.assert_allclose(roll @ normal, 0.0, atol=1e-9)
    # the shank turns at 2 rad/s about y: the centre moves at 2 r along the ground
    np.testing.assert_allclose(np.linalg.norm(roll, axis=1), 2.0 * info.foot_radius, rtol=1e-6)
    assert (np.abs(roll[:, 2]) > 0.1 * 2.0 * info.foot_radius).all()


@pytest.mark.parametrize("options, message", [
    ({"foot_roll": True}, "foot_roll is read with ground: carried only"),
    ({"ground": "map", "map": str(STAIRS), "foot_roll": True},
     "foot_roll is read with ground: carried only"),
    ({"cue_slope": "chords"}, "cue_slope is read with ground: carried only"),
    ({"ground": "carried", "roll_radius": 0.01}, "roll_radius is read with foot_roll: true"),
])
def test_the_carried_heights_options_elsewhere_are_refused(options, message):
    """On another ground they would change nothing (the level floor's estimates were the same
    to the bit with the rolling foot): a config that sets them is told so."""
    with pytest.raises(ValueError, match=message):
        LegKalman(robots.load_planning_model("go2"), robots.info("go2"), **options)


def test_a_rolling_foot_on_the_level_floor_is_one_line_and_exit_2(tmp_path, capsys):
    from mpc.app import cli

    code = cli.main(["go2_hw", "--mode", "lockstep", "--duration", "0.01", "--out",
                     str(tmp_path / "run"), "--set", "plant.base_state.foot_roll=true"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert "foot_roll is read with ground: carried only" in err and len(err.splitlines()) == 1


@pytest.fixture(scope="module")
def ramp() -> dict:
    """3.5 s of the Go2 walking down ramp_down_10 on the deploy path
    (data/make_ramp_reference.py)."""
    return dict(np.load(DATA / "ramp_reference.npz"))


def largest_height_error(ramp: dict, **options) -> float:
    options = {"ground": "carried", "cue_slope": "chords", **options}
    out = replay("kalman", ramp, robot="go2", **options)
    return float(np.abs(out[:, 2] - ramp["true_pos"][:, 2]).max())


def test_the_rolling_foot_holds_the_height_down_the_ramp(ramp):
    """Down the ramp a held foot's centre rolls downhill: without the rolling the filter reads
    the base as rising (2.5 cm of error over the 3.5 s); with it 1.5 cm, and 1.3 cm with
    go2_hw_terrain's own options (the feet's drift 0.03 m/sqrt(s) as well)."""
    assert largest_height_error(ramp) > 0.02
    assert largest_height_error(ramp, foot_roll=True) < 0.016
    options = dict(load_config("configs/go2_hw_terrain.yaml").plant["base_state"])
    assert options.pop("type", "kalman") == "kalman" and options["foot_roll"]
    assert largest_height_error(ramp, **options) < 0.014
