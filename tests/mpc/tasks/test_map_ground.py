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
from mpc.app.assembly import build_planner, build_task
from mpc.app.config import load_config
from mpc.tasks import make_task
from mpc.tasks.map_ground import MAP_BIT, MAP_GEOM
from mpc.tasks.terrain_map import FLOOR_DROP, stairs

STAIRS = stairs(rise=0.12)


@pytest.fixture(scope="module")
def go2():
    task = make_task("quadruped_flat", robots.info("go2"), ground="map", goal=[3.0, 0.0])
    task.set_map(STAIRS)
    return task, task.planning_model(0.01)


def standing(task, model, x: float, y: float = 0.0) -> mujoco.MjData:
    """The home keyframe with the base at (x, y), raised by the map's height there."""
    d = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, d, model.key(task.robot.home_key).id)
    d.qpos[0:2] = x, y
    d.qpos[2] += float(STAIRS.height(x, y))
    mujoco.mj_forward(model, d)
    return d


def test_the_planning_model_stands_on_the_map_with_its_feet_alone(go2):
    task, m = go2
    g = m.geom(MAP_GEOM).id
    assert m.geom_type[g] == mujoco.mjtGeom.mjGEOM_HFIELD
    assert m.geom_pos[m.geom("floor").id, 2] == pytest.approx(-FLOOR_DROP)
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
        J = task.residual_jacobian(S, times)
        for k in range(len(s)):
            e = np.zeros(len(s))
            e[k] = 1e-6
            fd = (task.residual(S + e, times) - task.residual(S - e, times)) / 2e-6
            assert np.abs(J[..., k] - fd).max() < 1e-6, k


def test_swing_targets_clear_the_map_under_each_foot_and_the_base_follows_its_slope(go2):
    task, m = go2
    d = standing(task, m, 1.0)
    task.update(0.0, d.qpos, d.qvel)
    s = d.sensordata.copy()
    rows, rho = task.rows, task.foot_height
    time = np.asarray(0.1)
    step = task.swing_targets(time)
    r = task.residual(s, time)
    for i, foot in enumerate(task.robot.feet):
        f = s[task.sensor(f"{foot}_pos")]
        if step[i] > 0:  # in swing: over the clearance map under it
            clear = float(task.map_ground.clearance_map.height(f[0], f[1]))
            assert clear >= float(STAIRS.height(f[0], f[1])) - 1e-9
            assert r[rows["gait"]][i] == pytest.approx(f[2] - clear - rho - step[i])
        else:
            assert r[rows["gait"]][i] == 0.0
    p = s[task.sensor("base_pos")]
    body = float(task.map_ground.body_map.height(p[0], p[1]))
    assert r[rows["height"]][0] == pytest.approx(p[2] - body - rho - task.height)
    # on the flight the upright target leans into its slope (0.48 rise over run)
    assert task.ground.a1 == pytest.approx(0.48, abs=0.1)
    assert task.ground.height(p[0], p[1]) == pytest.approx(body)


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
    for x in positions:
        d = standing(task, m, x)
        d.qpos[2] += 0.01
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
        J = task.residual_jacobian(S, times)
        assert np.abs(J[1, task.rows["gait"].start + i]).max() > 0.0
        for k in range(len(s0)):
            e = np.zeros(len(s0))
            e[k] = 1e-6
            fd = (task.residual(S + e, times) - task.residual(S - e, times)) / 2e-6
            assert np.abs(J[..., k] - fd).max() < 1e-6, k
