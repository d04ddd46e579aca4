"""The simulated mapper (``map_input.source.type: sim``): its scans hold the simulated world's
ground (the plant's own profile as the oracle, not the rays), in the frame of the plant's
estimate, the robot left out; noise and offset as asked; on the lockstep run it feeds the
planning model's window; a plant it cannot map is one line and exit code 2."""

from __future__ import annotations

import math
from pathlib import Path

import mujoco
import numpy as np
import pytest

import robots
from mpc.app import cli
from mpc.app.config import load_config
from mpc.app.maps.sim_mapper import SimMapper
from mpc.app.plants.plant_base import Plant, PlantState
from mpc.app.plants.sim_plant import SimPlant
from mpc.app.runtime.lockstep import lockstep_steps
from mpc.app.runtime.session import Session
from mpc.tasks.task_base import base_yaw
from mpc.tasks.terrain_map import load

ROOT = Path(__file__).resolve().parents[4]
STAIRS = ROOT / "configs" / "maps" / "stairs_12cm.yaml"
RAMP = {"kind": "ramp", "direction": "up", "slope": 10.0, "start": 0.4, "length": 1.2}


class Drifted(SimPlant):
    """A simulated plant whose reported base is off the truth by a set shift and turn, as a
    drifting estimate is."""

    def __init__(self, shift, turn, **kwargs):
        super().__init__(robots.info("go2"), **kwargs)
        self.shift, self.turn = np.asarray(shift, dtype=float), turn

    def read_state(self) -> PlantState:
        s = super().read_state()
        qpos = s.qpos.copy()
        qpos[:3] += self.shift
        turn = np.array([math.cos(self.turn / 2), 0.0, 0.0, math.sin(self.turn / 2)])
        mujoco.mju_mulQuat(qpos[3:7], turn, s.qpos[3:7])  # turned about z in the world
        return PlantState(s.time, qpos, s.qvel, s.act)


def sample_points(m):
    rows, cols = m.shape
    return np.meshgrid(m.origin[0] + m.resolution * np.arange(cols),
                       m.origin[1] + m.resolution * np.arange(rows))


@pytest.mark.parametrize("shift, turn", [((0.0, 0.0, 0.0), 0.0),
                                         ((0.07, -0.04, 0.03), 0.0),
                                         ((-0.05, 0.02, -0.01), 0.15)])
def test_a_scan_is_the_worlds_ground_in_the_estimates_frame(shift, turn):
    plant = Drifted(shift, turn, terrain=RAMP)
    mapper = SimMapper(plant, size=[2.4, 1.2], ahead=0.9, resolution=0.05, highest=False)
    m = mapper.scan()
    est, truth = plant.read_state().qpos, SimPlant.read_state(plant).qpos
    xs, ys = sample_points(m)
    # the estimate's frame to the world's: the base's estimated pose onto its true one
    d = base_yaw(truth) - base_yaw(est)
    dx, dy = xs - est[0], ys - est[1]
    wx = truth[0] + math.cos(d) * dx - math.sin(d) * dy
    wy = truth[1] + math.sin(d) * dx + math.cos(d) * dy
    want = np.vectorize(plant.terrain.ground_height)(wx, wy) + est[2] - truth[2]
    # away from the ramp's two kinks, where a box's corner meets the next
    kinks = np.minimum(np.abs(wx - 0.4), np.abs(wx - 1.6))
    away = kinks > 0.01
    assert away.sum() > 0.9 * away.size
    assert np.abs(m.heights - want)[away].max() < 1e-6
    assert np.ptp(want[away]) > 0.15  # the scan spans the slope: a wrong shift would show
    # the grid on multiples of the resolution, centred ahead of the estimated base
    assert np.allclose(np.array(m.origin) / 0.05, np.round(np.array(m.origin) / 0.05))
    centre = np.array(m.centre)
    heading = np.array([math.cos(base_yaw(est)), math.sin(base_yaw(est))])
    assert np.linalg.norm(centre - (est[:2] + 0.9 * heading)) < 0.05


@pytest.mark.parametrize("start", [0.61, 0.64, 0.66])
def test_a_highest_scan_holds_the_highest_ground_of_each_cell(start):
    """A step whose riser lies between two samples (and between two rays: a ray on a box's
    face meets either side): each sample holds the highest ground within half a sample of
    it, so the riser is on the map from the sample whose cell it is in, and the map is below
    the world over at most half a sample past it; point samples leave it up to the next
    sample."""
    step = {"kind": "step", "direction": "up", "height": 0.08, "start": start}
    plant = SimPlant(robots.info("go2"), terrain=step)
    m = SimMapper(plant, size=[2.0, 1.0], ahead=0.5, resolution=0.05).scan()
    world = np.vectorize(plant.terrain.ground_height)
    xs, ys = sample_points(m)
    near = np.stack([world(xs + d, ys) for d in np.linspace(-0.025, 0.025, 21)])
    assert np.abs(m.heights - near.max(axis=0)).max() < 1e-9
    fine_x, fine_y = np.meshgrid(np.arange(-0.4, 1.4, 0.001), np.arange(-0.4, 0.4, 0.05))
    under = fine_x[m.height(fine_x, fine_y) < world(fine_x, fine_y) - 1e-9]
    assert under.size == 0 or (under.min() >= start and under.max() < start + 0.025)
    points = SimMapper(plant, size=[2.0, 1.0], ahead=0.5, highest=False).scan()
    under = fine_x[points.height(fine_x, fine_y) < world(fine_x, fine_y) - 1e-9]
    assert under.size > 0 and under.min() >= start
    assert under.max() < np.ceil(start / 0.05) * 0.05  # up to the next sample


