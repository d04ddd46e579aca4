"""The terrain window (mpc.tasks.map_window): a fixed-size height field in the planning model,
re-sampled from received maps and moved with the robot between plans; the planning model's
field, its position, the task's targets and the analytic derivatives follow it."""

from __future__ import annotations

import logging

import mujoco
import numpy as np
import pytest

import derivatives
import robots
from mpc.tasks import make_task
from mpc.tasks.map_ground import MAP_GEOM, MapGround
from mpc.tasks.map_window import MapWindow, WindowSpec, resample
from mpc.tasks.terrain_map import HeightMap, load, stairs

STAIRS_FILE = "configs/maps/stairs_12cm.yaml"


def window_task(spec: WindowSpec, initial=None):
    task = make_task("quadruped_flat", robots.info("go2"), ground="map", goal=[3.0, 0.0])
    if initial is not None:
        task.set_map(initial)
    task.set_map_window(spec)
    return task, task.planning_model(0.01)


def base_at(model, x: float, y: float = 0.0, z: float | None = None) -> np.ndarray:
    qpos = model.key_qpos[0].copy()
    qpos[0:2] = x, y
    if z is not None:
        qpos[2] = z
    return qpos


def field_heights(model) -> np.ndarray:
    """The planning model's height field in metres, world heights (rows along y)."""
    f = model.hfield(MAP_GEOM).id
    rows, cols = model.hfield_nrow[f], model.hfield_ncol[f]
    adr = model.hfield_adr[f]
    data = model.hfield_data[adr:adr + rows * cols].reshape(rows, cols)
    body = model.body(MapWindow.BODY).id
    return data * model.hfield_size[f, 2] + model.body_pos[body, 2]


def test_resample_copies_an_aligned_grid_and_interpolates_bilinearly_between():
    rng = np.random.default_rng(1)
    source = HeightMap(rng.uniform(0.0, 0.3, (30, 40)), 0.05, (-0.55, 0.35))
    z, covered = resample(source, (-0.35, 0.5), 0.05, (10, 12))  # 4 columns, 3 rows in
    assert covered.all()
    assert np.array_equal(z, source.heights[3:13, 4:16])  # copied, not interpolated
    z, covered = resample(source, (-0.33, 0.51), 0.02, (11, 13))
    ys, xs = 0.51 + 0.02 * np.arange(11), -0.33 + 0.02 * np.arange(13)
    assert np.allclose(z, source.height(xs[None, :], ys[:, None]), atol=1e-12, rtol=0)
    z, covered = resample(source, (-1.0, 0.35), 0.05, (2, 20))  # starts 9 columns before it
    assert not covered[:, :9].any() and covered[:, 9:].all()
    assert np.isnan(z[:, :9]).all()


def test_a_window_over_the_whole_file_map_holds_the_file_maps_ground():
    file_task = make_task("quadruped_flat", robots.info("go2"), ground="map", map=STAIRS_FILE)
    m1 = file_task.planning_model(0.01)
    task, m2 = window_task(WindowSpec(6.6, 2.0, 0.05, ahead=2.3, recentre=100.0, z_low=0.0,
                                      z_high=0.6))
    assert task.follow_map(load(STAIRS_FILE), base_at(m2, 0.0))
    flight = load(STAIRS_FILE).heights
    assert np.allclose(field_heights(m2), flight, atol=1e-6)  # float32 in MuJoCo
    # the file's map given whole: the same field but for its lowest samples, sunk under the
    # floor plane that lies there (mpc.tasks.map_ground.MapGround.add_to)
    f1 = m1.hfield(MAP_GEOM).id
    d1 = mujoco.MjData(m1)
    mujoco.mj_forward(m1, d1)
    data = m1.hfield_data[m1.hfield_adr[f1]:m1.hfield_adr[f1] + flight.size]
    field1 = (data.reshape(flight.shape) * m1.hfield_size[f1, 2]
              + d1.geom_xpos[m1.geom(MAP_GEOM).id, 2])
    low = flight <= flight.min()
    assert np.allclose(field1[~low], flight[~low], atol=1e-6)
    assert np.allclose(field1[low], flight.min() - MapGround.SINK, atol=1e-6)
    assert d1.geom_xpos[m1.geom("floor").id, 2] == pytest.approx(flight.min())
    for name in ("map", "clearance_map", "body_map"):
        a, b = getattr(file_task.map_ground, name), getattr(task.map_ground, name)
        assert np.array_equal(a.heights, b.heights) and a.origin == b.origin, name


