"""Terrain built into the simulated world (mpc.app.plants.terrain): the ground where the
specification says, loose slabs, bumps, a softer floor, a start on a slope, and one line naming the
key for bad input, from the library and from ``mpc-run``."""

from __future__ import annotations

import math
from pathlib import Path

import mujoco
import numpy as np
import pytest

import robots
from mpc.app import cli
from mpc.app.plants import terrain as terrain_mod
from mpc.app.plants.sim_plant import SimPlant

BALL = 0.03


def probe_world(terrain) -> tuple[mujoco.MjModel, mujoco.MjData, terrain_mod.Terrain, list[int]]:
    """A floor, the terrain and a free ball (radius BALL); the ids of the ground's geoms."""
    spec = mujoco.MjSpec()
    spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1])
    built = terrain_mod.build(spec, terrain)
    ball = spec.worldbody.add_body(name="ball")
    ball.add_freejoint()
    ball.add_geom(name="ball", type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[BALL, 0, 0])
    m = spec.compile()
    ground = [g for g in range(m.ngeom) if m.geom_bodyid[g] == 0]
    return m, mujoco.MjData(m), built, ground


def ground_distance(m, d, ground, x: float, z: float) -> float:
    """Distance from the ball centred at (x, 0, z) to the nearest ground geom."""
    d.qpos[0:3] = [x, 0.0, z]
    d.qpos[3:7] = [1, 0, 0, 0]
    mujoco.mj_forward(m, d)
    ball = m.geom("ball").id
    return min(mujoco.mj_geomDistance(m, d, ball, g, 1.0, None) for g in ground)


@pytest.mark.parametrize("name, expected", [
    # x, height of the ground there
    ("ramp_up_10", [(-1.0, 0.0), (0.4, 0.0), (1.0, 0.5 * math.tan(math.radians(10))),
                    (1.9, 1.4 * math.tan(math.radians(10))),
                    (3.0, 1.5 * math.tan(math.radians(10)))]),
    ("ramp_down_15", [(0.2, 0.0), (1.25, -0.75 * math.tan(math.radians(15))),
                      (4.0, -1.5 * math.tan(math.radians(15)))]),
    ("step_up_8cm", [(0.3, 0.0), (0.7, 0.08), (5.0, 0.08)]),
    ("step_down_8cm", [(0.3, 0.0), (0.7, -0.08), (5.0, -0.08)]),
    ("ramp_up_down_10", [(1.0, 0.5 * math.tan(math.radians(10))),
                         (2.0, math.tan(math.radians(10))),
                         (3.0, 0.5 * math.tan(math.radians(10))), (4.0, 0.0)]),
])
def test_a_ball_rests_on_the_ground_where_the_terrain_says(name, expected):
    m, d, built, ground = probe_world(name)
    for x, z in expected:
        assert built.ground_height(x) == pytest.approx(z, abs=1e-9)
        slope = built.profile.piece_at(x).slope
        touching = z + BALL * math.sqrt(1 + slope**2)  # the centre along the normal
        assert ground_distance(m, d, ground, x, touching) == pytest.approx(0.0, abs=1e-6), x
        assert ground_distance(m, d, ground, x, touching + 0.01) > 0.009, x


def test_a_dropped_box_settles_on_the_plateau_and_on_the_step():
    spec = mujoco.MjSpec()
    spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1])
    terrain_mod.build(spec, [{"kind": "ramp", "start": 0.5, "length": 1.0, "slope": 10},
                   {"kind": "step", "direction": "down", "height": 0.05, "start": 3.0}])
    for name, x in (("top", 2.5), ("below", 3.5)):
        box = spec.worldbody.add_body(name=name, pos=[x, 0, 0.5])
        box.add_freejoint()
        box.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.05, 0.05, 0.02])
    m = spec.compile()
    d = mujoco.MjData(m)
    mujoco.mj_step(m, d, 1000)
    top = math.tan(math.radians(10))
    assert d.body("top").xpos[2] == pytest.approx(top + 0.02, abs=2e-3)
    assert d.body("below").xpos[2] == pytest.approx(top - 0.05 + 0.02, abs=2e-3)


