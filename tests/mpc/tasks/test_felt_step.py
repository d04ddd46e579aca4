"""A step up met blind (``task.ground: felt``, mpc.tasks.felt_step): the riser is placed where the
held foot touched it (its centre plus its radius), not at a sample boundary, the map is revealed
to the planning model's field and to the targets exactly there, and the first foothold on top
sets the step's height."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robots
from mpc.tasks import make_task
from mpc.tasks.felt_step import FeltStep
from mpc.tasks.map_ground import MAP_BIT, RISER_GEOM
from mpc.tasks.riser import HOLD_TIME
from mpc.tasks.terrain_map import HeightMap, MapError

R = 0.022


@settings(max_examples=50, deadline=None)
@given(x=st.floats(0.1, 3.0), offset=st.floats(-0.05, 0.05))
def test_the_first_raised_sample_lies_a_sample_past_the_face_plus_the_offset(x, offset):
    felt = FeltStep(R, offset)
    assert felt.meet(np.array([x, 0.0, 0.0]), 0.0)
    assert felt.face == pytest.approx(x + R)
    assert felt.riser == pytest.approx(x + R + offset)
    g = felt.grid()
    at = felt.riser + felt.RESOLUTION
    res = felt.RESOLUTION
    assert g.height(at, 0.0) == pytest.approx(felt.top)
    assert g.height(at - res, 0.0) == pytest.approx(0.0)
    # the field slopes over exactly the sample before: half way at half a sample
    assert g.height(at - res / 2, 0.2) == pytest.approx(felt.top / 2)
    assert g.shape == felt.flat().shape and g.origin[1] == felt.flat().origin[1]
    assert abs(g.origin[0] - felt.flat().origin[0]) <= res / 2 + 1e-12


def test_a_riser_is_assumed_climbable_until_a_foot_stands_on_top():
    felt = FeltStep(R)
    assert not felt.confirm(np.zeros((4, 3)), np.ones(4, bool))  # no riser yet
    # held 5 cm up its face: the top at least the margin over that
    assert felt.meet(np.array([0.45, 0.0, 0.07]), 0.0)
    assert felt.top == pytest.approx(0.07 + felt.MARGIN)
    assert not felt.meet(np.array([0.9, 0.0, 0.0]), 0.0)  # the first riser only
    felt = FeltStep(R)
    felt.meet(np.array([0.45, 0.0, 0.01]), 0.0)
    assert felt.top == pytest.approx(felt.RISE)
    face = felt.face
    feet = np.array([[face + R - 0.005, 0.1, 0.05],   # on the face: not on top
                     [face + 0.05, -0.1, 0.12],       # on top, but not standing
                     [face - 0.1, 0.1, 0.0], [face - 0.3, -0.1, 0.0]])
    assert not felt.confirm(feet, np.array([True, False, True, True]))
    assert felt.top == pytest.approx(felt.RISE)
    assert felt.confirm(feet, np.ones(4, bool))
    assert felt.top == pytest.approx(0.12) and felt.confirmed
    assert felt.grid().height(face + 0.05, 0.0) == pytest.approx(0.12)


def test_a_foot_over_the_top_lower_than_it_lowers_the_assumed_top():
    felt = FeltStep(R, -0.015)
    stance = np.ones(4, bool)
    assert not felt.lower(np.zeros((4, 3)), stance)  # no riser yet
    felt.meet(np.array([0.478, 0.0, 0.01]), 0.0)
    assert felt.top == pytest.approx(felt.RISE)
    riser = felt.riser
    feet = np.array([[riser - 0.002, 0.1, 0.03],   # before the riser in the model: at its face
                     [riser + 0.05, -0.1, felt.RISE - 0.5 * felt.BELOW],  # within the band
                     [riser - 0.3, 0.1, 0.0], [riser - 0.5, -0.1, 0.0]])
    assert not felt.lower(feet, stance)
    assert felt.top == pytest.approx(felt.RISE)
    feet[1, 2] = 0.05  # a 5 cm step: the foot is 3 cm inside the one assumed
    swinging = np.array([True, False, True, True])  # pressed into a higher riser's face
    assert not felt.lower(feet, swinging) and felt.top == pytest.approx(felt.RISE)
    assert felt.lower(feet, stance)
    assert felt.top == pytest.approx(0.05)
    assert felt.grid().height(riser + 0.05, 0.0) == pytest.approx(0.05)
    feet[1, 2] = -0.01  # never below the lowest top over the ground before it
    assert felt.lower(feet, stance)
    assert felt.top == pytest.approx(felt.LOWEST)
    feet[1, 2] = 0.06  # a foot standing on top measures it, and then it stays
    assert felt.confirm(feet, np.ones(4, bool)) and felt.top == pytest.approx(0.06)
    feet[1, 2] = 0.03
    assert not felt.lower(feet, stance) and felt.top == pytest.approx(0.06)


def ray_down(m: mujoco.MjModel, d: mujoco.MjData, x: float, y: float = 0.0) -> float:
    """Height of the planning model's ground at (x, y): a ray cast down onto it."""
    geomid = np.zeros(1, np.int32)
    start = np.array([x, y, 1.0])
    dist = mujoco.mj_ray(m, d, start, np.array([0.0, 0.0, -1.0]), None, 1, -1, geomid)
    return 1.0 - dist