def test_the_robot_is_left_out_of_the_scan():
    plant = SimPlant(robots.info("go2"))
    m = SimMapper(plant, size=[1.0, 1.0], ahead=0.0, resolution=0.02).scan()
    assert np.abs(m.heights).max() < 1e-9  # the level floor under the standing robot


def test_the_scans_noise_and_offset():
    plant = SimPlant(robots.info("go2"))
    m = SimMapper(plant, size=[4.0, 4.0], ahead=0.0, noise=0.01, offset=0.02, seed=3).scan()
    assert np.mean(m.heights) == pytest.approx(0.02, abs=1e-3)
    assert np.std(m.heights) == pytest.approx(0.01, rel=0.05)


def test_a_scan_is_taken_at_the_rate_asked():
    plant = SimPlant(robots.info("go2"))
    mapper = SimMapper(plant, rate=10.0)
    taken = []
    for _ in range(150):  # 0.3 s at the plant's 2 ms
        if mapper.take() is not None:
            taken.append(plant.read_state().time)
        plant.step()
    assert taken == pytest.approx([0.0, 0.1, 0.2], abs=1e-9)
    assert mapper.stats() == {"accepted": 3, "scans": 3}


def test_a_lockstep_run_plans_on_what_the_mapper_scanned(tmp_path):
    cfg = load_config("configs/go2_hw_stairs.yaml", [
        "runtime.mode=lockstep", "output.mcap=false", "task.map=null",
        f"plant={{type: sim, terrain: {{kind: map, file: {STAIRS}}}}}",
        "map_input.source={type: sim, rate: 20, size: [3.0, 1.6], ahead: 1.2}"])
    session = Session(cfg, tmp_path / "run")
    try:
        for _ in lockstep_steps(session, 0.2):
            pass
        window = session.task.map_ground.map
    finally:
        summary = session.close("lockstep")
    counts = summary["map_input"]
    assert counts["scans"] == counts["accepted"] == 4 and counts["applied"] == 4
    # where the scan reached, the planned-on window is the world's flight (despeckled, as
    # every received map), off the risers' samples (a ray on a riser's face meets either side)
    truth = load(STAIRS)
    xs, ys = sample_points(window)
    inside = (np.abs(ys) < 0.6) & (xs > -0.1) & (xs < 2.6)
    risers = np.abs(((xs - 0.6) / 0.25) - np.round((xs - 0.6) / 0.25)) * 0.25 < 0.03
    want = truth.height(xs, ys)
    assert np.abs(window.heights - want)[inside & ~risers].max() < 1e-6
    assert np.ptp(want[inside]) == pytest.approx(0.6)


@pytest.mark.parametrize("overrides, named", [
    # realtime on the config's own plant, the Go2 over DDS: refused before anything is built
    ([], "map_input.source.type sim maps a simulated plant (plant.type sim or sim_estimated), "
     "not UnitreeDdsPlant"),
    (["--mode", "lockstep", "--set", "plant={type: sim}", "--set",
      "map_input.source={type: sim, rate: 0}"], "'map_input.source.rate' must be > 0.0"),
    (["--mode", "lockstep", "--set", "plant={type: sim}", "--set",
      "map_input.source={type: sim, size: [1.0]}"], "map_input.source.size must be [length"),
    (["--mode", "lockstep", "--set", "plant={type: sim}", "--set",
      "map_input.source={type: sim, noise: -1}"], "'map_input.source.noise' must be >= 0.0"),
])
def test_a_mapper_it_cannot_build_is_one_line_and_exit_2(overrides, named, tmp_path, capsys):
    code = cli.main(["go2_hw_stairs", "--duration", "0.01", "--out", str(tmp_path / "r"),
                     "--set", "map_input.source={type: sim}", *overrides])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and named in err, err
    assert "Traceback" not in err


def test_a_plant_it_cannot_map_is_refused_from_code_too():
    class Robot(Plant):  # a plant that is not a simulation (no copy_state)
        def read_state(self):
            raise AssertionError("not reached")

        def send(self, ctrl):
            pass

        def damp(self, reason):
            pass

        def close(self):
            pass

    with pytest.raises(ValueError, match=r"maps a simulated plant .* not Robot"):
        SimMapper.build({}, Robot())
