"""A legged task planning on a terrain map (``task.ground: map``, mpc.tasks.map_ground): the
planning model stands on the map with its feet alone, the swing targets clear the map under
each foot, the base height follows the smoothed map, the residual's Jacobian is exact, and
the shipped stairs configs plan on it without a finite difference."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

import derivatives
import robots
from common.hfield_contacts import CCD_ITERATIONS
from mpc.app.assembly import build_planner, build_task
from mpc.app.config import load_config
from mpc.app.schema import ConfigError
from mpc.tasks import make_task
from mpc.tasks.gait import swing_phase
from mpc.tasks.map_ground import MAP_BIT, MAP_BODY, MAP_GEOM, MapGround
from mpc.tasks.map_swing import DROP, RISE, path_points
from mpc.tasks.terrain_map import stairs

STAIRS = stairs(rise=0.12)


def stairs_go2():
    """A Go2 task on the stairs map and its planning model, before any plan."""
    task = make_task("quadruped_flat", robots.info("go2"), ground="map", goal=[3.0, 0.0])
    task.set_map(STAIRS)
    return task, task.planning_model(0.01)


@pytest.fixture(scope="module")
def go2():
    return stairs_go2()


def standing(task, model, x: float, y: float = 0.0) -> mujoco.MjData:
    """The home keyframe with the base at (x, y), raised by the map's height there."""
    d = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, d, model.key(task.robot.home_key).id)
    d.qpos[0:2] = x, y
    d.qpos[2] += float(STAIRS.height(x, y))
    mujoco.mj_forward(model, d)
    return d


def walking_on_stairs(**weights):
    """A Go2 walking on the stairs map (footholds off edges, travel 0.2 m/s) with these term
    weights, updated at t = 0.5 s standing 0.3 m ahead: the task and that state."""
    task = make_task("quadruped_flat", robots.info("go2"), ground="map", goal=[3.0, 0.0],
                     gait="walk", map_edge=0.06, travel_speed=0.2, weights=weights)
    task.set_map(STAIRS)
    d = standing(task, task.planning_model(0.01), 0.3)
    task.update(0.5, d.qpos, d.qvel)
    return task, d


def assert_exact_jacobian(task, S: np.ndarray, times: np.ndarray) -> np.ndarray:
    """The task's residual Jacobian at sensor values S (..., ns) and ``times``, checked column
    by column against centred differences (step 1e-6) to 1e-6; returned."""
    J = task.residual_jacobian(S, times)
    for k in range(S.shape[-1]):
        e = np.zeros(S.shape[-1])
        e[k] = 1e-6
        fd = (task.residual(S + e, times) - task.residual(S - e, times)) / 2e-6
        assert np.abs(J[..., k] - fd).max() < 1e-6, k
    return J


def test_the_planning_model_stands_on_the_map_with_its_feet_alone(go2):
    task, m = go2
    g = m.geom(MAP_GEOM).id
    assert m.geom_type[g] == mujoco.mjtGeom.mjGEOM_HFIELD
    floor = m.geom("floor").id
    assert m.body(int(m.geom_bodyid[floor])).name == MAP_BODY  # moved with the map
    assert m.geom_pos[floor, 2] == pytest.approx(float(STAIRS.heights.min()))
    touching = sorted(m.geom(i).name for i in range(m.ngeom) if m.geom_conaffinity[i] & MAP_BIT)
    assert touching == sorted(task.robot.feet)
    # the front legs through the first step (the feet 9 cm under it): only feet touch
    d = standing(task, m, 0.5)
    d.qpos[2] -= 0.01
    mujoco.mj_forward(m, d)
    assert min(d.site_xpos[m.site(f).id, 0] for f in ("FL_foot", "FR_foot")) > 0.62
    names = {m.geom(int(d.contact.geom[i, 1])).name for i in range(d.ncon)
             if d.contact.geom[i, 0] == g}
    assert names and names <= set(task.robot.feet)


def test_the_planning_model_runs_epa_to_convergence(go2):
    """With a height field the planning model's EPA runs up to CCD_ITERATIONS (a foot sunk
    into the field near a prism's corner stops unconverged at MuJoCo's 35, a contact the
    analytic derivatives cannot reproduce: tests/derivatives/analytic/
    test_hfield_cell_edges.py); a plane's keeps MuJoCo's default."""
    _, m = go2
    assert m.opt.ccd_iterations == CCD_ITERATIONS > mujoco.MjModel.from_xml_string(
        "<mujoco/>").opt.ccd_iterations
    level = make_task("quadruped_flat", robots.info("go2"), goal=[3.0, 0.0])
    assert level.planning_model(0.01).opt.ccd_iterations == 35


def test_a_humanoids_heel_and_toe_touch_the_map():
    """A foot touches the map with its contact spheres: the H1's heel and toe (neither holds
    the foot's site, which lies between them)."""
    task = make_task("humanoid_flat", robots.info("h1"), ground="map", goal=[3.0, 0.0])
    task.set_map(STAIRS)
    m = task.planning_model(0.01)
    touching = sorted(m.geom(i).name for i in range(m.ngeom) if m.geom_conaffinity[i] & MAP_BIT)
    assert touching == ["left_heel", "left_toe", "right_heel", "right_toe"]


def test_the_residual_jacobian_is_exact_on_the_map(go2):
    task, m = go2
    rng = np.random.default_rng(0)
    d = standing(task, m, 0.43, 0.013)
    task.update(0.0, d.qpos, d.qvel)
    s0 = d.sensordata.copy()
    for _ in range(5):
        s = s0 + 0.02 * rng.standard_normal(s0.shape)
        times = np.array([0.1, 0.27])  # a swing of each diagonal pair
        S = np.broadcast_to(s, (2, len(s))).copy()
        assert_exact_jacobian(task, S, times)


def test_the_tasks_rise_goes_into_its_swing_plan():
    for options, rise in (({}, RISE), ({"map_rise": 0.25}, 0.25)):
        task = make_task("quadruped_flat", robots.info("go2"), ground="map", goal=[3.0, 0.0],
                         **options)
        task.set_map(STAIRS)
        d = standing(task, task.planning_model(0.01), 0.3)
        task.update(0.0, d.qpos, d.qvel)
        assert task.swing_plan.rise == rise


