"""The fake robot as a lockstep plant: commands reach the motors after the set delay, states
come back in the planning model's layout."""

import mujoco
import numpy as np
import pytest

import robots
from hardware.fake.motor_plant import FakeMotorPlant


def test_a_command_reaches_the_motors_after_the_delay():
    plant = FakeMotorPlant(robots.info("a1"), delay=0.01)  # 5 steps of 2 ms
    assert plant.delay_steps == 5
    ctrl = plant.map.home[plant.map.actuator_slots].copy()
    plant.send(ctrl)
    for _ in range(6):
        plant.step()
    held = plant.sim.tau.copy()
    ctrl[0] += 0.2
    plant.send(ctrl)
    for _ in range(5):  # the new target is in flight
        plant.step()
        assert abs(plant.sim.tau[0] - held[0]) < 5.0
    plant.step()
    kp = plant.map.hold_kp[plant.map.actuator_slots[0]]
    assert plant.sim.tau[0] - held[0] == pytest.approx(0.2 * kp, rel=0.25)


def test_state_in_the_planning_models_layout():
    """Go2's planning model orders its legs FL, FR, RL, RR, its motors FR, FL, RR, RL."""
    plant = FakeMotorPlant(robots.info("go2"))
    for _ in range(20):
        plant.step()
    state = plant.read_state()
    model = robots.load_planning_model("go2")
    sim_model, sim_data = plant.sim.model, plant.sim.data
    for j in range(1, model.njnt):
        name = model.joint(j).name
        sim_j = mujoco.mj_name2id(sim_model, mujoco.mjtObj.mjOBJ_JOINT, name)
        assert state.qpos[model.jnt_qposadr[j]] == sim_data.qpos[sim_model.jnt_qposadr[sim_j]]
        assert state.qvel[model.jnt_dofadr[j]] == sim_data.qvel[sim_model.jnt_dofadr[sim_j]]
    np.testing.assert_array_equal(state.qpos[:7], sim_data.qpos[:7])


def test_a_configs_gains_are_commanded_as_the_bridge_commands_them():
    """``kp``/``kd`` (a hardware config's plant.kp/kd): one value for every actuator or one per
    actuator; the planning model's gains otherwise; any other count is refused."""
    plant = FakeMotorPlant(robots.info("go2"), kd=[4.0])
    slots = plant.map.actuator_slots
    plant.send(plant.map.home[slots])
    np.testing.assert_array_equal(plant.pending.kd[slots], 4.0)
    np.testing.assert_array_equal(plant.pending.kp[slots], plant.map.hold_kp[slots])
    assert not np.any(plant.map.hold_kd[slots] == 4.0)  # not the model's figure
    per_joint = np.arange(1.0, 13.0)
    plant = FakeMotorPlant(robots.info("go2"), kp=list(per_joint))
    plant.send(plant.map.home[slots])
    np.testing.assert_array_equal(plant.pending.kp[slots], per_joint)
    with pytest.raises(ValueError, match=r"plant\.kd: give 1 value or 12"):
        FakeMotorPlant(robots.info("go2"), kd=[4.0, 4.0])


def test_non_finite_control_latches_damping():
    plant = FakeMotorPlant(robots.info("a1"))
    ctrl = plant.map.home[plant.map.actuator_slots].copy()
    ctrl[3] = np.nan
    plant.send(ctrl)
    plant.send(plant.map.home[plant.map.actuator_slots])
    plant.step()
    assert plant.damping_reason == "non-finite command"
    assert np.all(plant.sim.cmd.kp == 0) and np.all(np.isfinite(plant.sim.tau))


@pytest.mark.slow
def test_the_go1_stands_still_on_its_motors_at_zero_command(tmp_path):
    """Velocity mode at zero command on the fake robot's motors (the hardware config's planner
    settings, its feedback gain and estimator on realistic sensors): standing, the joints stay
    slow (the joint-speed trip is at 40 rad/s)."""
    from mpc.app.config import load_config
    from mpc.app.run import run

    cfg = load_config("configs/go1_hw_velocity.yaml", [
        "runtime.mode=lockstep", "runtime.duration=3", "runtime.planning_rate=45",
        "command.source={type: scripted, profile: [[0, 0, 0, 0]]}"])
    plant = FakeMotorPlant(robots.info("go1"), delay=0.004,
                           base_state=cfg.plant["base_state"])
    summary = run(cfg, out=tmp_path, plant=plant)
    assert not summary["fell"]
    assert plant.max_joint_speed < 5.0


def test_the_planned_stance_reaches_the_estimator():
    """As a robot's bridge does, the plant hands the gait schedule's stance to its estimator:
    standing, every foot is down by the legs, but the feet the schedule swings are not
    believed down (lockstep evaluations see the deploy path's estimator)."""
    plant = FakeMotorPlant(robots.info("go1"), delay=0.006, base_state={"type": "kalman"})
    for _ in range(200):  # settled on its feet (the first 0.1 s it sinks into the floor)
        plant.step()
    assert (plant.source.contact > 0.5).all()
    plant.set_planned_stance(np.array([True, False, False, True]))
    plant.step()
    np.testing.assert_array_equal(plant.source.contact > 0.5, [True, False, False, True])
