"""scripts/eval_terrain.py: a tiny case end to end (table, per-run file, resume), falls judged
against the terrain, bad input."""

from __future__ import annotations

import csv
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import robots

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import eval_terrain

TINY = ["--configs", "go2_hw", "--terrains", "step_down_8cm", "--seeds", "3",
        "--duration", "0.3", "--engine", "serial"]


def test_one_tiny_case_end_to_end(tmp_path, capsys):
    assert eval_terrain.main([*TINY, "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| go2_hw | step_down_8cm | 0/1 |" in out  # 0.3 s: nowhere near the goal
    (case_file,) = (tmp_path / "cases").glob("*.json")
    record = json.loads(case_file.read_text())
    assert record["case"]["plant_model"] == "reference"
    assert record["case"]["estimator"] == "config" and record["case"]["delay_ms"] == 6.0
    result = record["result"]
    assert result["outcome"] == "stalled" and result["where"] == "before"
    assert result["sim_time_s"] == pytest.approx(0.3, abs=0.02)
    # the config's estimator ran beside the truth
    assert 0.0 <= result["height_err_max_m"] < 0.05 and result["vel_err_rms_mps"] < 0.5
    assert (tmp_path / "terrain.md").read_text().startswith("| config | terrain | success")
    with open(tmp_path / "runs.csv") as f:
        rows = list(csv.DictReader(f))
    assert rows[0]["terrain"] == "step_down_8cm"
    # a rerun finds the result stored and runs nothing
    before = case_file.stat().st_mtime_ns
    assert eval_terrain.main([*TINY, "--out", str(tmp_path)]) == 0
    assert case_file.stat().st_mtime_ns == before


def test_a_fall_is_judged_against_the_ground_under_the_robot():
    """Walking down a ramp puts the base below the robot's fall height over the plane at 0;
    over the ground under it, it stands."""
    a1 = robots.info("a1")
    level = np.array([0.0, 0.0, 0.27, 1.0, 0.0, 0.0, 0.0])
    assert not eval_terrain._fallen(level, a1)
    assert eval_terrain._fallen(level * [1, 1, 0.3, 1, 1, 1, 1], a1)  # 8 cm: down
    half = math.radians(70) / 2
    tipped = np.r_[level[:3], math.cos(half), math.sin(half), 0.0, 0.0]
    assert eval_terrain._fallen(tipped, a1)


@pytest.mark.parametrize("args, message", [
    (["--terrains", "cliff"], "unknown terrain 'cliff'"),
    (["--configs", "no_such_config"], "config file not found: no_such_config"),
    (["--plant-joint-damping", "-1"], "--plant-joint-damping must be within 0..20"),
])
def test_bad_input_exits_2_with_one_line(args, message, tmp_path, capsys):
    assert eval_terrain.main([*args, "--engine", "serial", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_random_terrain_is_laid_out_anew_for_every_seed():
    args = eval_terrain.parser().parse_args(["--goal", "2", "--duration", "10"])
    slabs = [eval_terrain.make_case("go2_hw", "slabs_5cm", s, args) for s in (0, 1)]
    assert [eval_terrain.seeded_terrain(c)[0].seed for c in slabs] == [0, 1]
    ramp = eval_terrain.make_case("go2_hw", "ramp_up_5", 1, args)
    assert "terrain_seed" not in ramp and eval_terrain.seeded_terrain(ramp) == "ramp_up_5"
    assert ramp["threads"] == 2  # the config's planner.threads


def test_a_map_file_is_a_terrain_and_the_map_error_goes_into_the_planners_map(monkeypatch):
    """With a map offset or noise, a config that plans on a map plans on the erroneous map
    over the true world (the world raised instead would be no error: the estimator takes
    where the robot starts as height 0); a blind config walks on the erroneous world."""
    from mpc.tasks import terrain_map

    args = eval_terrain.parser().parse_args(["--duration", "10", "--map-offset", "0.02",
                                             "--map-noise", "0.01"])
    path = "configs/maps/stairs_12cm.yaml"
    cases = [eval_terrain.make_case("go2_hw_stairs", path, s, args) for s in (0, 1)]
    ground = [eval_terrain.seeded_terrain(c) for c in cases]
    assert ground[0]["kind"] == "map" and Path(ground[0]["file"]).is_absolute()
    assert ground[0]["offset"] == ground[0]["noise"] == 0.0 and "seed" not in ground[0]
    assert [c["planner_map"]["seed"] for c in cases] == [0, 1]
    planned = []
    monkeypatch.setattr(eval_terrain, "_run",
                        lambda case, cfg, tmp: planned.append(terrain_map.load(cfg.task["map"])))
    for case in cases:
        eval_terrain.run_case(case)
    true = terrain_map.load(ground[0]["file"]).heights
    errors = [p.heights - true for p in planned]
    assert all(abs(e.mean() - 0.02) < 1e-3 and abs(e.std() - 0.01) < 1e-3 for e in errors)
    assert not np.allclose(errors[0], errors[1])  # drawn anew for every seed
    blind = eval_terrain.seeded_terrain(eval_terrain.make_case("go2_hw_terrain", path, 1, args))
    assert (blind["offset"], blind["noise"], blind["seed"]) == (0.02, 0.01, 1)
    # a config with waypoints walks them and is judged at the last one
    from mpc.app.config import load_config

    cfg = load_config("go2_hw_stairs")
    assert cases[0]["goal"] is None
    assert "task.goal" not in " ".join(eval_terrain.case_overrides(cases[0]))
    assert list(eval_terrain.goal_of(cases[0], cfg)) == [4.6, 0.0]
    flat = eval_terrain.make_case("go2_hw", "flat", 0, args)
    assert flat["goal"] == 2.0 and "map" not in flat


def test_the_plants_joint_damping_is_part_of_a_case_only_when_given():
    """A campaign stored before the option resumes: its cases keep their keys."""
    args = eval_terrain.parser().parse_args(["--goal", "2", "--duration", "10"])
    assert "plant_joint_damping" not in eval_terrain.make_case("go2_hw", "flat", 0, args)
    args.plant_joint_damping = 0.1
    assert eval_terrain.make_case("go2_hw", "flat", 0, args)["plant_joint_damping"] == 0.1


def test_the_plant_commands_the_configs_gains(tmp_path, monkeypatch):
    """A hardware config's plant.kd (plant.kp) reaches the fake robot's motors as the bridge
    would command it; without it, the planning model's."""
    import hardware.fake.motor_plant as motor_plant

    seen = []

    class Seen(motor_plant.FakeMotorPlant):
        def send(self, ctrl):
            super().send(ctrl)
            seen.append(self.pending.kd[self.map.actuator_slots].copy())

    monkeypatch.setattr(motor_plant, "FakeMotorPlant", Seen)
    tiny = ["--configs", "go2_hw", "--terrains", "flat", "--seeds", "0", "--duration", "0.05",
            "--engine", "serial"]
    assert eval_terrain.main([*tiny, "--set", "plant.kd=[4]", "--out", str(tmp_path / "a")]) == 0
    assert seen and all(np.all(kd == 4.0) for kd in seen)
    seen.clear()
    assert eval_terrain.main([*tiny, "--out", str(tmp_path / "b")]) == 0
    model = robots.load_planning_model("go2")
    assert seen and all(np.allclose(kd, model.dof_damping[6:]) for kd in seen)


def test_a_bad_map_exits_2_with_one_line(tmp_path, capsys):
    np.save(tmp_path / "h.npy", np.zeros((4, 4)))
    (tmp_path / "m.yaml").write_text("heights: h.npy\nresolution: 0\n")
    assert eval_terrain.main(["--configs", "go2_hw_stairs", "--terrains",
                              str(tmp_path / "m.yaml"), "--engine", "serial", "--out",
                              str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "resolution must be > 0" in err and len(err.splitlines()) == 1


def test_the_true_rise_of_each_believed_stance_is_collected():
    """Standing still, the feet the gait schedule then swings end their believed stance where
    it began: two more entries, each the site's true rise over its stance (a standing foot:
    millimetres)."""
    import robots
    from hardware.fake.motor_plant import FakeMotorPlant

    plant = eval_terrain.recording_plant(FakeMotorPlant)(
        robots.info("go1"), delay=0.006, base_state={"type": "kalman"})
    for _ in range(200):  # settled on its feet (the belief flickers as they sink in)
        plant.step()
    before = len(plant.stance_rise)
    assert (plant.source.contact > 0.5).all()
    plant.set_planned_stance(np.array([True, False, False, True]))
    plant.step()
    assert len(plant.stance_rise) == before + 2
    assert np.abs(plant.stance_rise[before:]).max() < 5e-3  # millimetres: still settling


def test_parts_of_the_robot_pressing_on_each_other_are_recorded_and_judged():
    """legs_touch: nothing for a robot standing on the floor (its feet on the ground are not
    it); an entry, with the force, once a hind calf is swung forward into the front leg of its
    side. legs_touched: the first time at LEGS_TOUCH N or more, up to a fall only."""
    import mujoco

    from hardware.fake.motor_plant import FakeMotorPlant

    plant = eval_terrain.recording_plant(FakeMotorPlant)(robots.info("go2"), delay=0.0)
    for _ in range(100):
        plant.step()
    assert plant.sim.data.ncon >= 4 and plant.legs_touch == []
    m, d = plant.sim.model, plant.sim.data
    rr_thigh = m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "RR_thigh_joint")]
    d.qpos[2] = 0.6  # in the air: legs only
    d.qpos[rr_thigh : rr_thigh + 2] = -0.6, -1.6  # the RR calf across the FR thigh
    d.qvel[:] = 0.0
    plant.step()
    assert len(plant.legs_touch) == 1 and plant.legs_touch[0][1] > 0.0

    touches = [(1.0, 5.0), (2.0, 30.0), (3.0, 80.0)]
    assert eval_terrain.legs_touched(touches, None) == {"legs_touched_s": 2.0,
                                                        "legs_touch_max_n": 80.0}
    assert eval_terrain.legs_touched(touches, 1.5) == {"legs_touched_s": None,
                                                       "legs_touch_max_n": 5.0}
    assert eval_terrain.legs_touched([], None)["legs_touched_s"] is None


def test_an_interrupted_campaign_says_so_in_one_line_and_resumes(tmp_path, capsys, monkeypatch):
    """Ctrl-C during the second case: exit 130, one line, the first case kept; the same command
    then runs only the second."""
    real, ran = eval_terrain.run_case, []

    def interrupted(case: dict) -> dict:
        if case["seed"] == 4 and "interrupted" not in ran:
            ran.append("interrupted")
            raise KeyboardInterrupt
        ran.append(case["seed"])
        return real(case)

    monkeypatch.setattr(eval_terrain, "run_case", interrupted)
    args = [*TINY[:5], "3", "4", *TINY[6:], "--out", str(tmp_path)]
    assert eval_terrain.main(args) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "interrupted: 1 of 2 cases finished" in err[0]
    assert eval_terrain.main(args) == 0
    assert ran == [3, "interrupted", 4]


def wait_for(what, timeout: float = 60.0, proc: subprocess.Popen | None = None):
    """Poll ``what()`` until it is true (its value), the process ends or ``timeout`` s pass."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = what()
        if found:
            return found
        assert proc is None or proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("timed out")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_run_a_signal_cuts_short_is_not_kept_and_the_campaign_stops(sig, tmp_path,
                                                                      monkeypatch):
    """SIGTERM or Ctrl-C while the second case runs (the run ends at its next step and closes
    as at its end): exit 130, one line, the first case kept, none stored for the second (it
    was judged a stall and kept, and a rerun never ran it again); the same command then runs
    the second alone."""
    root = Path(__file__).resolve().parents[1]
    runs = tmp_path / "tmp"  # each run's record is in a temporary folder: where it starts
    runs.mkdir()
    out = tmp_path / "out"
    args = [*TINY[:5], "3", "4", "--duration", "2", "--engine", "serial", "--out", str(out)]
    proc = subprocess.Popen([sys.executable, str(root / "scripts" / "eval_terrain.py"), *args],
                            env={**os.environ, "TMPDIR": str(runs), "PYTHONPATH": str(root)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        (first,) = wait_for(lambda: list((out / "cases").glob("*.json")), proc=proc)
        # the second run's record begun: its loop starts (or its first plan compiles)
        wait_for(lambda: list(runs.glob("*/run/events.log")), proc=proc)
        time.sleep(0.5)
        assert proc.poll() is None
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted: 1 of 2 cases finished" in err.strip().splitlines()[-1], err
    assert list((out / "cases").glob("*.json")) == [first]
    assert json.loads(first.read_text())["result"]["seed"] == 3
    real, ran = eval_terrain.run_case, []

    def counted(case: dict) -> dict:
        ran.append(case["seed"])
        return real(case)

    monkeypatch.setattr(eval_terrain, "run_case", counted)
    assert eval_terrain.main(args) == 0
    assert ran == [4]
    assert len(list((out / "cases").glob("*.json"))) == 2


@pytest.mark.slow
def test_the_h1_terrain_config_walks_up_the_5_degree_ramp():
    """h1_hw_velocity_terrain on the deploy path (its Kalman filter carrying the height on
    realistic sensors, the delays, the Menagerie H1), 0.3 m/s for 2 m, seed 4: it covers the
    ramp (1.89 m); with h1_hw_velocity's level ground and flat-floor height it stalled on the
    slope at 1.69 m."""
    args = eval_terrain.parser().parse_args(["--duration", "12"])
    case = eval_terrain.make_case("h1_hw_velocity_terrain", "ramp_up_5", 4, args)
    result = eval_terrain.run_case(case)
    assert result["outcome"] == "goal", result
    assert result["end_x_m"] > 1.8


def one_run(tmp_path, config: str, terrain: str, seed: int, duration: float) -> dict:
    """The result of one eval_terrain case, run serially on the deploy path's defaults."""
    assert eval_terrain.main(["--configs", config, "--terrains", terrain, "--seeds", str(seed),
                              "--duration", str(duration), "--engine", "serial",
                              "--out", str(tmp_path)]) == 0
    (case_file,) = (tmp_path / "cases").glob("*.json")
    return json.loads(case_file.read_text())["result"]


@pytest.mark.slow
def test_the_go1_terrain_config_walks_down_an_8cm_step(tmp_path):
    """go1_hw_terrain on the deploy path (its Kalman filter, the delays, the Menagerie Go1)
    gets down the 8 cm step to its goal (seed 2; 9 of seeds 0-9 do, docs/terrain.md "A foot
    below the ground"). Seed 2 fell past the edge without the config's floor per foot, its
    foothold below the plane and its 5 cm contact band (6 of 10 got down then)."""
    result = one_run(tmp_path, "go1_hw_terrain", "step_down_8cm", seed=2, duration=10)
    assert result["outcome"] == "goal", result


@pytest.mark.slow
def test_the_go2_terrain_config_gets_up_an_8cm_step_it_finds_by_touch(tmp_path):
    """go2_hw_terrain (``ground: felt``) on the deploy path gets up the 8 cm step to its goal
    (seed 0; docs/terrain.md "A step felt"): a front foot held back at the riser, the step
    planned on until every foot stood on its top, and the fitted plane again. With ``ground:
    fit`` it stalls in front of the riser (0 of 10 get up), and the derivatives need no finite
    difference on the riser's box."""
    result = one_run(tmp_path, "go2_hw_terrain", "step_up_8cm", seed=0, duration=10)
    assert result["outcome"] == "goal", result
    assert result["fd_evaluations"] == 0


@pytest.mark.slow
def test_the_go1_slabs_config_walks_over_loose_slabs(tmp_path):
    """go1_hw_slabs on the deploy path over loose slabs up to 5 cm reaches its goal in 15 s
    (seed 5; 9 of seeds 0-9 do, docs/terrain.md "The Go1 on loose slabs"). Seed 5 needs both
    of its settings: with a quarter of the TV-LQR gains (go1_hw_terrain's) it fell at 15.0 s,
    with the default slope prior (0.01 m²) at 14.0 s, and go1_hw_terrain, with neither,
    passed the 40 rad/s joint trip."""
    result = one_run(tmp_path, "go1_hw_slabs", "slabs_5cm", seed=5, duration=15)
    assert result["outcome"] == "goal", result


@pytest.mark.slow
def test_the_a1_terrain_config_gets_down_an_8cm_step(tmp_path):
    """a1_hw_terrain on the deploy path gets down the 8 cm step and walks on (seed 0; 10 of
    seeds 0-9 reach the goal, docs/terrain.md "A foot below the ground"). Without a floor per
    foot and the foothold below the plane it fell past the edge at 2.1 s (x 0.82 m)."""
    result = one_run(tmp_path, "a1_hw_terrain", "step_down_8cm", seed=0, duration=5)
    assert not result["fell"] and result["end_x_m"] > 1.2, result
    assert result["fd_evaluations"] == 0


@pytest.mark.slow
def test_the_go2_terrain_config_gets_down_an_8cm_step_on_undamped_joints(tmp_path):
    """go2_hw_terrain on the robot's own model as the simulated robot (what the fake robot
    simulates on loopback: no passive joint damping beside the motors' Kd) gets down the 8 cm
    step (seed 4; docs/terrain.md "The simulated joints' damping"). With the default pull to
    the goal (0.2) it fell past the edge at x 0.67 m, its joints at 83 rad/s."""
    assert eval_terrain.main(["--configs", "go2_hw_terrain", "--terrains", "step_down_8cm",
                              "--seeds", "4", "--duration", "10", "--engine", "serial",
                              "--plant-model", "own", "--out", str(tmp_path)]) == 0
    (case_file,) = (tmp_path / "cases").glob("*.json")
    result = json.loads(case_file.read_text())["result"]
    assert result["outcome"] == "goal", result
    assert result["max_joint_speed"] < 30.0, result