def test_a_swing_is_lifted_over_the_highest_ground_of_its_path_wherever_the_foot_is():
    """Walking up to the first riser (0.6 m), a foot whose swing lands on the first tread is
    asked, in the middle of its swing, to be over the tread (0.12 m) plus its lift, at its
    lift-off position as anywhere else: the target depends on time alone (a target read under
    the foot stayed on the floor until the foot was at the riser). A task of its own: on the
    shared one the earlier tests' plans decide which swings this plan has."""
    task, m = stairs_go2()
    d = standing(task, m, 0.3)
    d.qvel[0] = 0.4
    task.update(0.0, d.qpos, d.qvel)
    plan, rho = task.swing_plan, task.foot_height
    crossing = [(i, k) for i in range(4) for k in range(plan.liftoff.shape[1])
                if plan.top[i, k] > plan.start[i, k] + 0.1 and plan.land_xy[i, k, 0] > 0.62]
    assert crossing
    i, k = crossing[0]
    assert plan.top[i, k] - task.map_ground.shift == pytest.approx(0.12, abs=0.005)
    middle = (max(plan.liftoff[i, k], 0.0) + plan.touchdown[i, k]) / 2
    time = np.asarray(middle)
    s = d.sensordata.copy()
    col = task.sensor(f"{task.robot.feet[i]}_pos")
    gait = task.rows["gait"].start + i
    step = task.swing_targets(time)[i]
    assert step > 0.0
    ground = task.swing_ground(time)[i]
    assert ground == pytest.approx(plan.top[i, k], abs=0.02)
    assert task.residual(s, time)[gait] == pytest.approx(s[col][2] - rho - step - ground)
    moved = s.copy()
    moved[col.start] += 0.05  # the foot elsewhere along its path: the same target
    assert task.residual(moved, time)[gait] == pytest.approx(task.residual(s, time)[gait])


def test_the_base_height_is_taken_from_the_feet_and_the_map_and_not_the_absolute_height(go2):
    """The height row is p_z − mean f_z − h − (H_b(p) − mean H_b(f)): on the flight the base
    keeps its height over the smoothed map relative to the feet, and a height estimate that
    drifted (base and feet raised alike) changes nothing; the upright target leans into the
    flight's slope."""
    task, m = go2
    d = standing(task, m, 1.0)
    task.update(0.0, d.qpos, d.qvel)
    s = d.sensordata.copy()
    row = task.rows["height"].start
    time = np.asarray(0.1)
    p = s[task.sensor("base_pos")]
    feet = [s[task.sensor(f"{f}_pos")] for f in task.robot.feet]
    body = task.map_ground.body_map
    expected = (p[2] - np.mean([f[2] for f in feet]) - task.height
                - (float(body.height(p[0], p[1]))
                   - np.mean([float(body.height(f[0], f[1])) for f in feet])))
    assert task.residual(s, time)[row] == pytest.approx(expected)
    drifted = s.copy()
    for name in ("base_pos", *(f"{f}_pos" for f in task.robot.feet)):
        drifted[task.sensor(name).start + 2] += 0.03
    assert task.residual(drifted, time)[row] == pytest.approx(task.residual(s, time)[row])
    # on the flight the upright target leans into its slope (0.48 rise over run)
    assert task.ground.a1 == pytest.approx(0.48, abs=0.1)


def test_the_map_is_registered_to_the_standing_feet_and_moved_in_the_model():
    """An estimate whose height drifted puts the standing feet above the map: the map is raised
    to meet them (a fraction REGISTER_GAIN of the mean offset per plan, feet on a riser's cell
    left out), and the planning model's map with it."""
    task = make_task("quadruped_flat", robots.info("go2"), ground="map", goal=[3.0, 0.0])
    task.set_map(STAIRS)
    m = task.planning_model(0.01)
    mg = task.map_ground
    feet = np.array([[0.2, 0.1, 0.02], [0.0, 0.1, 0.02], [0.2, -0.1, 0.02], [0.0, -0.1, 0.02]])
    for _ in range(40):
        mg.register(feet, np.ones(4, bool))
    assert mg.shift == pytest.approx(0.02, abs=1e-5)
    riser = np.array([[0.575, 0.0, 0.5]])  # on the first riser's cell: says nothing
    assert mg.register(riser, np.ones(1, bool)) == pytest.approx(mg.shift)
    raised = feet + np.array([0.0, 0.0, 0.5])  # feet that do not stand: say nothing
    assert mg.register(raised, np.zeros(4, bool)) == pytest.approx(0.02, abs=1e-5)
    d = mujoco.MjData(m)
    task.pose_ground(m)
    mujoco.mj_kinematics(m, d)
    lowest = float(STAIRS.heights.min())
    assert d.geom_xpos[m.geom("floor").id, 2] == pytest.approx(lowest + mg.shift)
    assert d.geom_xpos[m.geom(MAP_GEOM).id, 2] == pytest.approx(lowest - mg.SINK + mg.shift)
    assert task.map_ground.plane_under((0.2, 0.0)).a0 == pytest.approx(
        float(task.map_ground.body_map.height(0.2, 0.0)) + mg.shift, abs=0.01)


def test_a_foot_on_the_floor_touches_the_plane_alone_and_on_a_tread_the_field(go2):
    """Standing before the flight each foot has one contact, with the floor plane (the field's
    floor-level samples lie under it): on a height field it had one per prism it entered, some
    through the prisms' side walls. On a tread the feet stand on the field."""
    task, m = go2
    d = standing(task, m, 0.0)
    floor, field = m.geom("floor").id, m.geom(MAP_GEOM).id
    touched = [int(g) for g in d.contact.geom[:d.ncon].ravel() if g in (floor, field)]
    assert sorted(touched) == [floor] * 4
    d = standing(task, m, 1.2)  # all four feet on the third and fourth treads
    touched = {int(g) for g in d.contact.geom[:d.ncon].ravel() if g in (floor, field)}
    assert touched == {field}


def test_loaded_feet_on_the_floor_still_touch_the_plane_alone(go2):
    """The robot settled under its weight before the flight (1 s of the planning model's steps
    with the keyframe's controls): its feet sink about 13 mm into the floor plane (the foot
    radius less rho), and still touch only the plane: the field's floor-level samples lie
    deeper (MapGround.SINK; at 1 cm every foot met the field too, 2-6 more contacts each)."""
    task, m = go2
    d = standing(task, m, 0.0)
    d.ctrl[:] = m.key_ctrl[m.key(task.robot.home_key).id]
    for _ in range(round(1.0 / m.opt.timestep)):
        mujoco.mj_step(m, d)
    floor, field = m.geom("floor").id, m.geom(MAP_GEOM).id
    feet = [m.geom(g).id for g in ("FR_foot", "FL_foot", "RR_foot", "RL_foot")]
    deepest = min(d.contact.dist[i] for i in range(d.ncon))
    assert deepest < -0.01  # loaded: deeper than the old sink
    pairs = sorted((int(d.contact.geom[i, 0]), int(d.contact.geom[i, 1])) for i in range(d.ncon))
    assert pairs == sorted((floor, f) for f in feet)
    assert field not in d.contact.geom[:d.ncon].ravel()