def held_state(task, model, foot: str, x: float):
    """The home pose with the base at x walking 0.3 m/s forward and ``foot`` held still (its
    leg's joint velocities cancel the base's)."""
    d = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, d, model.key(task.robot.home_key).id)
    d.qpos[0] = x
    d.qvel[0] = 0.3
    mujoco.mj_forward(model, d)
    site = model.site(foot).id
    jac = np.zeros((3, model.nv))
    mujoco.mj_jacSite(model, d, jac, None, site)
    leg = [i for i in range(6, model.nv) if abs(jac[:, i]).max() > 1e-9]
    d.qvel[leg] = np.linalg.solve(jac[:, leg], -jac[:, 0:6] @ d.qvel[0:6])
    mujoco.mj_forward(model, d)
    return d


@pytest.fixture
def felt_go2():
    task = make_task("quadruped_flat", robots.info("go2"), ground="felt", goal=[3.0, 0.0],
                     map_edge=0.06, felt_offset=0.0)  # the face at the foot's reach exactly
    return task, task.planning_model(0.01)


def test_a_foot_held_mid_swing_reveals_the_step_at_its_face_in_the_model_and_the_targets(
        felt_go2):
    task, m = felt_go2
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, m.key(task.robot.home_key).id)
    task.update(0.0, d.qpos, d.qvel)  # the first plan: every foot stands
    mujoco.mj_kinematics(m, d)
    assert ray_down(m, d, 0.6) == pytest.approx(0.0, abs=1e-6)  # the level floor
    # a time when FL is in the middle of its swing
    period = 1.0 / task.timing[1]
    from mpc.tasks.gait import swing_phase
    times = np.arange(0.0, period, period / 200)
    phase = swing_phase(task.clock.phase(times), np.array(task.gait.offsets), task.timing[0])
    fl = task.robot.feet.index("FL_foot")
    t0 = float(times[np.flatnonzero(np.abs(phase[:, fl] - 0.4) < 0.01)[0]])
    held = held_state(task, m, "FL_foot", 0.2)
    foot_x = float(held.site_xpos[m.site("FL_foot").id, 0])
    task.update(t0, held.qpos, held.qvel)
    assert task.felt.face is None  # not yet held long enough
    task.update(t0 + HOLD_TIME, held.qpos, held.qvel)
    face = foot_x + task.robot.foot_radius
    assert task.felt.face == pytest.approx(face)
    task.pose_ground(m)
    mujoco.mj_kinematics(m, d)
    top = task.felt.top
    shift = task.map_ground.shift
    # the model's ground: a vertical riser at the face (the box, then the field), the level
    # floor just before it
    assert ray_down(m, d, face + 0.001) == pytest.approx(top + shift, abs=1e-4)
    assert ray_down(m, d, face + 0.5 * FeltStep.RESOLUTION, -0.3) == pytest.approx(top + shift,
                                                                                  abs=1e-4)
    assert ray_down(m, d, face + 0.3, 0.4) == pytest.approx(top + shift, abs=1e-4)
    assert ray_down(m, d, face - 0.001) == pytest.approx(shift, abs=1e-4)
    box = m.geom(RISER_GEOM).id
    assert m.geom_contype[box] == MAP_BIT and m.geom_conaffinity[box] == 0  # feet alone
    # the targets read the same map
    assert float(task.map_ground.map.height(face + 0.001, 0.0)) == pytest.approx(top)
    assert float(task.map_ground.clearance_map.height(face - 0.01, 0.0)) > 0.5 * top


