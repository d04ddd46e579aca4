"""The simulated plant of a robot with locked joints (H1): planning-model layout outside, the
full robot inside, upper body held."""

import numpy as np
import pytest

import robots
from mpc.sim_plant import SimPlant


@pytest.fixture
def h1_plant():
    return SimPlant(robots.info("h1"))


def test_state_is_reported_in_the_planning_model_layout(h1_plant):
    planning = robots.load_planning_model("h1")
    full = h1_plant.model
    # distinct values to see where each one lands
    h1_plant.data.qpos[7:] = 0.01 * np.arange(full.nq - 7)
    h1_plant.data.qvel[:] = np.arange(full.nv)
    state = h1_plant.read_state()
    assert state.qpos.shape == (planning.nq,) and state.qvel.shape == (planning.nv,)
    for j in range(1, planning.njnt):  # hinges: compare by name
        name = planning.joint(j).name
        fj = full.joint(name)
        assert state.qpos[planning.jnt_qposadr[j]] == 0.01 * (fj.qposadr[0] - 7)
        assert state.qvel[planning.jnt_dofadr[j]] == fj.dofadr[0]
    np.testing.assert_array_equal(state.qpos[:7], h1_plant.data.qpos[:7])


def test_controls_go_to_the_actuators_of_the_same_name_and_the_rest_are_held(h1_plant):
    planning = robots.load_planning_model("h1")
    ctrl = np.arange(1.0, planning.nu + 1)
    h1_plant.send(ctrl)
    h1_plant.step()
    for a in range(planning.nu):
        name = planning.actuator(a).name
        assert h1_plant.data.ctrl[h1_plant.model.actuator(name).id] == ctrl[a]
    m = h1_plant.locked
    np.testing.assert_allclose(h1_plant.data.ctrl[m.locked_ctrl],
                               m.locked_torque, atol=1e-9)  # at home, at rest: home torques


def test_damping_releases_every_motor(h1_plant):
    h1_plant.send(np.ones(10))
    h1_plant.damp("test")
    h1_plant.step()
    assert np.all(h1_plant.data.ctrl == 0.0)