def test_with_map_contacts_pruned_each_foot_has_one_contact_on_a_tread(go2):
    """``map_contacts: pruned``: the planning model prunes the feet's contacts with the field
    (common.hfield_contacts), standing on the top landing one per foot, where MuJoCo's own (the
    default, ``all``) are one per prism the foot enters."""
    task, m_all = go2
    pruned = make_task("quadruped_flat", robots.info("go2"), ground="map", goal=[3.0, 0.0],
                       map_contacts="pruned")
    pruned.set_map(STAIRS)
    m = pruned.planning_model(0.01)
    field = m.geom(MAP_GEOM).id
    counts = {}
    for name, model in (("pruned", m), ("all", m_all)):
        d = standing(task, model, 2.3, 0.013)  # the top landing, off the cells' borders
        feet = [int(d.contact.geom[i, 1]) for i in range(d.ncon) if d.contact.geom[i, 0] == field]
        counts[name] = (len(feet), len(set(feet)))
    assert counts["pruned"][0] == counts["pruned"][1] == 4
    assert counts["all"][0] > counts["pruned"][0] and counts["all"][1] == counts["pruned"][1]


def test_on_a_terrace_the_feet_stand_on_the_plane_alone(go2):
    """Where the map around the base is one level above the lowest (the landing on top of the
    flight) the floor plane is raised to it and the field lowered out of the way: each foot has
    one contact, with the plane, as with the world's ground; on a flat field a foot had one per
    prism it came near (the Go1, with the estimator, fell walking on a flat field at 0 in 2 of 2
    runs and walked on the plane). Near a riser, and on the lowest level, the field stays."""
    task, m = go2
    mg = task.map_ground
    assert mg.find_terrace((0.0, 0.0)) is None  # the lowest level: the plane is there
    assert mg.find_terrace((1.2, 0.0)) is None  # treads and risers within reach
    assert mg.find_terrace((2.2, 0.0)) == pytest.approx(0.6)  # the landing, 1.6-2.85 m
    floor, field = m.geom("floor").id, m.geom(MAP_GEOM).id
    try:
        task.pose_ground(m)
        d = standing(task, m, 2.2)
        d.qpos[2] += mg.shift  # registered by the tests before (the fixture is shared)
        mujoco.mj_forward(m, d)
        touched = [int(g) for g in d.contact.geom[:d.ncon].ravel() if g in (floor, field)]
        assert sorted(touched) == [floor] * 4
        assert d.geom_xpos[floor, 2] == pytest.approx(0.6 + mg.shift)
        field_top = d.geom_xpos[field, 2] + float(STAIRS.heights.max() - STAIRS.heights.min())
        assert field_top < 0.0
    finally:
        mg.find_terrace((0.0, 0.0))
        task.pose_ground(m)
    d = standing(task, m, 2.2)
    d.qpos[2] += mg.shift
    mujoco.mj_forward(m, d)
    touched = {int(g) for g in d.contact.geom[:d.ncon].ravel() if g in (floor, field)}
    assert touched == {field}  # off the terrace's plane: the field again


def test_each_plan_finds_the_terrace_under_the_base():
    """The task looks for the terrace once per plan (update), where the base is."""
    task = make_task("quadruped_flat", robots.info("go1"), ground="map", goal=[3.0, 0.0])
    task.set_map(STAIRS)
    m = task.planning_model(0.01)
    for x, level in ((0.0, None), (1.2, None), (2.2, 0.6)):
        d = standing(task, m, x)
        task.update(0.0, d.qpos, d.qvel)
        assert task.map_ground.terrace == (None if level is None else pytest.approx(level))
        task.pose_ground(m)
        mujoco.mj_kinematics(m, d)
        floor = d.geom_xpos[m.geom("floor").id, 2] - task.map_ground.shift
        assert floor == pytest.approx(0.0 if level is None else level)


def test_a_map_needs_ground_map_and_a_map_is_set_before_the_model():
    robot = robots.info("a1")
    with pytest.raises(ValueError, match="map is set but ground is 'level'"):
        make_task("quadruped_flat", robot, map="whatever.yaml")
    task = make_task("quadruped_flat", robot, ground="map")
    with pytest.raises(ValueError, match="ground: map needs a map"):
        task.planning_model(0.01)
    task.set_map(STAIRS)
    task.planning_model(0.01)
    with pytest.raises(ValueError, match="after the planning model"):
        task.set_map(STAIRS)
    with pytest.raises(ValueError, match="map: no such file"):
        make_task("quadruped_flat", robot, ground="map", map="/nonexistent/map.yaml")


@pytest.mark.parametrize("config, positions", [
    ("go2_hw_stairs", (0.2, 0.95, 1.9, 3.2, 4.3)),
    ("go1_hw_stairs", (0.2, 0.95, 1.9, 3.2)),
    ("a1_hw_stairs", (0.2, 0.95, 1.9, 3.2)),
])
def test_the_shipped_stairs_configs_plan_on_the_map_without_finite_differences(config,
                                                                              positions):
    """Planner iterations standing before, on, atop and down the flight: the analytic backend
    linearizes every knot (no fallback), the planning model being the map's."""
    cfg = load_config(config)
    assert cfg.derivatives["backend"] == "analytic"
    task = build_task(cfg)
    planner = build_planner(cfg, task)
    m = planner.model
    assert m.geom(MAP_GEOM).id >= 0
    before = derivatives.fd_evaluations()
    flight = task.map_ground.map  # the config's own (the A1's rises 8 cm, not 12)
    for x in positions:
        d = standing(task, m, x)
        d.qpos[2] += 0.01 + float(flight.height(x, 0.0) - STAIRS.height(x, 0.0))
        planner.reset(0.0, d.qpos, d.qvel, d.act)
        for _ in range(3):
            planner.iterate(0.0, d.qpos, d.qvel, d.act)
    assert derivatives.fd_evaluations() == before


@pytest.fixture(scope="module")
def go2_footholds():
    task = make_task("quadruped_flat", robots.info("go2"), ground="map", goal=[3.0, 0.0],
                     gait="walk", map_edge=0.06)
    task.set_map(STAIRS)
    return task, task.planning_model(0.01)


def test_a_foothold_on_or_near_a_riser_is_moved_to_the_nearest_flat_ground(go2_footholds):
    """safe_foothold: a point within reach of the first riser (0.575 m, between the samples
    at 0.55 and 0.6) moves along the travel to the nearest point where the edge map is flat,
    back onto the floor or on to the tread; a point on flat ground stays."""
    mg = go2_footholds[0].map_ground
    assert mg.safe_foothold([0.3, 0.0], [1.0, 0.0]) is None
    assert mg.safe_foothold([0.70, 0.1], [1.0, 0.0]) is None  # the tread's middle
    for aim in (0.56, 0.575, 0.59, 0.62):
        moved = mg.safe_foothold([aim, 0.1], [1.0, 0.0])
        assert moved is not None and moved[1] == pytest.approx(0.1)
        assert float(mg.edge_map.height(*moved)) <= mg.EDGE_TOLERANCE
        assert moved[0] < 0.55 or moved[0] > 0.6  # off the riser's cell
        assert abs(moved[0] - aim) <= 0.1
    back = mg.safe_foothold([0.56, 0.0], [1.0, 0.0])
    on = mg.safe_foothold([0.59, 0.0], [1.0, 0.0])
    assert back[0] < 0.55 < 0.6 < on[0]  # the nearer side