def test_the_task_lowers_the_top_when_a_foot_is_found_over_it_lower(felt_go2):
    """The task asks the felt step at every plan (``LeggedTask._feel``): a Go2 foot that came
    down on a 5 cm step assumed 8 cm high stood 3 cm inside the planning model's riser."""
    task, m = felt_go2
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, m.key(task.robot.home_key).id)
    task.update(0.0, d.qpos, d.qvel)
    felt = task.felt
    felt.meet(np.array([0.478, 0.0, 0.01]), 0.0)
    task.map_ground.reveal(felt.grid(), felt.riser, felt.top)
    assert felt.top == pytest.approx(FeltStep.RISE)
    mujoco.mj_kinematics(m, d)
    fl = float(d.site_xpos[m.site("FL_foot").id, 0])
    d.qpos[0] += felt.riser + 0.03 - fl  # FL 3 cm past the riser, every foot 5 cm up
    d.qpos[2] += 0.05
    d.qvel[0] = 0.5  # walking on: no foot stands, so no foothold confirms the top
    mujoco.mj_kinematics(m, d)
    ground = d.site_xpos[m.site("FL_foot").id, 2] - task.foot_height - task.map_ground.shift
    assert ground < FeltStep.RISE - FeltStep.BELOW
    task.update(0.1, d.qpos, d.qvel)
    assert felt.top == pytest.approx(ground, abs=1e-9)
    task.pose_ground(m)
    mujoco.mj_kinematics(m, d)
    at = felt.riser + 0.05
    assert ray_down(m, d, at) == pytest.approx(felt.top + task.map_ground.shift, abs=1e-4)


def test_a_revealed_map_keeps_the_grid_and_fits_the_field(felt_go2):
    task, _ = felt_go2
    mg = task.map_ground
    flat = task.felt.flat()
    with pytest.raises(MapError, match="grid"):
        mg.reveal(HeightMap(np.zeros((3, 3)), flat.resolution, flat.origin))
    with pytest.raises(MapError, match="span"):
        mg.reveal(HeightMap(np.where(np.arange(flat.shape[1]) > 40, 1.0, 0.0)
                            * np.ones(flat.shape), flat.resolution, flat.origin))


def test_felt_mode_is_refused_a_map_file():
    with pytest.raises(ValueError, match="ground"):
        make_task("quadruped_flat", robots.info("go2"), ground="felt", map="x.yaml")


def test_in_felt_mode_a_foothold_is_moved_off_the_riser_forward_only(felt_go2):
    """A riser is found with a foot at it: the flat ground nearest a foothold at the riser's foot
    is behind it, and moved there the Go2 walked away from the step (true state, seed 0)."""
    task, _ = felt_go2
    mg = task.map_ground
    felt = task.felt
    felt.meet(np.array([0.478, 0.0, 0.01]), 0.0)
    mg.reveal(felt.grid(), felt.riser, felt.top)
    aim = np.array([felt.face - 0.04, 0.1])  # in the edge zone, nearer the flat ground behind
    ahead = mg.safe_foothold(aim, np.array([1.0, 0.0]))
    assert ahead is not None and ahead[0] > felt.face + 0.02
    assert float(mg.edge_map.height(*ahead)) <= mg.EDGE_TOLERANCE
    mg.shift_back = True  # the map mode's rule: the nearest flat point, here behind
    assert mg.safe_foothold(aim, np.array([1.0, 0.0]))[0] < felt.face - 0.02