def test_a_received_map_is_despeckled_and_the_same_noisy_map_again_changes_nothing():
    """A mapper's map comes with its noise: the window holds it despeckled, as a map given
    whole (:meth:`mpc.tasks.terrain_map.HeightMap.despeckled`)."""
    spec = WindowSpec(6.6, 2.0, 0.05, ahead=2.3, recentre=100.0, z_low=-0.1, z_high=0.7)
    task, m = window_task(spec)
    noisy = load(STAIRS_FILE).perturbed(0.0, 0.01, seed=2)
    assert task.follow_map(noisy, base_at(m, 0.0))
    assert np.allclose(field_heights(m), noisy.despeckled().heights, atol=1e-6)
    assert not task.follow_map(load(STAIRS_FILE).perturbed(0.0, 0.01, seed=2), base_at(m, 0.0))


def test_the_window_moves_with_the_robot_and_the_model_touches_the_map_there():
    flight = stairs(rise=0.12)
    spec = WindowSpec(2.0, 1.0, 0.05, ahead=0.5, recentre=0.25, z_low=0.0, z_high=0.8)
    task, m = window_task(spec)
    body = m.body(MapWindow.BODY).id
    assert task.follow_map(flight, base_at(m, 0.0))
    assert m.body_pos[body, :2].tolist() == pytest.approx([0.5, 0.0], abs=1e-12)
    window = task.map_ground.window
    z, _ = resample(flight, window.origin, 0.05, window.shape)
    assert np.allclose(field_heights(m), z, atol=1e-6)  # float32 in MuJoCo
    assert not task.follow_map(None, base_at(m, 0.2))  # within recentre: stays
    assert not task.follow_map(stairs(rise=0.12), base_at(m, 0.2))  # the same map again
    assert task.follow_map(None, base_at(m, 1.6))  # up the flight: moves ahead of the base
    assert m.body_pos[body, :2].tolist() == pytest.approx([2.1, 0.0], abs=1e-12)
    assert window.origin == pytest.approx((1.1, -0.5), abs=1e-12)
    z, covered = resample(flight, window.origin, 0.05, window.shape)
    assert covered.all()
    assert np.allclose(field_heights(m), z, atol=1e-6)
    # the targets read the window where it is now
    assert task.map_ground.body_map.origin == window.origin
    assert task.map_ground.map.height(2.0, 0.0) == pytest.approx(flight.height(2.0, 0.0))
    # a sphere dropped on the fourth step (0.48 m) at x = 1.5 m touches the field there
    spec_ball = mujoco.MjSpec()
    spec_ball.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE,
                                 size=[10, 10, 0.1])
    window.add_to(spec_ball, MAP_GEOM)
    ball = spec_ball.worldbody.add_body(pos=[1.45, 0.0, 0.5])
    ball.add_freejoint()
    ball.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[0.03])
    mb = spec_ball.compile()
    window.bind(mb, MAP_GEOM)
    d = mujoco.MjData(mb)
    mujoco.mj_forward(mb, d)
    assert d.ncon >= 1
    assert min(d.contact.dist[:d.ncon]) == pytest.approx(0.5 - 0.03 - 0.48, abs=1e-6)