def test_a_foothold_short_of_a_drop_ahead_is_kept_that_far_from_it():
    """``drop`` (``task.map_drop``): a foothold within that reach of a drop ahead along the
    travel (the top of a flight down: the landing's nosing between its samples at 2.8 and
    2.85 m) is moved back off it, or on past it as an edge's; the same point walking the
    other way (up the flight: no drop ahead) is only kept off the edge; without ``drop`` a
    point 9 cm short of the nosing stays."""
    robot = robots.info("go2")
    plain = make_task("quadruped_flat", robot, ground="map", map_edge=0.06)
    drop = make_task("quadruped_flat", robot, ground="map", map_edge=0.06, map_drop=0.11)
    for task in (plain, drop):
        task.set_map(STAIRS)
    ahead, back = np.array([1.0, 0.0]), np.array([-1.0, 0.0])
    assert plain.map_ground.safe_foothold([2.71, 0.0], ahead) is None
    moved = drop.map_ground.safe_foothold([2.71, 0.0], ahead)
    assert moved is not None and moved[0] <= 2.8 - 0.11 + 1e-9
    assert drop.map_ground.safe_foothold([2.71, 0.0], back) is None  # walking back: no drop
    assert drop.map_ground.safe_foothold([2.5, 0.0], ahead) is None  # the landing's middle
    on = drop.map_ground.safe_foothold([2.82, 0.0], ahead)  # nearer the tread below
    assert on[0] > 2.85 and float(drop.map_ground.edge_map.height(*on)) <= 0.02
    with pytest.raises(ConfigError, match="map_drop"):
        load_config("go2_hw_stairs", ["task.map_drop=-0.1"])


def test_a_foothold_is_kept_back_from_a_foot_that_stands_ahead_of_it_when_it_lands():
    """``occupied``: going down (+x) a hind foot aimed just past the landing's nosing (2.87 m;
    the nosing between the samples at 2.8 and 2.85) is moved off the edge forward onto the
    tread below; with the front foot of its side standing there (2.95 m) it came down on that
    foot. With that foot given, it is moved back instead, FOOT_GAP short of it and off the
    edge (onto the landing); a flat aim that close is moved back too. A foot behind the aim,
    one beyond FOOT_GAP or beside it (the other side), and ground that moves footholds forward
    only (felt), leave it as it was."""
    robot = robots.info("go2")
    task = make_task("quadruped_flat", robot, ground="map", map_edge=0.06)
    task.set_map(STAIRS)
    mg, ahead = task.map_ground, np.array([1.0, 0.0])
    alone = mg.safe_foothold([2.87, 0.1], ahead)
    assert alone is not None and alone[0] > 2.85 and abs(alone[0] - 2.95) < mg.FOOT_GAP
    moved = mg.safe_foothold([2.87, 0.1], ahead, [[2.95, 0.1]])
    assert moved[0] <= 2.95 - mg.FOOT_GAP + 1e-9 and moved[1] == pytest.approx(0.1)
    assert float(mg.edge_map.height(*moved)) <= mg.EDGE_TOLERANCE  # the landing, off its edge
    assert moved[0] < 2.8
    flat = mg.safe_foothold([2.5, 0.1], ahead, [[2.55, 0.1]])
    assert 2.55 - mg.FOOT_GAP - 0.01 <= flat[0] <= 2.55 - mg.FOOT_GAP + 1e-9
    for other in ([2.80, 0.1], [3.3, 0.1], [2.95, 0.1 - 0.28]):
        assert np.array_equal(mg.safe_foothold([2.87, 0.1], ahead, [other]), alone)
    assert mg.safe_foothold([2.5, 0.1], ahead, [[2.45, 0.1]]) is None  # behind: past it
    felt = MapGround(STAIRS, edge=0.06, shift_back=False)
    assert np.array_equal(felt.safe_foothold([2.87, 0.1], ahead, [[2.95, 0.1]]),
                          felt.safe_foothold([2.87, 0.1], ahead))


def test_the_feet_standing_through_a_touchdown_are_the_ones_its_foothold_keeps_off(monkeypatch):
    """plan_footholds hands safe_foothold, for each foot's next touchdown, where the other feet
    stand if they stand until then (those lifting at its instant too). The walk (FL, RR, FR, RL
    lifting at phases 0, 0.25, 0.5, 0.75) at phase 0.3, the rear-right in its swing: its
    touchdown (0.5) meets the three others standing (the front-right lifting then); the
    front-right's (0.75) the front-left and the rear-left (lifting then); the rear-left's
    (1.0) the front-left alone; the front-left's (1.25) none (the others swing before)."""
    calls = []
    real = MapGround.safe_foothold

    def spy(self, xy, direction, occupied=None):
        if occupied is not None:
            calls.append(np.asarray(occupied))
        return real(self, xy, direction, occupied)

    monkeypatch.setattr(MapGround, "safe_foothold", spy)
    task = make_task("quadruped_flat", robots.info("go2"), ground="map", goal=[3.0, 0.0],
                     gait="walk", cadence=0.7, map_edge=0.06)
    task.set_map(STAIRS)
    m = task.planning_model(0.01)
    d = standing(task, m, 0.0)
    d.qvel[0] = 0.2
    t = 0.3 / task.timing[1]
    assert list(task.planned_stance(t)) == [True, True, True, False]
    task.update(t, d.qpos, d.qvel)
    feet = task.feet(d.qpos, d.qvel)[0][:, :2]
    fl, rl, fr = range(3)
    expected = [[], [fl], [fl, rl], [fl, rl, fr]]  # FL's, RL's, FR's, RR's touchdown
    assert len(calls) == 4
    for got, which in zip(calls, expected, strict=True):
        np.testing.assert_allclose(got.reshape(-1, 2), feet[which].reshape(-1, 2), atol=1e-9)


def walking_at(task, model, x: float, time: float) -> mujoco.MjData:
    d = standing(task, model, x)
    d.qvel[0] = 0.4
    task.update(time, d.qpos, d.qvel)
    return d