def test_combined_ramps_past_45_degrees_are_refused():
    with pytest.raises(terrain_mod.TerrainError, match=r"49\.1 deg"):
        terrain_mod.parse([{"kind": "ramp", "slope": 30, "start": 0.5, "length": 2},
                 {"kind": "ramp", "slope": 30, "start": 1.0, "length": 1}])


@pytest.mark.parametrize("value, message", [
    ({"kind": "ramp", "slope": 46}, "'terrain.slope' must be > 0.0 and <= 45.0, got 46"),
    ({"kind": "ramp", "length": -1}, "'terrain.length' must be > 0.0"),
    ({"kind": "step", "height": -0.05}, "'terrain.height' must be > 0.0"),
    ({"kind": "cliff"}, "'terrain.kind' must be one of flat, ramp"),
    ("cliff", "'terrain': unknown terrain 'cliff'"),
    ({"kind": "ramp", "slop": 10}, "unknown key 'terrain.slop' (did you mean 'slope'?)"),
    ({"kind": "heightfield", "file": "/nonexistent/h.npy"},
     "'terrain.file': no such file: /nonexistent/h.npy"),
    ({"kind": "slabs", "min_height": 0.1, "max_height": 0.05}, "'terrain.min_height' must be"),
    ([{"kind": "flat"}, 5], "'terrain[1]' must be a mapping with a kind"),
    ([{"kind": "ramp"}, {"kind": "rough", "start": 0.0}],
     "'terrain[1]': a rough region needs flat ground"),
    ({"kind": "soft", "solimp": [0.9, 0.5, 0.01, 0.5, 2]}, "'terrain.solimp' must be"),
    ({"kind": "map", "file": "configs/maps/stairs_12cm.yaml", "shape": "boxy"},
     "'terrain.shape' must be one of auto, field, got 'boxy'"),
])
def test_bad_terrain_gets_one_line_naming_the_key(value, message):
    with pytest.raises(terrain_mod.TerrainError) as e:
        terrain_mod.parse(value)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("terrain, key", [
    ("{kind: ramp, slope: 50}", "'terrain.slope' must be"),
    ("{kind: step, height: -1}", "'terrain.height' must be"),
    ("{kind: slabs, max_size: -0.2}", "'terrain.max_size' must be"),
    ("{kind: heightfield, file: missing.npy, size: [-1, 1]}", "'terrain.size[0]' must be"),
    ("{kind: heightfield, file: missing.npy}", "'terrain.file': no such file"),
    ("{kind: ramp, sloep: 5}", "unknown key 'terrain.sloep'"),
])
def test_mpc_run_exits_2_with_one_line_for_bad_terrain(terrain, key, capsys, tmp_path):
    for plant in ("sim", "sim_estimated"):
        code = cli.main(["a1_trot", "--mode", "lockstep", "--duration", "0.01", "--out",
                         str(tmp_path), "--set", f"plant.type={plant}", "--set",
                         f"plant.terrain={terrain}"])
        err = capsys.readouterr().err.strip()
        assert code == 2
        assert key in err and "plant:" in err and len(err.splitlines()) == 1, err


def test_every_shipped_terrain_builds_into_every_robot():
    for name in terrain_mod.SHIPPED:
        spec = mujoco.MjSpec.from_file(str(robots.model_path("go1")))
        terrain_mod.build(spec, name, list(robots.info("go1").feet))
        spec.compile()


def feet_above_ground(plant: SimPlant) -> np.ndarray:
    """Each foot site's distance from the ground along the ground's normal."""
    d = plant.data
    out = []
    for f in plant.robot.feet:
        x, y, z = d.site(f).xpos
        slope = plant.terrain.profile.piece_at(x).slope
        out.append((z - plant.terrain.ground_height(x, y)) / math.sqrt(1 + slope**2))
    return np.array(out)


