"""The Kalman filter on a terrain map (``ground: map``): on a recorded A1 climb of its 8 cm
flight on the deploy path the map holds the height that carrying it from foothold to foothold
loses, and believes down the feet that stand on the treads above the lowest; the map comes from
the config (``task.map`` unless named) and a missing or unused one is one line, exit 2."""

import sys
from pathlib import Path

import numpy as np
import pytest

import robots
from hardware.estimation.map_height import MapHeight
from hardware.estimation.sources import check_spec, make_source
from mpc.app import cli
from mpc.app.config import load_config
from mpc.tasks.terrain_map import HeightMap, stairs

DATA = Path(__file__).parent / "data"
sys.path.insert(0, str(DATA))
from make_level_reference import replay  # noqa: E402
from make_stairs_reference import MAP  # noqa: E402


@pytest.fixture(scope="module")
def recorded() -> dict:
    """8 s of the A1 (a1_hw_stairs) climbing to its third tread, simulated from the Menagerie
    description on realistic sensors: the filter's inputs and the true base height
    (data/make_stairs_reference.py)."""
    return dict(np.load(DATA / "stairs_reference.npz"))


def estimate(recorded: dict, **options) -> tuple[np.ndarray, np.ndarray]:
    """(estimated minus true base height, contact belief > 0.5) after each update."""
    contact: list = []
    out = replay("kalman", recorded, contact=contact, **options)
    return out[:, 2] - recorded["true_z"], np.array(contact) > 0.5


def test_on_the_map_the_height_holds_up_the_stairs(recorded):
    """Carried, the height is 3-4 cm low on the third tread and falling (the A1's landing
    feet); on the map it stays within 1.5 cm of the truth (about 7 mm low: the planning
    model's feet sink further into its floor than the Menagerie description's, the level
    floor's height row reads the same)."""
    assert recorded["true_z"][-1] - recorded["true_z"][0] > 0.15  # it climbed
    after_start = slice(250, None)  # 0.5 s: the start's keyframe settles
    carried, _ = estimate(recorded, ground="carried")
    on_map, _ = estimate(recorded, ground="map", map=str(MAP))
    assert carried[-1] < -0.03
    assert np.abs(on_map[after_start]).max() < 0.015
    assert abs(on_map[-1]) < 0.015


def test_on_the_map_the_feet_on_higher_treads_count_as_down(recorded):
    """The kinematic cue compares the feet's heights over the map: of the updates where the
    gait had a foot down, the filter believed it down in about 73 % on the map against 51 %
    carried (the cue level with the lowest foot leaves out a foot a tread up); a foot in
    swing is never believed down in either."""
    planned = recorded["planned"] > 0.5
    _, carried = estimate(recorded, ground="carried")
    _, on_map = estimate(recorded, ground="map", map=str(MAP))
    share = [(c & planned).sum() / planned.sum() for c in (carried, on_map)]
    assert share[1] > share[0] + 0.15
    assert not (on_map & ~planned).any()


def test_a_foot_by_a_riser_has_no_height_and_its_cue_reads_the_upper_tread():
    ground = MapHeight(stairs(steps=1, rise=0.1, start=0.5), foot_radius=0.02)
    feet = np.array([[0.2, 0.0, 0.0], [0.48, 0.0, 0.0], [0.8, 0.0, 0.1], [0.51, 0.0, 0.1]])
    under = ground.read(feet)
    np.testing.assert_allclose(under.ground[[0, 2]], [0.0, 0.1])
    assert under.flat.tolist() == [True, False, True, False]
    # a foot whose centre is 2 cm short of the tread's first sample stands on its nosing
    np.testing.assert_allclose(under.top, [0.0, 0.1, 0.1, 0.1])
    np.testing.assert_allclose(under.low, [0.0, 0.0, 0.1, 0.0], atol=1e-12)


def test_the_estimator_reads_the_planners_map_unless_it_names_one(tmp_path):
    (tmp_path / "maps").mkdir()
    HeightMap(np.zeros((3, 3)), 0.1).save(tmp_path / "maps" / "flat.yaml")
    HeightMap(np.ones((3, 3)), 0.1).save(tmp_path / "maps" / "other.yaml")
    (tmp_path / "c.yaml").write_text(
        "extends: a1_hw_stairs\ntask: {map: maps/flat.yaml}\n"
        "plant: {base_state: {ground: map}}\n")
    cfg = load_config(str(tmp_path / "c.yaml"))
    assert cfg.plant["base_state"]["map"] == str(tmp_path / "maps" / "flat.yaml")
    # an override of the planner's map (scripts/eval_terrain.py's map errors) moves it too
    cfg = load_config(str(tmp_path / "c.yaml"), [f"task.map={tmp_path / 'maps' / 'other.yaml'}"])
    assert cfg.plant["base_state"]["map"] == str(tmp_path / "maps" / "other.yaml")
    (tmp_path / "d.yaml").write_text(
        "extends: c.yaml\nplant: {base_state: {map: maps/other.yaml}}\n")
    cfg = load_config(str(tmp_path / "d.yaml"))
    assert cfg.plant["base_state"]["map"] == str(tmp_path / "maps" / "other.yaml")
    check_spec(cfg.plant["base_state"])


@pytest.mark.parametrize("override, message", [
    ("plant.base_state={type: kalman, ground: map}", "ground: map needs a terrain map file"),
    ("plant.base_state={type: kalman, ground: map, map: none.yaml}", "no such file"),
    (f"plant.base_state={{type: kalman, map: {MAP}}}",
     "map is read with ground: map only"),
])
def test_a_map_the_estimator_cannot_use_is_one_line_and_exit_2(override, message, tmp_path,
                                                               capsys):
    code = cli.main(["a1_hw", "--mode", "lockstep", "--duration", "0.01", "--out",
                     str(tmp_path / "run"), "--set", override])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert "plant.base_state" in err and message in err and len(err.splitlines()) == 1, err


def test_a_foot_read_on_the_tread_above_does_not_lift_the_others_out_of_contact():
    """Four feet on the floor, one of them read 1 cm past the first riser (the estimate's xy
    a little off): the map there is the tread's, 8 cm up, so that foot reads 8 cm below the
    ground; the cue measures from the feet's heights over the lowest ground within 10 cm, so all
    four stay down (measured over the highest ground, the other three were 8 cm over it and
    out: on the A1's way down all four were believed in the air for 0.4 s before it fell)."""
    source = make_source({"type": "kalman", "ground": "map", "map": str(MAP)},
                         robots.load_planning_model("a1"), robots.info("a1"))
    source.x[0:3] = [0.45, 0.0, 0.3]
    rel = np.array([[0.16, 0.1, -0.29], [-0.2, 0.1, -0.29], [0.16, -0.1, -0.29],
                    [-0.2, -0.1, -0.29]])
    rel[0, 0] = 0.61 - 0.45  # the first riser is at 0.6 m
    source.under = source.terrain.read(source.x[0:3] + rel)
    assert source.under.top[0] == pytest.approx(0.08) and not source.under.flat[0]
    contact = source._contact(rel, np.zeros((4, 3)), 0.002)
    assert (contact > 0.5).all()
    # a foot lifted 4 cm is not, whichever feet the map is flat under
    rel[1, 2] += 0.04
    source.under = source.terrain.read(source.x[0:3] + rel)
    assert (source._contact(rel, np.zeros((4, 3)), 0.002) > 0.5).tolist() == [True, False,
                                                                               True, True]
