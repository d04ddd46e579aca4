"""A step up met blind (``task.ground: felt``, mpc.tasks.felt_step): the fitted plane until a swing
foot is held back at a riser; the riser is placed where the held foot touched it (its centre
plus its radius), not at a sample boundary, the map is revealed to the planning model's field
and to the targets exactly there, the first foothold on top sets the step's height, and once
every foot has stood on the top (or the ground beyond the riser is not the step's) the task is
back on the fitted plane."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robots
from mpc.tasks import make_task, map_ground
from mpc.tasks.felt_step import FeltStep
from mpc.tasks.gait import swing_phase
from mpc.tasks.ground import FOOT_BIT
from mpc.tasks.map_ground import (
    FIELD_BODY,
    MAP_BIT,
    MAP_BODY,
    RISER_BODY,
    RISER_GEOM,
    RISER_PARKED,
)
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


def test_the_step_is_done_with_once_climbed_or_once_the_ground_beyond_is_off_its_level():
    felt = FeltStep(R)
    felt.meet(np.array([0.45, 0.0, 0.01]), 0.0)
    beyond = felt.face + R
    feet = np.array([[beyond + 0.2, 0.1, 0.08], [beyond - 0.3, 0.1, 0.0],
                     [beyond + 0.2, -0.1, 0.08], [beyond - 0.3, -0.1, 0.0]])
    all_down = np.ones(4, bool)
    assert not felt.done(feet, all_down)  # the top not measured yet
    assert felt.confirm(feet, all_down)
    assert not felt.done(feet, all_down)  # the hind feet below, before the riser
    feet[[1, 3], 0] = beyond + 0.01
    feet[[1, 3], 2] = 0.08 + 0.9 * felt.OFF_LEVEL
    assert not felt.done(feet, np.array([True, True, True, False]))  # RR has not stood there
    assert felt.done(feet, np.array([False, False, False, True]))  # it has now: climbed

    off = FeltStep(R)  # a slab: the other front foot beyond the riser, on the floor
    off.meet(np.array([0.45, 0.0, 0.01]), 0.0)
    far = off.face + R + off.OFF_REACH
    feet = np.array([[far, 0.1, 0.05], [0.1, 0.1, 0.0], [far, -0.1, 0.05], [0.1, -0.1, 0.0]])
    assert off.confirm(feet, np.array([True, True, False, True]))
    assert not off.done(feet, np.array([True, True, False, True]))
    feet[2, 2] = 0.05 - 1.1 * off.OFF_LEVEL
    feet[2, 0] = far - 0.01  # near the riser: the estimate's error, not the ground
    assert not off.done(feet, all_down)
    feet[2, 0] = far
    assert off.done(feet, all_down)

    low = FeltStep(R)  # lowered by a foot over it to less than a step
    low.meet(np.array([0.45, 0.0, 0.01]), 0.0)
    assert not low.done(np.zeros((4, 3)), np.zeros(4, bool))
    feet = np.array([[low.riser + 0.05, 0.1, low.MIN_RISE - 0.002], [0.1, 0.1, 0.0],
                     [0.3, -0.1, 0.0], [0.1, -0.1, 0.0]])
    assert low.lower(feet, all_down) and low.top == pytest.approx(low.MIN_RISE - 0.002)
    assert low.done(feet, np.zeros(4, bool))


def ray_down(m: mujoco.MjModel, d: mujoco.MjData, x: float, y: float = 0.0) -> float:
    """Height of the planning model's ground at (x, y): a ray cast down onto it."""
    geomid = np.zeros(1, np.int32)
    start = np.array([x, y, 1.0])
    dist = mujoco.mj_ray(m, d, start, np.array([0.0, 0.0, -1.0]), None, 1, -1, geomid)
    return 1.0 - dist