def stand(plant: SimPlant, seconds: float = 0.6) -> None:
    ctrl = plant.model.key_ctrl[plant.model.key("home").id].copy()
    for _ in range(round(seconds / plant.timestep)):
        plant.send(ctrl)
        plant.step()


def test_a_robot_starting_on_a_slope_stands_on_it_feet_at_the_same_height_as_on_the_floor():
    flat = SimPlant(robots.info("a1"))
    slope = SimPlant(robots.info("a1"), terrain="slope_up_8")
    assert slope.terrain.start_pitch == pytest.approx(math.radians(8))
    start = feet_above_ground(slope)
    np.testing.assert_allclose(start, feet_above_ground(flat), atol=1e-9)  # turned with it
    assert pitch(slope) == pytest.approx(8.0)  # nose up with the slope, as on a real ramp
    stand(flat)
    stand(slope)
    assert slope.foot_contacts().all()
    np.testing.assert_allclose(feet_above_ground(slope), feet_above_ground(flat), atol=3e-3)
    assert pitch(slope) == pytest.approx(8.0, abs=2.0)  # position servos give a little


def pitch(plant: SimPlant) -> float:
    """The base's pitch (degrees, nose up positive)."""
    axes = plant.data.xmat[plant.model.body(plant.robot.base_body).id].reshape(3, 3)
    return math.degrees(math.atan2(axes[2, 0], axes[0, 0]))


def test_a_softer_floor_lets_the_robot_sink_deeper():
    flat = SimPlant(robots.info("a1"))
    soft = SimPlant(robots.info("a1"), terrain={"kind": "soft", "solref": [0.1, 1.0]})
    stand(flat)
    stand(soft)
    assert soft.foot_contacts().all()
    assert feet_above_ground(soft).mean() < feet_above_ground(flat).mean() - 2e-3
    floor = soft.model.geom("floor")
    assert floor.priority[0] > max(soft.model.geom_priority[soft.model.geom_bodyid > 0])


def test_slabs_are_loose_boxes_that_rest_until_pushed():
    plant = SimPlant(robots.info("a1"), terrain={"kind": "slabs", "count": 6, "seed": 3,
                                                  "max_height": 0.05, "min_height": 0.02})
    m, d = plant.model, plant.data
    slabs = [m.body(name).id for name in plant.terrain.slabs]
    assert len(slabs) == 6
    assert all(m.jnt_type[m.body_jntadr[b]] == mujoco.mjtJoint.mjJNT_FREE for b in slabs)
    heights = [2 * m.geom_size[m.body_geomadr[b]][2] for b in slabs]
    assert all(0.02 <= h <= 0.05 for h in heights)
    assert all(d.xpos[b][0] > 0.4 for b in slabs)  # ahead, none under the robot
    # the robot's state leaves the slabs out
    assert plant.read_state().qpos.shape == (robots.load_planning_model("a1").nq,)
    start = d.xpos[slabs].copy()
    stand(plant, 0.3)
    np.testing.assert_allclose(d.xpos[slabs], start, atol=2e-3)  # resting where put
    d.qvel[m.jnt_dofadr[m.body_jntadr[slabs[0]]]] = 1.0  # a kick along x
    stand(plant, 0.3)
    assert d.xpos[slabs[0]][0] > start[0][0] + 0.02
    again = SimPlant(robots.info("a1"), terrain={"kind": "slabs", "count": 6, "seed": 3,
                                                  "max_height": 0.05, "min_height": 0.02})
    np.testing.assert_array_equal(again.data.xpos[slabs], start)  # same seed, same slabs