def test_a_moved_foothold_leads_the_foot_there_over_its_next_stance(go2_footholds):
    """With map_edge the task predicts each foot's next foothold once per plan; a foot whose
    foothold falls near a riser gets, over its next stance, the gait row d · (f − f*) toward
    the moved foothold f* (0 in its other stance knots); without map_edge no plan is made and
    the row is 0 in stance."""
    task, m = go2_footholds
    d = walking_at(task, m, 0.2, 0.5)
    plan = task.foothold_plan
    assert plan is not None and plan.moved.any()
    i = int(np.flatnonzero(plan.moved)[0])
    s = d.sensordata.copy()
    col = task.sensor(f"{task.robot.feet[i]}_pos").start
    inside = (plan.touchdown[i] + min(plan.liftoff[i], plan.touchdown[i] + 1.0)) / 2
    times = np.array([0.5, inside])
    step = task.swing_targets(times)
    assert step[1, i] == 0.0  # in stance there
    r = task.residual(np.broadcast_to(s, (2, len(s))), times)[:, task.rows["gait"]]
    expected = (s[col : col + 2] - plan.target[i]) @ plan.direction
    assert r[1, i] == pytest.approx(expected) and abs(expected) > 0.01
    if step[0, i] == 0.0:  # its current stance: free
        assert r[0, i] == 0.0
    plain = make_task("quadruped_flat", robots.info("go2"), ground="map", goal=[3.0, 0.0],
                      gait="walk")
    plain.set_map(STAIRS)
    pm = plain.planning_model(0.01)
    walking_at(plain, pm, 0.2, 0.5)
    assert plain.foothold_plan is None
    assert plain.residual(np.broadcast_to(s, (2, len(s))), times)[1, plain.rows["gait"]][i] \
        == 0.0


def test_the_foothold_rows_jacobian_is_exact(go2_footholds):
    task, m = go2_footholds
    rng = np.random.default_rng(1)
    d = walking_at(task, m, 0.2, 0.5)
    plan = task.foothold_plan
    s0 = d.sensordata.copy()
    i = int(np.flatnonzero(plan.moved)[0])
    times = np.array([0.5, plan.touchdown[i] + 0.05, 0.8])
    for _ in range(3):
        S = np.broadcast_to(s0 + 0.02 * rng.standard_normal(s0.shape), (3, len(s0))).copy()
        J = assert_exact_jacobian(task, S, times)
        assert np.abs(J[1, task.rows["gait"].start + i]).max() > 0.0


def test_a_swinging_foot_keeps_the_foothold_it_was_moved_to(go2_footholds):
    """A foothold moved off an edge is kept for the rest of the swing, whatever the base's
    velocity says later: decided afresh at every plan it flipped between short of the riser
    and onto the tread (the aim near the middle of the edge zone), and the foot, already over
    the riser, was sent back down in front of it."""
    task, m = go2_footholds
    found = None
    for x in np.arange(0.2, 0.6, 0.02):
        for t in np.arange(0.0, 1.4, 0.05):
            task._stance_xy = None  # a fresh walk: nothing committed
            d = walking_at(task, m, x, t)
            plan = task.foothold_plan
            swinging = task.swing_targets(np.asarray(t)) > 0
            for i in np.flatnonzero(plan.moved & swinging):
                kept = plan.target[i].copy()
                d.qvel[0] = 0.9
                task._stance_xy = None
                task.update(t + 0.01, d.qpos, d.qvel)
                fresh = task.foothold_plan
                if not fresh.moved[i] or np.allclose(fresh.target[i], kept):
                    continue
                found = (x, t, i, kept)
                break
            if found:
                break
        if found:
            break
    assert found is not None
    x, t, i, kept = found
    task._stance_xy = None
    d = walking_at(task, m, x, t)
    d.qvel[0] = 0.9
    task.update(t + 0.01, d.qpos, d.qvel)  # the same swing: the foothold stays
    assert task.foothold_plan.moved[i]
    assert task.foothold_plan.target[i] == pytest.approx(kept)
    task._stance_xy = None


def test_a_swing_is_lifted_over_what_it_passes_not_what_lies_beyond_its_ends():
    """highest_along: the map along the whole path and the clearance map away from its ends.
    A swing up from the first tread (0.12 m) to the second (0.24 m) landing 10 cm short of the
    third riser (1.1 m) tops out at the second tread, not over the third (0.36 m) that the
    clearance map reads at its foothold; one lifting off 3 cm in front of a riser and landing
    on its tread tops out at the tread; one passing over two risers at the highest."""
    mg = MapGround(STAIRS, clearance=0.1, edge=0.06)
    up = path_points(np.array([[0.7, 0.0], [1.0, 0.0]]), 0.0125)
    assert float(np.max(mg.clearance_map.height(up[:, 0], up[:, 1]))) > 0.27  # beyond it
    assert mg.highest_along(up) == pytest.approx(0.24, abs=0.01)
    onto = path_points(np.array([[0.57, 0.0], [0.72, 0.0]]), 0.0125)
    assert mg.highest_along(onto) == pytest.approx(0.12)
    over = path_points(np.array([[0.3, 0.0], [1.0, 0.0]]), 0.0125)
    assert mg.highest_along(over) == pytest.approx(0.24, abs=0.01)


def test_a_foothold_more_than_a_climb_above_the_lift_off_is_moved_back():
    """within_climb: aimed two treads up from the floor (the second tread, 1.0 m) a foothold
    moves back onto the first tread's flat part, at most CLIMB above the floor; aimed one
    tread up it stays; with no such point within reach, None."""
    mg = MapGround(STAIRS, clearance=0.1, edge=0.06)
    moved = mg.within_climb([1.0, 0.1], [1.0, 0.0], 0.0)
    assert moved is not None and moved[1] == pytest.approx(0.1)
    assert float(mg.map.height(*moved)) == pytest.approx(0.12)
    assert float(mg.edge_map.height(*moved)) <= mg.EDGE_TOLERANCE
    assert 0.6 < moved[0] < 0.85
    assert mg.within_climb([0.7, 0.0], [1.0, 0.0], 0.0) is None
    assert mg.within_climb([1.0, 0.0], [1.0, 0.0], 0.12) is None


def test_walking_up_the_flight_no_swing_climbs_two_treads_or_tops_out_over_a_third():
    """The Go2's walk driven up the flight at 0.3 m/s (the stairs config's map settings): a
    foot standing short of a riser was aimed two treads up (0.24 m in one swing, its apex over
    a third tread with the clearance map at its foothold: the plan lifted the whole robot, its
    standing feet too, to reach it). Every planned swing now climbs at most CLIMB, and on a
    flight going up its apex is the higher of its two grounds."""
    task = make_task("quadruped_flat", robots.info("go2"), ground="map", goal=[3.0, 0.0],
                     gait="walk", cadence=0.7, step_height=0.08, map_clearance=0.1,
                     map_edge=0.06)
    task.set_map(STAIRS)
    m = task.planning_model(0.01)
    swings = 0
    for t in np.arange(0.0, 2.5, 0.02):
        d = standing(task, m, 0.2 + 0.3 * t)
        d.qvel[0] = 0.3
        task.update(t, d.qpos, d.qvel)
        sp = task.swing_plan
        on = np.isfinite(sp.start)
        swings += int(on.sum())
        assert np.all(sp.land[on] - sp.start[on] <= 0.15 + 1e-9), t  # CLIMB
        assert np.all(sp.top[on] <= np.maximum(sp.start[on], sp.land[on]) + 0.01), t
    assert swings > 100