def hold_fl(task, model, x: float, pitch: float = 0.0) -> mujoco.MjData:
    """FL held back for :data:`HOLD_TIME` in the middle of its swing (the base at x, pitched
    nose up by ``pitch``); returns the held state."""
    period = 1.0 / task.timing[1]
    times = np.arange(0.0, period, period / 200)
    phase = swing_phase(task.clock.phase(times), np.array(task.gait.offsets), task.timing[0])
    fl = task.robot.feet.index("FL_foot")
    t0 = float(times[np.flatnonzero(np.abs(phase[:, fl] - 0.4) < 0.01)[0]])
    held = held_state(task, model, "FL_foot", x, pitch)
    task.update(t0, held.qpos, held.qvel)
    assert task.felt.face is None and task.map_ground is None  # not yet held long enough
    task.update(t0 + HOLD_TIME, held.qpos, held.qvel)
    return held


def meet_riser(task, model, x: float) -> float:
    """FL held back in the middle of its swing (the base at x) until the task finds the
    riser; returns the foot's x."""
    held = hold_fl(task, model, x)
    assert task.map_ground is task.terrain
    return float(held.site_xpos[model.site("FL_foot").id, 0])


def held_state(task, model, foot: str, x: float, pitch: float = 0.0):
    """The home pose (pitched nose up by ``pitch``) with the base at x walking 0.3 m/s forward
    and ``foot`` held still (its leg's joint velocities cancel the base's)."""
    d = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, d, model.key(task.robot.home_key).id)
    d.qpos[3:7] = (np.cos(-pitch / 2), 0.0, np.sin(-pitch / 2), 0.0)
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
    task.pose_ground(m)
    mujoco.mj_kinematics(m, d)
    # the fitted plane (the level floor, where the first plan takes the feet a radius deep)
    assert ray_down(m, d, 0.6) == pytest.approx(task.ground.height(0.6, 0.0), abs=1e-6)
    assert abs(task.ground.height(0.6, 0.0)) < 0.002
    foot_x = meet_riser(task, m, 0.2)
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
    meet_riser(task, m, 0.0)
    felt = task.felt
    assert felt.top == pytest.approx(FeltStep.RISE)
    mujoco.mj_kinematics(m, d)
    fl = float(d.site_xpos[m.site("FL_foot").id, 0])
    d.qpos[0] += felt.riser + 0.03 - fl  # FL 3 cm past the riser, every foot 5 cm up
    d.qpos[2] += 0.05
    d.qvel[0] = 0.5  # walking on: no foot stands, so no foothold confirms the top
    mujoco.mj_kinematics(m, d)
    ground = d.site_xpos[m.site("FL_foot").id, 2] - task.foot_height - task.map_ground.shift
    assert ground < FeltStep.RISE - FeltStep.BELOW
    task.update(0.5, d.qpos, d.qvel)
    assert felt.top == pytest.approx(ground, abs=1e-9)
    task.pose_ground(m)
    mujoco.mj_kinematics(m, d)
    at = felt.riser + 0.05
    assert ray_down(m, d, at) == pytest.approx(felt.top + task.map_ground.shift, abs=1e-4)


def test_a_revealed_map_keeps_the_grid_and_fits_the_field(felt_go2):
    task, _ = felt_go2
    mg = task.terrain
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
    mg = task.terrain
    felt = task.felt
    felt.meet(np.array([0.478, 0.0, 0.01]), 0.0)
    mg.reveal(felt.grid(), felt.riser, felt.top)
    aim = np.array([felt.face - 0.04, 0.1])  # in the edge zone, nearer the flat ground behind
    ahead = mg.safe_foothold(aim, np.array([1.0, 0.0]))
    assert ahead is not None and ahead[0] > felt.face + 0.02
    assert float(mg.edge_map.height(*ahead)) <= mg.EDGE_TOLERANCE
    mg.shift_back = True  # the map mode's rule: the nearest flat point, here behind
    assert mg.safe_foothold(aim, np.array([1.0, 0.0]))[0] < felt.face - 0.02