def test_a_foot_on_a_slab_is_on_the_ground():
    """A loose slab is not the robot: a foot standing on it counts as a foot on the ground."""
    plant = SimPlant(robots.info("a1"), terrain={"kind": "slabs", "count": 1, "start": -0.5,
                                                  "length": 0.6, "width": 0.6, "min_size": 0.4,
                                                  "max_size": 0.4, "min_height": 0.03,
                                                  "max_height": 0.03})
    # the slab lies under the rear feet (within 0.15 m of its centre): the robot is dropped
    # from 5 cm onto it and the floor
    plant.data.qpos[2] += 0.05
    stand(plant, 0.5)
    m, d = plant.model, plant.data
    slab = m.body(plant.terrain.slabs[0]).id
    touching = {int(m.geom_bodyid[g]) for c in d.contact[:d.ncon] for g in (c.geom1, c.geom2)
                if slab in (m.geom_bodyid[c.geom1], m.geom_bodyid[c.geom2])}
    feet_on_slab = [i for i, b in enumerate(plant._foot_bodies) if int(b) in touching]
    assert feet_on_slab, "the slab was placed under a rear foot"
    assert plant.foot_contacts()[feet_on_slab].all()


def test_rough_ground_is_bumps_up_to_the_amplitude_tapering_to_the_floor():
    f = terrain_mod.parse({"kind": "rough", "amplitude": 0.04, "wavelength": 0.3, "seed": 1})[0]
    h = terrain_mod.rough_heights(f)
    assert h.min() >= 0.0 and h.max() <= 0.04 + 1e-12 and h.max() > 0.03
    assert np.all(h[:, 0] == 0.0) and np.all(h[0, :] == 0.0)  # the edges meet the floor
    np.testing.assert_array_equal(terrain_mod.rough_heights(f), h)
    other = terrain_mod.Rough(seed=2, amplitude=0.04)
    assert not np.array_equal(terrain_mod.rough_heights(other), h)
    # a ball dropped on the bumps settles on them, not on the floor below
    for x in (1.2, 1.5, 1.8):
        built, z = drop_ball([{"kind": "rough", "amplitude": 0.04, "seed": 1}], x, 0.0)
        assert built.ground_height(x, 0.0) > 0.005
        assert z - BALL == pytest.approx(built.ground_height(x, 0.0), abs=0.006)


def drop_ball(terrain, x: float, y: float) -> tuple[terrain_mod.Terrain, float]:
    """A ball on a vertical slide at (x, y) dropped onto the terrain: where it settles (z)."""
    spec = mujoco.MjSpec()
    spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1])
    built = terrain_mod.build(spec, terrain)
    ball = spec.worldbody.add_body(name="ball", pos=[x, y, 0.2])
    ball.add_joint(type=mujoco.mjtJoint.mjJNT_SLIDE, axis=[0, 0, 1], damping=5.0)
    ball.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[BALL, 0, 0], mass=0.1)
    m = spec.compile()
    d = mujoco.MjData(m)
    mujoco.mj_step(m, d, 1500)
    return built, float(d.xpos[m.body("ball").id][2])


def test_a_heightfield_from_a_file(tmp_path):
    heights = np.zeros((11, 21))
    heights[:, 10:] = 0.05  # a 5 cm shelf in its second half
    path = tmp_path / "field.npy"
    np.save(path, heights)
    spec = {"kind": "heightfield", "file": str(path), "size": [2.0, 1.0], "start": 0.5}
    for x, z in ((0.7, 0.0), (2.0, 0.05), (2.4, 0.05)):
        built, rest = drop_ball(spec, x, 0.1)
        assert built.ground_height(x, 0.1) == pytest.approx(z)
        assert rest - BALL == pytest.approx(z, abs=2e-3)
    np.save(tmp_path / "bad.npy", np.full((3, 3), np.nan))
    with pytest.raises(terrain_mod.TerrainError, match=r"'terrain\.file' heights must be finite"):
        terrain_mod.parse({**spec, "file": str(tmp_path / "bad.npy")})