@pytest.fixture(scope="module")
def go2_held():
    task = make_task("quadruped_flat", robots.info("go2"), ground="map", goal=[3.0, 0.0],
                     gait="walk", map_edge=0.06, weights={"stance": 0.5, "hold": 1.0})
    task.set_map(STAIRS)
    return task, task.planning_model(0.01)


def test_a_foot_in_planned_stance_is_held_where_it_stands_then_where_it_lands(go2_held):
    """On a map the stance and hold rows hold a foot in its planned stance at its stance
    point: where it stands (xy, ρ over the map there) until its next planned touchdown, then
    its foothold (xy and ρ over h₁); 0 in its swing. Without them a foot in planned stance had
    no cost of its own and the planner stepped it onto the height field's riser cell."""
    task, m = go2_held
    d = walking_at(task, m, 0.3, 0.5)
    sp, rho = task.swing_plan, task.foot_height
    standing_now = sp.liftoff[:, 0] > 0.5
    i = int(np.argmin(np.where(standing_now, sp.touchdown[:, 0], np.inf)))  # lands first
    assert standing_now[i]
    before, after = 0.5, sp.touchdown[i, 0] + 0.03
    times = np.array([before, after])
    assert np.all(task.swing_targets(times)[:, i] == 0.0)  # in stance at both
    s = d.sensordata.copy()
    moved = s.copy()
    col = task.sensor(f"{task.robot.feet[i]}_pos")
    moved[col.start : col.start + 3] += (0.09, 0.02, 0.05)  # the foot stepped and lifted
    r = task.residual(np.broadcast_to(moved, (2, len(s))), times)
    stance, hold = r[:, task.rows["stance"]], r[:, task.rows["hold"]].reshape(2, -1, 2)
    f = moved[col.start : col.start + 3]
    stood = sp.stood_xy[i]
    assert hold[0, i] == pytest.approx(f[:2] - stood)
    assert stance[0, i] == pytest.approx(f[2] - rho - float(STAIRS.height(*stood))
                                         - task.map_ground.shift)
    assert hold[1, i] == pytest.approx(f[:2] - sp.land_xy[i, 0])
    assert stance[1, i] == pytest.approx(f[2] - rho - sp.land[i, 0])
    swinging = task.swing_targets(np.asarray(0.5)) > 0
    assert swinging.any()
    j = int(np.flatnonzero(swinging)[0])
    assert stance[0, j] == 0.0 and np.all(hold[0, j] == 0.0)


def test_stance_and_hold_are_map_terms_and_their_jacobian_is_exact(go2_held):
    task, m = go2_held
    rng = np.random.default_rng(2)
    d = walking_at(task, m, 0.35, 0.7)
    s0 = d.sensordata.copy()
    times = np.array([0.7, 0.8, 0.95, 1.1])
    S = np.broadcast_to(s0 + 0.02 * rng.standard_normal(s0.shape), (4, len(s0))).copy()
    J = assert_exact_jacobian(task, S, times)
    assert np.abs(J[:, task.rows["hold"]]).max() > 0 and np.abs(J[:, task.rows["stance"]]).max() > 0
    level = make_task("quadruped_flat", robots.info("go2"), gait="walk")
    assert "stance" not in level.rows and "hold" not in level.rows


def test_footholds_are_moved_along_the_heading_not_a_sideways_velocity(go2_footholds):
    """Slowing at a riser, the base's velocity pointed 40-70° off its heading (the true state)
    and footholds moved along it went sideways, one 37 cm onto a tread's corner: the travel
    they move along is the heading, turned back when the base walks backwards."""
    task, m = go2_footholds
    task._stance_xy = None
    d = standing(task, m, 0.3)
    d.qvel[0:2] = 0.1, -0.15
    task.update(0.5, d.qpos, d.qvel)
    plan = task.foothold_plan
    assert plan.direction == pytest.approx([1.0, 0.0])
    moved = np.flatnonzero(plan.moved)
    assert len(moved)
    d.qvel[0:2] = -0.1, 0.15
    task._stance_xy = None
    task.update(0.5, d.qpos, d.qvel)
    assert task.foothold_plan.direction == pytest.approx([-1.0, 0.0])
    task._stance_xy = None


def test_the_time_terms_are_computed_once_per_plan_and_are_the_same_values(go2_held):
    """The residual's terms of time alone (LeggedTask._time_terms) for rollouts sharing their
    knots' times: computed for one row, broadcast, the residual equal to the bit to the one of
    each row alone and to the one of times whose rows differ (no cache); a new plan (update)
    computes them anew."""
    task, m = go2_held
    rng = np.random.default_rng(5)
    d = walking_at(task, m, 0.35, 0.7)
    times = 0.7 + 0.01 * np.arange(36)
    batch = np.broadcast_to(times, (3, 36))
    S = d.sensordata + 0.02 * rng.standard_normal((3, 36, len(d.sensordata)))
    r = task.residual(S, batch)
    first = task._time_cache
    assert first is not None and first[1]["step"].shape == (36, 4)
    for i in range(3):
        assert np.array_equal(r[i], task.residual(S[i], times))
    assert task._time_cache is first  # the same plan: not computed again
    uncached = np.stack([times, times, times + 0.0])  # equal rows: one computation
    assert np.array_equal(task.residual(S, uncached), r)
    shifted = batch.copy()
    shifted[1] += 0.01  # rows that differ: computed for the whole array
    r2 = task.residual(S, shifted)
    assert task._time_cache is first
    assert np.array_equal(r2[1], task.residual(S[1], times + 0.01))
    with pytest.raises(ValueError):
        first[1]["step"][0, 0] = 1.0  # shared by the plan's calls: read-only
    walking_at(task, m, 0.4, 0.8)  # the next plan
    task.residual(S, batch)
    assert task._time_cache is not first


def test_with_a_travel_speed_footholds_are_aimed_with_the_travel_not_the_measured_velocity():
    """``travel_speed``: the Raibert aim reads the travel reference's velocity, so a sideways
    or stalled measured velocity (the estimate's: −0.28 m/s along y put a foothold 36 cm
    ahead) moves no foothold, and a base slowed at a riser still steps a stride ahead."""
    task = make_task("quadruped_flat", robots.info("go2"), ground="map", goal=[3.0, 0.0],
                     gait="walk", map_edge=0.06, travel_speed=0.2)
    task.set_map(STAIRS)
    m = task.planning_model(0.01)
    landed = []
    for v in ((0.0, 0.0), (0.05, -0.3)):
        task._stance_xy = task._travel_from = None
        d = standing(task, m, 0.0)
        d.qvel[0:2] = v
        task.update(0.5, d.qpos, d.qvel)
        landed.append(task.swing_plan.land_xy.copy())
    np.testing.assert_array_equal(landed[0], landed[1])
    lands = landed[0][:, 0]
    ok = np.isfinite(lands[:, 0])
    assert ok.any()
    home = task._home_feet[:, 0]
    assert np.all(lands[ok, 0] > home[ok] + 0.05)  # a stride ahead of where they stand
    assert np.allclose(lands[ok, 1], task._home_feet[ok, 1], atol=1e-9)  # and not sideways