def go1_felt(ground: str = "felt"):
    """The Go1's terrain config's ground options: a floor per foot, a foothold below the plane
    stands."""
    task = make_task("quadruped_flat", robots.info("go1"), ground=ground, goal=[2.0, 0.0],
                     foot_floors=True, ground_below=0.01)
    return task, task.planning_model(0.01)


def pitched(model, key: str, pitch: float) -> mujoco.MjData:
    """The home keyframe with the base pitched nose up by ``pitch`` (rad): the feet stand on a
    slope in the fit."""
    d = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, d, model.key(key).id)
    d.qpos[3:7] = (np.cos(-pitch / 2), 0.0, np.sin(-pitch / 2), 0.0)
    mujoco.mj_forward(model, d)
    return d


def test_before_a_riser_felt_plans_as_fit_does():
    """Until a foot meets a riser felt is the fitted plane: the same ground, the same
    residual, and its planning model (the map's floor plane posed on the plane, the field and
    the riser's box parked away) steps as fit's, to the bit."""
    (fit, m_fit), (felt, m_felt) = go1_felt("fit"), go1_felt()
    d_fit, d_felt = (pitched(m, fit.robot.home_key, 0.15) for m in (m_fit, m_felt))
    for t in (0.0, 0.02, 0.04):
        fit.update(t, d_fit.qpos, d_fit.qvel)
        felt.update(t, d_felt.qpos, d_felt.qvel)
    assert felt.map_ground is None
    assert (felt.ground.a0, felt.ground.a1, felt.ground.a2) == (
        fit.ground.a0, fit.ground.a1, fit.ground.a2)
    assert abs(fit.ground.a1) > 0.05  # a slope, not the level floor
    fit.pose_ground(m_fit)
    felt.pose_ground(m_felt)
    assert m_felt.body_pos[m_felt.body(FIELD_BODY).id, 2] < -5.0
    assert m_felt.body_pos[m_felt.body(RISER_BODY).id, 0] == RISER_PARKED
    for m, d in ((m_fit, d_fit), (m_felt, d_felt)):
        d.ctrl[:] = m.key_ctrl[m.key(fit.robot.home_key).id]
        d.qpos[2] -= 0.01  # the feet pressed into their floors
        for _ in range(20):
            mujoco.mj_step(m, d)
    assert d_fit.ncon > 0
    np.testing.assert_array_equal(d_felt.qpos, d_fit.qpos)
    np.testing.assert_array_equal(felt.residual(d_felt.sensordata, np.array(0.04)),
                                  fit.residual(d_fit.sensordata, np.array(0.04)))


def test_a_held_foot_brings_the_step_in_and_climbing_it_takes_it_out():
    """The riser's map is raised to the ground the held foot lifted off, and the feet, which
    had floors of their own, touch the map again. Standing on the top with every foot, the
    task is back on the fitted plane, the map parked for the next riser and the feet on their
    own floors."""
    task, m = go1_felt()
    d = pitched(m, task.robot.home_key, 0.0)
    task.update(0.0, d.qpos, d.qvel)
    fl = m.site("FL_foot").id
    # where the foot stood: its foothold of the first plan, which takes a foot radius
    lifted = float(d.site_xpos[fl, 2]) - max(task.foot_height, task.robot.foot_radius)
    meet_riser(task, m, 0.0)
    assert task.map_ground.shift == pytest.approx(lifted, abs=0.003)  # registered since
    feet = [g for g in range(m.ngeom) if m.geom_bodyid[g] == m.site_bodyid[fl]
            and m.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE]
    assert all(m.geom_conaffinity[g] & MAP_BIT for g in feet)
    task.pose_ground(m)
    assert m.body_pos[m.body(RISER_BODY).id, 0] == pytest.approx(
        task.felt.riser + FeltStep.RESOLUTION / 2)
    np.testing.assert_array_equal(m.body_quat[m.body(MAP_BODY).id], (1.0, 0.0, 0.0, 0.0))
    assert m.body_pos[m.body(FIELD_BODY).id, 2] > -1.0

    top = task.felt.top  # the whole robot on the top, beyond the riser
    d.qpos[0] = task.felt.face + 0.45
    d.qpos[2] += top
    mujoco.mj_forward(m, d)
    t = 1.0
    while task.map_ground is not None and t < 3.0:  # each foot stands in its turn
        task.update(t, d.qpos, d.qvel)
        t += 0.02
    assert task.map_ground is None and task.felt.face is None
    assert all(m.geom_conaffinity[g] == FOOT_BIT for g in feet)  # FL's own floor
    task.pose_ground(m)
    assert m.body_pos[m.body(FIELD_BODY).id, 2] < -5.0
    # the plane through the footholds on the top alone, not those below
    on_top = float(d.site_xpos[fl, 2]) - task.foot_height
    assert task.ground.height(*d.qpos[:2]) == pytest.approx(on_top, abs=0.002)


