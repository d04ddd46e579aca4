"""The stance-leg Kalman filter against the simulation's truth, on realistic (noisy, biased,
quantized, late) sensors: a standing A1 swayed by a push, and (slow) the A1 trotting to its goal
in closed loop on the estimate."""

import numpy as np
import pytest

import robots
from hardware.estimation.sources import check_spec
from hardware.fake.estimated_plant import EstimatedSimPlant
from hardware.rotations import euler_zyx
from mpc.app.config import load_config
from mpc.app.errors import UserError
from mpc.app.run import run
from mpc.app.schema import ConfigError


def test_standing_and_pushed_the_estimate_follows_the_truth():
    plant = EstimatedSimPlant(robots.info("a1"), seed=3)
    m = plant.model
    home = m.key_ctrl[m.key("home").id].copy()
    base = m.body(robots.info("a1").base_body).id
    dv, dz, tilt, speed = [], [], [], []
    for k in range(1500):
        t = k * plant.timestep
        plant.data.xfrc_applied[base, :2] = [30.0, 20.0] if 1.0 < t < 1.6 else [0.0, 0.0]
        plant.send(home)
        plant.step()
        if t > 0.3:
            est, true = plant.read_state(), plant.true_state()
            dv.append(est.qvel[0:3] - true.qvel[0:3])
            dz.append(est.qpos[2] - true.qpos[2])
            tilt.append(np.subtract(euler_zyx(est.qpos[3:7])[:2], euler_zyx(true.qpos[3:7])[:2]))
            speed.append(np.linalg.norm(true.qvel[0:2]))
    assert max(speed) > 0.1  # the push moved it
    assert np.sqrt(np.mean(np.square(dv))) < 0.05
    assert np.sqrt(np.mean(np.square(dz))) < 0.01
    assert np.degrees(np.sqrt(np.mean(np.square(tilt)))) < 1.0


@pytest.mark.parametrize("option, value", [("slip_gate", -1.0), ("accel_noise", float("nan")),
                                           ("foot_force_weight", 2.0)])
def test_an_option_out_of_range_names_its_key(option, value):
    with pytest.raises(ConfigError, match=rf"'plant\.base_state\.{option}' must be"):
        check_spec({"type": "kalman", option: value})


def test_bad_estimator_or_sensor_input_is_one_config_error():
    for override, key in (("plant.base_state={type: kalman, stance_band: 5}", "stance_band"),
                          ("plant.sensors={latency: -1}", "sensors.latency")):
        with pytest.raises(UserError, match=key):
            run("configs/a1_trot.yaml", ["plant.type=sim_estimated", override], out="/dev/null")


@pytest.mark.slow
def test_a1_trots_to_its_goal_on_the_estimate(tmp_path):
    cfg = load_config("configs/a1_trot.yaml", [
        "runtime.mode=lockstep", "runtime.duration=5", "plant.type=sim_estimated",
        "planner.linesearch_candidates=6", "runtime.feedback_gain=0.5"])
    plant = EstimatedSimPlant(robots.info("a1"), seed=0)
    summary = run(cfg, out=tmp_path, plant=plant)
    true = plant.true_state()
    assert not summary["fell"]
    assert np.linalg.norm(true.qpos[0:2] - [2.0, 0.0]) < 0.25


@pytest.mark.slow
def test_walking_up_a_ramp_the_height_follows_the_truth(tmp_path):
    """With ``ground: carried`` nothing in the filter says where the ground is: up a 10° ramp
    (0.26 m of rise; the planner on its fitted ground) the height carried from foothold to
    foothold stays within 3 cm of the truth (the default flat-floor height measurement read it
    0.2 m low at the top) and the velocity within 0.06 m/s RMS."""
    cfg = load_config("configs/a1_trot.yaml", [
        "runtime.mode=lockstep", "runtime.duration=4.5", "task.ground=fit",
        "planner.linesearch_candidates=6", "runtime.feedback_gain=0.5"])
    plant = EstimatedSimPlant(robots.info("a1"), seed=0, terrain="ramp_up_10",
                              base_state={"type": "kalman", "ground": "carried"})
    dz, dv = [], []
    step = plant.step

    def record() -> None:
        step()
        est, true = plant.read_state(), plant.true_state()
        dz.append(est.qpos[2] - true.qpos[2])
        dv.append(est.qvel[0:3] - true.qvel[0:3])

    plant.step = record
    summary = run(cfg, out=tmp_path, plant=plant)
    true = plant.true_state()
    assert not summary["fell"]
    assert true.qpos[2] > 0.2 + 0.27  # on the plateau at the top
    assert np.max(np.abs(dz)) < 0.03
    assert np.sqrt(np.mean(np.square(dv))) < 0.06