def test_a_foot_stepping_down_lands_under_its_hip_and_a_level_one_a_lead_ahead():
    """Down a step (the map under the hip at touchdown more than DROP below the ground the
    foot lifts off) the foothold is the hip's place at touchdown, without Raibert's lead of
    half the stance's travel: a Go2 front foot landing ahead of its hip past a nosing had its
    calf on the nosing, and the robot fell. Here the base walks at 0.4 m/s on the landing, the
    front feet 16 cm short of the flight down: FR's next swing touches down with its hip past
    the nosing and lands under it; the hind feet's stay on the landing and keep the lead (as
    FL's does, whose swing ends with its hip still over the landing)."""
    task = make_task("quadruped_flat", robots.info("go2"), ground="map", goal=[5.0, 0.0],
                     gait="walk")
    task.set_map(STAIRS)
    m = task.planning_model(0.01)
    d = standing(task, m, 2.5)
    d.qvel[0] = 0.4
    task.update(0.0, d.qpos, d.qvel)
    plan = task.swing_plan
    hip = d.qpos[0] + task._home_feet[:, 0] + 0.4 * plan.touchdown[:, 0]
    ahead = plan.land_xy[:, 0, 0] - hip
    lifts_off = plan.start[:, 0] - task.map_ground.shift  # the map's frame, as the hips'
    down = STAIRS.height(hip, task._home_feet[:, 1]) < lifts_off - DROP
    fr = task.robot.feet.index("FR_foot")
    hind = task._home_feet[:, 0] < 0.0
    assert down[fr] and not down[hind].any()
    np.testing.assert_allclose(ahead[down], 0.0, atol=1e-9)
    assert np.all(ahead[~down] > 0.05)


def test_a_swinging_foot_past_its_foothold_has_an_overshoot_row_with_an_exact_jacobian():
    """overshoot: max(0, d · (f − b) − m) for a swinging foot, b its swing's foothold; 0 in
    stance and for a foot short of its foothold."""
    task, d = walking_on_stairs(overshoot=1.0)
    sp = task.swing_plan
    times = np.linspace(0.5, 1.3, 9)
    b = sp.landing(times)
    swing = task.swing_targets(times) > 0
    k, i = map(int, np.argwhere(swing & np.isfinite(b[..., 0]))[0])
    s = np.broadcast_to(d.sensordata, (len(times), len(d.sensordata))).copy()
    col = task.sensor(f"{task.robot.feet[i]}_pos").start
    s[:, col] = b[k, i, 0] + 0.1  # 10 cm past its foothold
    s[:, col + 1] = b[k, i, 1]
    r = task.residual(s, times)[:, task.rows["overshoot"]]
    assert r[k, i] == pytest.approx(0.1 - task.OVERSHOOT_MARGIN)
    assert np.all(r[~swing] == 0.0)
    s[:, col] = b[k, i, 0] - 0.1  # short of it
    assert task.residual(s, times)[k, task.rows["overshoot"]][i] == 0.0
    rng = np.random.default_rng(3)
    S = s + 0.05 * rng.standard_normal(s.shape)
    S[:, col] = b[k, i, 0] + 0.1
    J = assert_exact_jacobian(task, S, times)
    assert np.abs(J[:, task.rows["overshoot"]]).max() > 0


def test_the_overshoot_term_is_declared_only_where_a_config_weighs_it():
    """Unweighted, a map task's residual keeps the rows it had before the term."""
    kw = dict(ground="map", goal=[3.0, 0.0], gait="walk", map_edge=0.06)
    plain = make_task("quadruped_flat", robots.info("go2"), **kw)
    assert "overshoot" not in plain.rows
    weighed = make_task("quadruped_flat", robots.info("go2"), weights={"overshoot": 0.0}, **kw)
    assert "overshoot" in weighed.rows
    assert weighed.nresidual == plain.nresidual + len(plain.robot.feet)


def test_the_support_rows_keep_the_centre_of_mass_over_the_feet_in_planned_stance():
    """support: the centre of mass kept SUPPORT_MARGIN inside the polygon of the feet in their
    planned stance where they stand (mpc.tasks.support); 0 inside it, and an exact Jacobian
    in the centre of mass where it is outside."""
    task, d = walking_on_stairs(support=10.0)
    times = np.linspace(0.5, 1.3, 17)
    stance = task.swing_targets(times) <= 0.0
    anchor = task.swing_plan.anchor(times)[0]
    s = np.broadcast_to(d.sensordata, (len(times), len(d.sensordata))).copy()
    com = task.sensor("com_pos").start
    # the centre of mass at the middle of the feet standing at each knot: inside
    inside = np.array([anchor[k, stance[k]].mean(axis=0) for k in range(len(times))])
    s[:, com : com + 2] = inside
    assert np.all(task.residual(s, times)[:, task.rows["support"]] == 0.0)
    # 0.3 m behind the hind feet: outside at every knot, pushed forward
    s[:, com] = anchor[..., 0].min() - 0.3
    r = task.residual(s, times)[:, task.rows["support"]]
    assert np.all(r[:, 0] > 0.15)
    rng = np.random.default_rng(4)
    S = s + 0.02 * rng.standard_normal(s.shape)
    J = assert_exact_jacobian(task, S, times)
    assert np.abs(J[:, task.rows["support"], com]).max() > 0


def test_the_support_term_is_declared_only_where_a_config_weighs_it():
    kw = dict(ground="map", goal=[3.0, 0.0], gait="walk", map_edge=0.06)
    plain = make_task("quadruped_flat", robots.info("go2"), **kw)
    assert "support" not in plain.rows
    weighed = make_task("quadruped_flat", robots.info("go2"), weights={"support": 0.0}, **kw)
    assert weighed.nresidual == plain.nresidual + 2


