"""Each model stands from its home key (lockstep simulation, 1 s).

Quadrupeds hold the home ctrl (joint targets of their position actuators). H1 has torque
actuators and is statically unstable under joint PD with its hardware gains (its ankles are far
softer than the gravitational stiffness about them: it tips over in about 2 s, see the reference
notes), so for H1 we check what the model must provide to a balancing controller: the home ctrl
is the static-equilibrium torque with every foot contact pushing, and for 1 s that torque plus
the hardware joint PD keeps the robot still on its heel and toe spheres.
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from standing_oracle import contact_forces, standing_torques

import robots
from robots.statics import resting_site_heights

DURATION = 1.0
H1_CONTACTS = ("left_heel", "left_toe", "right_heel", "right_toe")


def home(model: mujoco.MjModel, robot: str) -> mujoco.MjData:
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key(robots.info(robot).home_key).id)
    mujoco.mj_forward(model, data)
    return data


def tilt(model: mujoco.MjModel, data: mujoco.MjData, base: str) -> float:
    """Angle (rad) between the base's z axis and the world's."""
    return float(np.arccos(np.clip(data.body(base).xmat[8], -1.0, 1.0)))


def floor_contacts(model: mujoco.MjModel, data: mujoco.MjData) -> set[str]:
    """Names of the geoms touching the floor."""
    floor = model.geom("floor").id
    return {model.geom(c.geom2 if c.geom1 == floor else c.geom1).name or "?"
            for c in data.contact[: data.ncon] if floor in (c.geom1, c.geom2)}


@pytest.mark.parametrize("robot", ["a1", "go1", "go2"])
def test_quadruped_stands_holding_home_ctrl(robot):
    info = robots.info(robot)
    model = robots.load_model(robot)
    data = home(model, robot)
    # The home ctrl are the home joint angles (targets of the position actuators).
    joint_qpos = data.qpos[model.jnt_qposadr[model.actuator_trnid[:, 0]]]
    np.testing.assert_allclose(data.ctrl, joint_qpos)
    ctrl = data.ctrl.copy()
    start_height = data.body(info.base_body).xpos[2]
    heights, tilts = [], []
    for _ in range(round(DURATION / model.opt.timestep)):
        data.ctrl[:] = ctrl
        mujoco.mj_step(model, data)
        heights.append(data.body(info.base_body).xpos[2])
        tilts.append(tilt(model, data, info.base_body))
    assert min(heights) > info.fall_height
    assert max(tilts) < np.deg2rad(30)
    # Standing, not merely not fallen: it settles within 3 cm of the home height, level, on its
    # four feet only.
    assert abs(heights[-1] - start_height) < 0.03
    assert tilts[-1] < np.deg2rad(2)
    assert floor_contacts(model, data) == set(info.feet)
    assert not np.any(data.warning.number)


@pytest.mark.parametrize("file", ["h1.xml", "h1_legs.xml"])
def test_h1_home_ctrl_is_static_equilibrium(file):
    """Home ctrl = standing torques recomputed from the model, with all four contacts pushing
    down (the centre of mass is inside the support) and no sideways push."""
    model = mujoco.MjModel.from_xml_path(str(robots.MODELS_DIR / file))
    data = home(model, "h1")
    np.testing.assert_allclose(data.ctrl, standing_torques(model, data, H1_CONTACTS), atol=0.006)
    forces, _ = contact_forces(model, data, H1_CONTACTS)
    assert np.all(forces[:, 2] > 0.1 * forces[:, 2].sum() / len(H1_CONTACTS))
    assert forces[:, 2].sum() == pytest.approx(mujoco.mj_getTotalmass(model) * 9.81, rel=1e-6)
    np.testing.assert_allclose(forces[:, :2], 0.0, atol=1e-6)


@pytest.mark.parametrize("file", ["h1.xml", "h1_legs.xml"])
def test_h1_holds_still_for_one_second(file):
    """Home torques plus the hardware joint PD around the home pose: for 1 s the pelvis tilts
    less than 2 degrees and moves less than 2 cm, on its heels and toes only. (The equilibrium
    is unstable: it drifts 1 cm backwards in that second and falls within 3 s. With a wrong
    feedforward, e.g. none, it tilts past 2 degrees within 0.5 s.)"""
    info = robots.info("h1")
    model = mujoco.MjModel.from_xml_path(str(robots.MODELS_DIR / file))
    data = home(model, "h1")
    joints = [model.joint(model.actuator_trnid[a, 0]).name for a in range(model.nu)]
    kp = np.array([info.hw_kp[info.motor_joints.index(j)] for j in joints])
    kd = np.array([info.hw_kd[info.motor_joints.index(j)] for j in joints])
    qadr = model.jnt_qposadr[model.actuator_trnid[:, 0]]
    vadr = model.jnt_dofadr[model.actuator_trnid[:, 0]]
    q_home, tau_home = data.qpos[qadr].copy(), data.ctrl.copy()
    start = data.body(info.base_body).xpos.copy()
    for _ in range(round(DURATION / model.opt.timestep)):
        data.ctrl[:] = tau_home + kp * (q_home - data.qpos[qadr]) - kd * data.qvel[vadr]
        mujoco.mj_step(model, data)
        assert tilt(model, data, info.base_body) < np.deg2rad(2)
    assert np.linalg.norm(data.body(info.base_body).xpos - start) < 0.02
    assert floor_contacts(model, data) == set(H1_CONTACTS)
    assert not np.any(data.warning.number)


@pytest.mark.parametrize("robot", ["a1", "go1", "go2"])
def test_feet_rest_below_their_radius_where_the_contact_force_carries_the_robot(robot):
    """The resting height of the foot sites, settled in the planning model at its 10 ms step,
    is where the robot model's own 2 ms simulation puts them (to 1 mm), and below the sphere
    radius by more than the contacts' ordinary millimetre: the Menagerie feet are soft."""
    info = robots.info(robot)
    planning = robots.load_planning_model(robot)
    planning.opt.timestep = 0.01
    rest = resting_site_heights(planning, info.home_key, info.feet)
    model = robots.load_model(robot)
    data = home(model, robot)
    for _ in range(round(2.0 / model.opt.timestep)):
        mujoco.mj_step(model, data)
    # The feet carry the robot: their contact forces add up to its weight.
    weight = -model.opt.gravity[2] * model.body_subtreemass[1]
    force = np.zeros(6)
    normal = 0.0
    for i in range(data.ncon):
        mujoco.mj_contactForce(model, data, i, force)
        normal += force[0]
    assert normal == pytest.approx(weight, rel=0.02)
    np.testing.assert_allclose(rest, [data.site(f).xpos[2] for f in info.feet], atol=1e-3)
    assert np.all(rest < info.foot_radius - 0.01)
