"""The safety layer around a simulated plant (``safety.in_simulation``)."""

import logging
import math

import mujoco
import numpy as np

import robots
from hardware.safety.layer import SafetyConfig
from hardware.safety.safe_plant import SafePlant
from mpc.app import assembly
from mpc.app.config import load_config
from mpc.app.plants.sim_plant import SimPlant


def wrapped(**safety) -> SafePlant:
    info = robots.info("go1")
    return SafePlant(SimPlant(info), info, SafetyConfig(in_simulation=True, **safety),
                     robots.load_planning_model("go1"))


def test_config_wraps_a_simulated_plant():
    cfg = load_config("configs/a1_trot.yaml", ["safety.in_simulation=true"])
    plant = assembly.build_plant(cfg)
    assert isinstance(plant, SafePlant) and isinstance(plant.plant, SimPlant)
    assert not isinstance(assembly.build_plant(load_config("configs/a1_trot.yaml")), SafePlant)


def test_controls_clamped_to_the_robots_joint_limits_and_logged(caplog):
    plant = wrapped()
    ctrl = plant.plant.data.ctrl.copy()
    ctrl[1] = 3.5  # FR thigh: the model allows 4.5, the Go1 hardware 2.966
    with caplog.at_level(logging.WARNING, logger="hardware.safety.layer"):
        plant.send(ctrl)
    assert plant.plant.data.ctrl[1] == robots.info("go1").joint_limits[1][1]
    assert "clamped control" in caplog.text


def test_nan_damps_and_is_not_applied():
    plant = wrapped()
    before = plant.plant.data.ctrl.copy()
    ctrl = before.copy()
    ctrl[0] = np.nan
    plant.send(ctrl)
    assert plant.damping_reason.startswith("non-finite")
    assert plant.plant.damping_reason == plant.damping_reason
    np.testing.assert_array_equal(plant.plant.data.ctrl, before)


def test_tilt_tripwire():
    plant = wrapped(max_tilt=0.5)
    half = math.radians(40) / 2
    plant.plant.data.qpos[3:7] = [math.cos(half), 0.0, math.sin(half), 0.0]
    plant.read_state()
    assert plant.damping_reason.startswith("tilt")


def test_dry_run_withholds_controls():
    plant = wrapped(dry_run=True)
    before = plant.plant.data.ctrl.copy()
    plant.send(before + 0.1)
    np.testing.assert_array_equal(plant.plant.data.ctrl, before)
    assert plant.withheld == 1


def test_the_wrapper_shows_the_simulation_it_wraps():
    """A viewer and the recorder see the wrapped simulation: its model, state and contacts."""
    plant = wrapped()
    assert plant.model is plant.plant.model
    shown = mujoco.MjData(plant.model)
    plant.plant.step()
    plant.copy_state(shown)
    assert shown.time == plant.plant.data.time
    np.testing.assert_array_equal(plant.foot_contacts(), plant.plant.foot_contacts())


def test_an_unlimited_model_is_clamped_to_the_documented_range():
    """MuJoCo reports (0, 0) as the range of a joint it leaves unlimited: taken as a limit,
    every target would be clamped to 0."""
    spec = mujoco.MjSpec.from_file(str(robots.model_path("go1")))
    for joint in spec.joints:  # as a joint without a range: limited false, range (0, 0)
        joint.limited = mujoco.mjtLimited.mjLIMITED_FALSE
        joint.range = [0.0, 0.0]
    for act in spec.actuators:
        act.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE
        act.ctrlrange = [0.0, 0.0]
    info = robots.info("go1")
    plant = SafePlant(SimPlant(info), info, SafetyConfig(in_simulation=True), spec.compile())
    ctrl = plant.plant.data.ctrl.copy()
    ctrl[0] = 0.95  # FR abduction: within the hardware's +-1.047 (the model's own: +-0.863)
    ctrl[1] = 3.5  # FR thigh: beyond the hardware's 2.966
    plant.send(ctrl)
    assert plant.plant.data.ctrl[0] == 0.95 and plant.plant.data.ctrl[1] == 2.966


def test_joint_speed_tripwire():
    plant = wrapped(max_joint_speed=5.0)
    plant.read_state()
    assert plant.damping_reason is None
    plant.plant.data.qvel[6 + 2] = -6.0  # FR calf
    plant.read_state()
    assert plant.damping_reason == "joint speed 6.0 rad/s at FR_calf_joint beyond 5 rad/s"