def test_a_swinging_foot_has_a_path_row_toward_its_swing_path_with_an_exact_jacobian():
    """path: f_xy − (a + (b − a) P(s)) for a swinging foot, a its lift-off point and b its
    foothold; 0 in stance; the Jacobian the foot's xy where in swing (centred differences)."""
    task, d = walking_on_stairs(path=1.0)
    times = np.linspace(0.5, 1.8, 27)
    target = task._swing_path(times)
    swing = task.swing_targets(times) > 0
    on = np.isfinite(target[..., 0])
    assert on.any() and np.all(swing[on]) and not np.all(on[swing] == False)  # noqa: E712
    rows = task.rows["path"]
    s = np.broadcast_to(d.sensordata, (len(times), len(d.sensordata))).copy()
    r = task.residual(s, times)[:, rows].reshape(len(times), -1, 2)
    for i, foot in enumerate(task.robot.feet):
        c = task.sensor(f"{foot}_pos")
        expect = np.where(on[:, i, None], s[:, c.start:c.start + 2] - np.nan_to_num(target[:, i]),
                          0.0)
        np.testing.assert_allclose(r[:, i], expect, atol=1e-12)
    assert np.all(r[~on] == 0.0)
    rng = np.random.default_rng(4)
    S = s + 0.05 * rng.standard_normal(s.shape)
    J = assert_exact_jacobian(task, S, times)
    assert np.abs(J[:, rows]).max() > 0


def test_the_path_term_is_declared_only_where_a_config_weighs_it():
    """Unweighted, a map task's residual keeps the rows it had before the term."""
    kw = dict(ground="map", goal=[3.0, 0.0], gait="walk", map_edge=0.06)
    plain = make_task("quadruped_flat", robots.info("go2"), **kw)
    assert "path" not in plain.rows
    weighed = make_task("quadruped_flat", robots.info("go2"), weights={"path": 0.0}, **kw)
    assert weighed.rows["path"].stop - weighed.rows["path"].start == 2 * len(plain.robot.feet)
    assert weighed.nresidual == plain.nresidual + 2 * len(plain.robot.feet)


def test_the_travel_holds_while_a_front_foot_has_a_step_down_pending(monkeypatch):
    """``travel_hold``: at the top of the flight down (from x = 2.85 m) with a front foot still
    on the landing and its hip over the first tread down, the travel target stands still and
    the footholds are aimed with no travel velocity; with the foot under its hip it walks on.
    Off by default."""
    def run(lag, hold):
        task = make_task("quadruped_flat", robots.info("go2"), ground="map", goal=[4.6, 0.0],
                         gait="walk", map_edge=0.06, travel_speed=0.2, travel_hold=hold)
        task.set_map(STAIRS)
        m = task.planning_model(0.01)
        d = standing(task, m, 2.75)
        feet = task.feet(d.qpos, d.qvel)[0]
        front = task._home_feet[:, 0] > 0
        feet[front, 0] = 2.75 + task._home_feet[front, 0] - lag
        monkeypatch.setattr(task, "feet", lambda q, v: (feet.copy(), np.zeros(4)))
        task.update(0.5, d.qpos, d.qvel)
        task.update(0.6, d.qpos, d.qvel)
        return task
    held = run(0.12, 0.08)
    assert held.travel_held
    assert held.travel_velocity() == pytest.approx([0.0, 0.0])
    assert held.travel_target(1.0) == pytest.approx(held.travel_target(0.6))
    assert not run(0.0, 0.08).travel_held
    walking = run(0.12, 0.0)
    assert not walking.travel_held
    assert walking.travel_target(1.0)[0] > walking.travel_target(0.6)[0] + 0.05

def _highest_along_numpy(mg: MapGround, path: np.ndarray) -> float:
    """MapGround.highest_along as numpy computed it before it was compiled."""
    top = float(np.max(mg.map.height(path[:, 0], path[:, 1])))
    inner = ((np.linalg.norm(path - path[0], axis=1) > mg.clearance)
             & (np.linalg.norm(path - path[-1], axis=1) > mg.clearance))
    if inner.any():
        p = path[inner]
        top = max(top, float(np.max(mg.clearance_map.height(p[:, 0], p[:, 1]))))
    return top


def test_the_compiled_highest_along_is_numpys_to_the_bit(rng):
    """highest_along, compiled, gives numpy's value to the bit on random swings over the
    stairs (on the flight, off the map's border, short and long, one point, a NaN point)."""
    mg = MapGround(STAIRS, clearance=0.1, edge=0.06)
    paths = [np.array([[0.7, 0.0]]), np.array([[0.5, 0.0], [0.5, 0.0]]),
             np.array([[0.3, 0.1], [np.nan, 0.0], [1.0, 0.0]])]
    for _ in range(300):
        a = rng.uniform([-0.5, -1.0], [3.5, 1.0])
        b = a + rng.normal(0.0, 0.3, 2)
        paths.append(path_points(np.array([a, (a + b) / 2 + rng.normal(0.0, 0.05, 2), b]),
                                 rng.uniform(0.005, 0.05)))
    for path in paths:
        got, want = mg.highest_along(path), _highest_along_numpy(mg, path)
        assert got == want or (np.isnan(got) and np.isnan(want)), path


def test_with_height_swing_ground_a_swinging_foot_counts_on_its_ground_not_its_lift():
    """``height_swing: ground``: the height row counts a swinging support foot that follows
    its gait target (ρ + B(s) + step(t)) as standing on the ground of its swing (ρ plus
    :meth:`SwingPlan.counted`), so a foot lifted up a tread does not lift the base's target
    with it; by default it counts where it is. The Jacobian stays exact (the difference is
    the time's)."""
    default, d = walking_on_stairs()
    task, _ = walking_on_stairs()
    task.height_swing = "ground"
    times = np.linspace(0.5, 1.8, 27)
    step = task.swing_targets(times)
    swing = step > 0
    assert swing.any()
    phase = swing_phase(task.clock.phase(times), np.array(task.gait.offsets), task.timing[0])
    gait_z = task.foot_height + task.swing_ground(times) + step
    ground_z = task.foot_height + task.swing_plan.counted(times, phase)
    at_target = np.broadcast_to(d.sensordata, (len(times), len(d.sensordata))).copy()
    on_ground = at_target.copy()
    for i, foot in enumerate(task.robot.feet):
        z = task.sensor(f"{foot}_pos").start + 2
        at_target[:, z] = np.where(swing[:, i], gait_z[:, i], at_target[:, z])
        on_ground[:, z] = np.where(swing[:, i], ground_z[:, i], on_ground[:, z])
    gait = task.residual(at_target, times)[:, task.rows["gait"]]
    assert np.abs(gait[swing]).max() < 1e-12  # the swinging feet are on their targets
    row = task.rows["height"]
    np.testing.assert_allclose(task.residual(at_target, times)[:, row],
                               default.residual(on_ground, times)[:, row], atol=1e-12)
    lifted = default.residual(at_target, times)[:, row] - default.residual(on_ground, times)[:, row]
    assert lifted.min() < -0.01  # counted where it is, the lift raises the target
    rng = np.random.default_rng(5)
    assert_exact_jacobian(task, at_target + 0.05 * rng.standard_normal(at_target.shape), times)
    with pytest.raises(ValueError, match="height_swing"):
        make_task("quadruped_flat", robots.info("go2"), height_swing="lift")
