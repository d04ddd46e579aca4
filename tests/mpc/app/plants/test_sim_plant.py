"""The simulated plant of a robot with locked joints (H1): planning-model layout outside, the
full robot inside, upper body held."""

import numpy as np
import pytest

import robots
from mpc.app.plants.sim_plant import SimPlant


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


def test_foot_contacts_count_the_ground_only():
    """A foot resting on the floor counts; the same foot touching the robot's own body does not."""
    import mujoco

    import robots
    from mpc.app.plants.sim_plant import SimPlant

    plant = SimPlant(robots.info("a1"))
    for _ in range(300):
        plant.step()
    assert plant.foot_contacts().all()  # standing on four feet
    # in the air, the front-right leg swung back so its calf touches the rear-right hip
    d, m = plant.data, plant.model
    d.qpos[2] = 0.8
    pose = (("FR_hip_joint", -0.8), ("FR_thigh_joint", 1.78), ("FR_calf_joint", -0.92))
    for joint, angle in pose:
        d.qpos[m.jnt_qposadr[m.joint(joint).id]] = angle
    mujoco.mj_forward(m, d)
    calf = m.body("FR_calf").id
    touching = {(m.geom_bodyid[g1], m.geom_bodyid[g2]) for g1, g2 in
                zip(d.contact.geom1, d.contact.geom2, strict=True)}
    assert any(calf in pair and 0 not in pair for pair in touching)  # a real self-contact
    assert not plant.foot_contacts().any()