def test_outside_the_received_map_the_window_keeps_its_last_values_then_the_floor():
    spec = WindowSpec(1.0, 0.5, 0.05, ahead=0.0, recentre=0.1, z_low=-0.5, z_high=0.5, floor=-0.2)
    task, m = window_task(spec)
    patch = HeightMap(np.full((11, 11), 0.3), 0.05, (-0.25, -0.25))  # 0.5 m square at 0
    task.follow_map(patch, base_at(m, 0.0))
    window = task.map_ground.window
    xs = window.origin[0] + 0.05 * np.arange(window.shape[1])
    inside = (xs > -0.25 - 1e-9) & (xs < 0.25 + 1e-9)
    assert np.all(window.heights[:, inside] == 0.3)
    assert np.all(window.heights[:, ~inside] == -0.2)  # no map there: the floor
    task.follow_map(None, base_at(m, 0.4))  # the patch's right half stays in view
    xs = window.origin[0] + 0.05 * np.arange(window.shape[1])
    kept = (xs > -0.25 - 1e-9) & (xs < 0.25 + 1e-9)
    assert kept.any() and np.all(window.heights[:, kept] == 0.3)  # from the patch again
    # a new map covering part of the window: the rest keeps the last values, not the floor
    task.follow_map(HeightMap(np.full((11, 5), 0.1), 0.05, (0.6, -0.25)), base_at(m, 0.4))
    xs = window.origin[0] + 0.05 * np.arange(window.shape[1])
    new = (xs > 0.6 - 1e-9) & (xs < 0.8 + 1e-9)
    assert np.all(window.heights[:, new] == 0.1)
    assert np.all(window.heights[:, kept] == 0.3)
    # moving on: what the first map showed and the second does not cover stays in view
    assert task.follow_map(None, base_at(m, 0.55))
    xs = window.origin[0] + 0.05 * np.arange(window.shape[1])
    kept = (xs > -0.25 - 1e-9) & (xs < 0.25 + 1e-9)
    new = (xs > 0.6 - 1e-9) & (xs < 0.8 + 1e-9)
    assert kept.any() and np.all(window.heights[:, kept] == 0.3)
    assert np.all(window.heights[:, new] == 0.1)
    assert np.all(window.heights[:, ~(kept | new)] == -0.2)
    assert np.allclose(field_heights(m), window.heights, atol=1e-6)


def test_heights_beyond_the_windows_range_are_clipped_with_a_warning(caplog):
    task, m = window_task(WindowSpec(1.0, 1.0, 0.05, z_low=0.0, z_high=0.5))
    tall = HeightMap(np.full((40, 40), 0.7), 0.05, (-0.5, -0.75))
    with caplog.at_level(logging.WARNING):
        task.follow_map(tall, base_at(m, 0.0))
    assert np.all(task.map_ground.window.heights == 0.5)
    assert [r.getMessage() for r in caplog.records if "clipped" in r.getMessage()]


def test_the_analytic_derivatives_read_the_moved_window_without_rebuilding():
    """A provider built before the window moved linearizes the moved window's contacts as one
    built after it: it reads the model's height field and the window body's pose."""
    flight = stairs(rise=0.12)
    spec = WindowSpec(2.0, 1.0, 0.05, ahead=0.5, recentre=0.25, z_low=0.0, z_high=0.8)
    task, m = window_task(spec)
    task.follow_map(flight, base_at(m, 0.0))
    before = derivatives.make_provider("analytic", m)
    task.follow_map(None, base_at(m, 1.6))  # the second step (0.24 m) under the base
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, m.key(task.robot.home_key).id)
    d.qpos[0] = 1.0
    d.qpos[2] += 0.24 - 0.004  # the feet 4 mm into the step's tread
    mujoco.mj_forward(m, d)
    g = m.geom(MAP_GEOM).id
    assert sum(1 for i in range(d.ncon) if d.contact.geom[i, 0] == g) >= 4
    fd_start = derivatives.fd_evaluations()
    a_before = before.transition(d)
    after = derivatives.make_provider("analytic", m)
    a_after = after.transition(d)
    assert derivatives.fd_evaluations() == fd_start
    assert np.array_equal(a_before[0], a_after[0]) and np.array_equal(a_before[1], a_after[1])
    before.close()
    after.close()