def test_a_riser_beyond_the_maps_extent_is_not_met():
    """The step's map covers :attr:`FeltStep.EXTENT` about the start: a riser met beyond it
    could not be written into it (a riser's box with no top behind it), so the task stays on
    the fitted plane there."""
    felt = FeltStep(R)
    x0, x1, w = felt.EXTENT
    assert felt.fits(np.array([0.5, 0.0])) and felt.fits(np.array([x1 - 1.1, w - 0.6]))
    assert not felt.fits(np.array([x1 - 0.9, 0.0])) and not felt.fits(np.array([1.0, w - 0.4]))
    assert not felt.fits(np.array([x0 + 0.4, 0.0]))
    task, m = go1_felt()
    d = pitched(m, task.robot.home_key, 0.0)
    d.qpos[0] = x1 - 0.8
    mujoco.mj_forward(m, d)
    task.update(0.0, d.qpos, d.qvel)
    hold_fl(task, m, x1 - 0.8)
    assert task.map_ground is None and task.felt.face is None
    hold_fl(task, m, 0.0)  # the same foot, held near the start: the riser is met
    assert task.map_ground is task.terrain


def test_a_foot_held_on_sloped_ground_meets_no_riser():
    """The step's map is level before the riser and on top: on a fitted plane steeper than
    :attr:`FeltStep.LEVEL` (a ramp) a held foot is not taken for a riser."""
    task, m = go1_felt()
    d = pitched(m, task.robot.home_key, 0.15)
    task.update(0.0, d.qpos, d.qvel)
    assert np.hypot(task.ground.a1, task.ground.a2) > FeltStep.LEVEL
    hold_fl(task, m, 0.0, pitch=0.15)
    assert task.map_ground is None and task.felt.face is None


def test_the_felt_map_is_compiled_before_the_walk_not_at_the_first_riser(monkeypatch):
    """Felt's map is first read at the first riser, mid-walk: compiling its kernels there took
    0.74 s within one plan on loopback (and 0.87 s in a lockstep run on an empty numba cache),
    and the Go2 was put in damping for an expired policy. The task compiles them when it binds
    its planning model, the signatures the riser's plans use."""
    warmed = []
    real = map_ground.MapGround.warm_up
    monkeypatch.setattr(map_ground.MapGround, "warm_up",
                        lambda self: (warmed.append(self), real(self)))
    task = make_task("quadruped_flat", robots.info("go2"), ground="felt", goal=[3.0, 0.0],
                     map_edge=0.06)
    m = task.planning_model(0.01)
    assert warmed == [task.terrain]
    compiled = {f: len(f.signatures) for f in (map_ground._highest_along, map_ground._max_nan)}
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, m.key(task.robot.home_key).id)
    task.update(0.0, d.qpos, d.qvel)
    meet_riser(task, m, 0.0)
    assert task.swing_plan is not None  # the riser's plan read the map
    assert {f: len(f.signatures) for f in compiled} == compiled