STAIRS = str(Path(__file__).parents[4] / "configs" / "maps" / "stairs_12cm.yaml")


def riser_normals(shape: str) -> list[np.ndarray]:
    """The contact normals (from the ground to the ball) of a ball pressed into the first
    riser of the 12 cm stairs map (the field's between the samples at x = 0.55 and 0.6, the
    boxes' at 0.6), at several heights below the tread."""
    m, d, _, ground = probe_world({"kind": "map", "file": STAIRS, "shape": shape})
    normals = []
    for x in (0.575, 0.585, 0.595):
        for z in (0.05, 0.08):
            d.qpos[0:3], d.qpos[3:7] = [x, 0.01, z], [1, 0, 0, 0]
            mujoco.mj_forward(m, d)
            for c in d.contact[:d.ncon]:
                sign = 1.0 if c.geom1 in ground else -1.0
                normals.append(sign * c.frame[:3].copy())
    return normals


def test_a_flight_of_steps_on_a_map_is_a_staircase_whose_risers_push_a_foot_back_not_aside():
    """A height field's riser slopes over one cell and a ball pressed into it meets the inner
    walls of MuJoCo's prisms, which push it along y; the map built of boxes (the default for a
    flight of steps) pushes it straight back along −x, as a real riser does."""
    field = riser_normals("field")
    assert max(abs(n[1]) for n in field) > 0.9  # the prisms' walls: sideways
    boxes = riser_normals("auto")
    assert len(boxes) == 6
    for n in boxes:
        np.testing.assert_allclose(n, [-1.0, 0.0, 0.0], atol=1e-9)


def test_a_map_of_steps_is_built_of_treads_at_the_maps_heights():
    m, d, _, ground = probe_world({"kind": "map", "file": STAIRS})
    assert not any(m.geom_type[g] == mujoco.mjtGeom.mjGEOM_HFIELD for g in ground)
    # the ball rests on each tread (midway between risers) and on the landing
    for x, z in [(-0.5, 0.0), (0.7, 0.12), (1.2, 0.36), (2.0, 0.6), (3.2, 0.36), (4.5, 0.0)]:
        assert ground_distance(m, d, ground, x, z + BALL) == pytest.approx(0.0, abs=1e-9)
    # the risers at the higher tread's sample: 0.6 up, 2.8 (the landing's last sample) down
    assert ground_distance(m, d, ground, 0.6 - BALL - 0.01, 0.06) == pytest.approx(0.01)
    assert ground_distance(m, d, ground, 2.8 + BALL + 0.01, 0.54) == pytest.approx(0.01)


def test_a_noisy_map_or_a_ramp_stays_a_height_field():
    noisy = {"kind": "map", "file": STAIRS, "noise": 0.01}
    m, _, _, ground = probe_world(noisy)
    assert any(m.geom_type[g] == mujoco.mjtGeom.mjGEOM_HFIELD for g in ground)
    m, _, _, ground = probe_world({"kind": "map", "file": STAIRS, "shape": "field"})
    assert any(m.geom_type[g] == mujoco.mjtGeom.mjGEOM_HFIELD for g in ground)


def test_a_foot_pushed_deep_into_the_lowest_tread_is_pushed_back_up():
    """The lowest tread of a flight built of boxes is 5 cm over the floor: a ball pushed into
    it, its centre 4 cm under the top (below the tread's middle), must still be pushed up, not
    through it."""
    m, d, _, ground = probe_world({"kind": "map", "file": STAIRS})
    d.qpos[0:3], d.qpos[3:7] = [0.2, 0.0, -0.04], [1, 0, 0, 0]
    mujoco.mj_forward(m, d)
    normals = [(1.0 if c.geom1 in ground else -1.0) * c.frame[:3] for c in d.contact[:d.ncon]]
    assert normals and all(n[2] > 0.99 for n in normals)
