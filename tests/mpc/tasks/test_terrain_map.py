"""Terrain maps (mpc.tasks.terrain_map): the file formats, the grid's convention checked against
MuJoCo's own height field (a ray cast from above lands on the map's height), the bilinear
height and its gradient, the filtered maps, and one line for bad input."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from mpc.tasks import terrain_map
from mpc.tasks.terrain_map import FLOOR_DROP, HeightMap, MapError, load, stairs

RNG = np.random.default_rng(3)
BUMPY = HeightMap(0.1 * RNG.uniform(size=(7, 9)), 0.1, (-0.3, 0.2))


def compiled(hmap: HeightMap) -> tuple[mujoco.MjModel, mujoco.MjData]:
    spec = mujoco.MjSpec()
    spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1])
    hmap.add_to(spec)
    m = spec.compile()
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    return m, d


def ray_height(m: mujoco.MjModel, d: mujoco.MjData, x: float, y: float) -> float:
    """Height of the world's ground at (x, y): a ray cast down from 10 m."""
    geomid = np.array([-1], dtype=np.int32)
    dist = mujoco.mj_ray(m, d, np.array([x, y, 10.0]), np.array([0.0, 0.0, -1.0]), None, 1,
                         -1, geomid)
    return 10.0 - dist


def test_the_model_stands_on_the_map_at_every_sample_and_along_the_cell_borders():
    m, d = compiled(BUMPY)
    rows, cols = BUMPY.shape
    for r in range(rows):
        for c in range(cols):
            x, y = BUMPY.origin[0] + c * 0.1, BUMPY.origin[1] + r * 0.1
            # a hair inside the grid at its border, where the ray would miss the edge
            x, y = np.clip(x, -0.3 + 1e-7, 0.5 - 1e-7), np.clip(y, 0.2 + 1e-7, 0.8 - 1e-7)
            assert ray_height(m, d, x, y) == pytest.approx(BUMPY.heights[r, c], abs=1e-6)
    # along a cell border the surface is the straight line between the samples, as bilinear
    for x, y in ((0.033, 0.3), (-0.1, 0.471)):
        assert ray_height(m, d, x, y) == pytest.approx(float(BUMPY.height(x, y)), abs=1e-6)
    floor = m.geom("floor").id
    assert m.geom_pos[floor, 2] == pytest.approx(BUMPY.heights.min() - FLOOR_DROP)


@settings(max_examples=60, deadline=None)
@given(st.floats(-0.5, 0.7), st.floats(0.0, 1.0))
def test_the_gradient_is_the_derivative_of_the_height(x, y):
    h = 1e-7
    _, gx, gy = BUMPY.height_and_gradient(x, y)
    u, v = (x + 0.3) / 0.1, (y - 0.2) / 0.1
    if min(abs(u - round(u)), abs(v - round(v))) < 1e-5:
        return  # on a cell border the bilinear surface has a kink
    assert gx == pytest.approx((BUMPY.height(x + h, y) - BUMPY.height(x - h, y)) / (2 * h),
                               abs=1e-5)
    assert gy == pytest.approx((BUMPY.height(x, y + h) - BUMPY.height(x, y - h)) / (2 * h),
                               abs=1e-5)


def test_outside_the_grid_the_border_holds():
    assert BUMPY.height(-5.0, 0.2) == pytest.approx(BUMPY.heights[0, 0])
    assert BUMPY.height(9.0, 9.0) == pytest.approx(BUMPY.heights[-1, -1])
    _, gx, gy = BUMPY.height_and_gradient(-5.0, 0.45)
    assert gx == 0.0 and gy != 0.0


def test_stairs_rise_at_each_riser_and_come_down_after_the_landing():
    s = stairs(steps=5, rise=0.12, tread=0.25, start=0.6, landing=1.0)
    for x, z in ((0.0, 0.0), (0.7, 0.12), (1.0, 0.24), (1.7, 0.6), (2.8, 0.6), (2.9, 0.48),
                 (3.9, 0.0), (5.0, 0.0)):
        assert float(s.height(x, 0.3)) == pytest.approx(z, abs=1e-9), x


def test_the_clearance_map_is_the_highest_ground_within_reach():
    s = stairs(rise=0.12, resolution=0.01)
    top = s.dilated(0.05, 0.0)
    assert float(top.height(0.56, 0.0)) == pytest.approx(0.12)  # 4 cm before the first riser
    assert float(top.height(0.54, 0.0)) == pytest.approx(0.0)
    smooth = s.dilated(0.05, 0.025)
    assert 0.0 < float(smooth.height(0.54, 0.0)) < 0.12  # led up before the edge
    assert s.dilated(0.05, 0.025) is smooth  # cached


def test_despeckling_keeps_the_risers_and_takes_an_elevation_maps_noise_out():
    """The stairs unchanged (every riser a straight edge); with 1 cm of noise per sample, the
    edge map (the relief within 6 cm, which moves a foothold off an edge above 2 cm) is above
    2 cm in the middle of every tread before, and in at most a quarter of them after."""
    s = stairs(rise=0.12)
    assert np.array_equal(s.despeckled().heights, s.heights)
    xs, ys = np.meshgrid(0.725 + 0.25 * np.arange(4), np.linspace(-0.5, 0.5, 21))

    def above(m):
        return float(np.mean(m.relief(0.06, 0.03).height(xs.ravel(), ys.ravel()) > 0.02))

    assert above(s) == 0.0
    for seed in range(3):
        noisy = s.perturbed(0.0, 0.01, seed=seed)
        assert above(noisy) == 1.0
        assert above(noisy.despeckled()) < 0.25
        clean = noisy.despeckled().heights - s.heights
        assert np.abs(clean[:, 10:-10]).std() < 0.5 * 0.01  # the noise more than halved


def test_perturbed_adds_the_offset_and_seeded_noise():
    p = BUMPY.perturbed(0.02, 0.01, seed=4)
    diff = p.heights - BUMPY.heights
    assert diff.mean() == pytest.approx(0.02, abs=0.005)
    assert diff.std() == pytest.approx(0.01, rel=0.3)
    assert np.array_equal(p.heights, BUMPY.perturbed(0.02, 0.01, seed=4).heights)


# --- files -----------------------------------------------------------------------------------
def test_yaml_and_npy_round_trip(tmp_path):
    path = BUMPY.save(tmp_path / "bumpy.yaml")
    for name in (path, tmp_path / "bumpy.npy"):  # the YAML, or the .npy with its sidecar
        back = load(name)
        assert np.array_equal(back.heights, BUMPY.heights)
        assert back.resolution == BUMPY.resolution and back.origin == BUMPY.origin


@pytest.mark.parametrize("top", [255, 65535])
def test_a_png_is_a_map_seen_from_above(tmp_path, top):
    grey = np.zeros((3, 4), dtype=np.uint16 if top > 255 else np.uint8)
    grey[0, 3] = top  # the top row of the image is the highest y
    Image.fromarray(grey).save(tmp_path / "m.png")  # 8-bit L or 16-bit I;16
    (tmp_path / "m.yaml").write_text("resolution: 0.5\norigin: [1, 2]\nrange: [-0.1, 0.3]\n")
    m = load(tmp_path / "m.png")
    assert m.shape == (3, 4)
    assert m.heights[2, 3] == pytest.approx(0.3)
    assert m.heights[0, 0] == pytest.approx(-0.1)
    assert float(m.height(1 + 3 * 0.5, 2 + 2 * 0.5)) == pytest.approx(0.3)


def write(tmp_path, meta: dict, heights=None):
    if heights is not None:
        np.save(tmp_path / "h.npy", heights)
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(meta))
    return tmp_path / "m.yaml"


@pytest.mark.parametrize("meta, heights, message", [
    ({"heights": "h.npy", "resolution": -0.05}, np.zeros((3, 3)), "resolution must be > 0"),
    ({"heights": "h.npy", "resolution": 0}, np.zeros((3, 3)), "resolution must be > 0"),
    ({"heights": "h.npy", "resolution": 0.05}, np.zeros(5), "2-D grid of at least 2 x 2"),
    ({"heights": "h.npy", "resolution": 0.05}, np.zeros((1, 5)), "2-D grid of at least 2 x 2"),
    ({"heights": "h.npy", "resolution": 0.05}, np.full((2, 2), np.nan), "must be finite"),
    ({"heights": "h.npy", "resolution": 0.05, "origin": [1]}, np.zeros((2, 2)),
     "origin must be [x, y]"),
    ({"heights": "h.npy"}, np.zeros((2, 2)), "missing key 'resolution'"),
    ({"heights": "nope.npy", "resolution": 0.05}, None, "heights: no such file"),
    ({"resolution": 0.05}, None, "missing key 'heights'"),
    ({"heights": "h.npy", "resolution": 0.05, "resolutoin": 1}, np.zeros((2, 2)),
     "unknown key(s) resolutoin"),
    ({"heights": "h.npy", "resolution": "fine"}, np.zeros((2, 2)),
     "resolution must be a number"),
])
def test_bad_maps_get_one_line(tmp_path, meta, heights, message):
    with pytest.raises(MapError) as e:
        load(write(tmp_path, meta, heights))
    assert message in str(e.value) and "\n" not in str(e.value)


def test_bad_files_get_one_line(tmp_path):
    for path, message in ((tmp_path / "none.yaml", "no such file"),
                          (tmp_path / "m.txt", "a .yaml, .npy or .png")):
        path.write_text("x") if path.suffix == ".txt" else None
        with pytest.raises(MapError, match=message):
            load(path)
    np.save(tmp_path / "alone.npy", np.zeros((2, 2)))
    with pytest.raises(MapError, match=r"no sidecar alone\.yaml"):
        load(tmp_path / "alone.npy")
    (tmp_path / "png.png").write_bytes(b"not a png")
    (tmp_path / "png.yaml").write_text("resolution: 0.1\n")
    with pytest.raises(MapError, match="range"):
        load(tmp_path / "png.png")


def test_the_shipped_maps_are_the_stairs_they_say():
    root = terrain_map.__file__.rsplit("/mpc/", 1)[0]
    for rise in (12, 8):
        shipped = load(f"{root}/configs/maps/stairs_{rise}cm.yaml")
        made = stairs(rise=rise / 100)
        assert np.allclose(shipped.heights, made.heights)
        assert shipped.origin == made.origin and shipped.resolution == made.resolution


def test_a_flight_of_steps_is_told_from_other_maps():
    """steps(): the treads of a map that is a flight of steps along x, each riser at the
    higher tread's sample next to it (the treads nowhere above the field); None for a slope,
    a bump across y or a one-sample run."""
    treads = stairs(steps=2, rise=0.1, tread=0.25, start=0.6, landing=0.5, down=True,
                    before=0.5, after=0.5).steps()
    np.testing.assert_allclose(treads, [(-0.5, 0.6, 0.0), (0.6, 0.85, 0.1), (0.85, 1.55, 0.2),
                                        (1.55, 1.8, 0.1), (1.8, 2.6, 0.0)], atol=1e-12)
    ramp = HeightMap(np.tile(np.linspace(0, 0.3, 10), (4, 1)), 0.1)
    assert ramp.steps() is None
    bump = np.zeros((4, 10))
    bump[2, 3:6] = 0.1
    assert HeightMap(bump, 0.1).steps() is None
    spike = np.zeros((3, 10))
    spike[:, 4] = 0.1
    assert HeightMap(spike, 0.1).steps() is None


def _numpy_bilinear(hmap: HeightMap, x, y):
    """The bilinear height and gradient as numpy computed them before the compiled kernel
    (2026-11-27), operation for operation."""
    h = hmap.heights
    rows, cols = h.shape
    u = (np.asarray(x, dtype=float) - hmap.origin[0]) / hmap.resolution
    v = (np.asarray(y, dtype=float) - hmap.origin[1]) / hmap.resolution
    inside_u = (u >= 0.0) & (u <= cols - 1)
    inside_v = (v >= 0.0) & (v <= rows - 1)
    u = np.clip(u, 0.0, cols - 1)
    v = np.clip(v, 0.0, rows - 1)
    c = np.minimum(u.astype(int), cols - 2)
    r = np.minimum(v.astype(int), rows - 2)
    a, b = u - c, v - r
    h00, h01, h10, h11 = h[r, c], h[r, c + 1], h[r + 1, c], h[r + 1, c + 1]
    z = (1 - a) * (1 - b) * h00 + a * (1 - b) * h01 + (1 - a) * b * h10 + a * b * h11
    dx = ((1 - b) * (h01 - h00) + b * (h11 - h10)) / hmap.resolution
    dy = ((1 - a) * (h10 - h00) + a * (h11 - h01)) / hmap.resolution
    return z, np.where(inside_u, dx, 0.0), np.where(inside_v, dy, 0.0)


@pytest.mark.parametrize("hmap", [BUMPY, stairs(), stairs().dilated(0.1, 0.05),
                                  stairs().smoothed(0.15)], ids=["bumpy", "stairs", "dilated",
                                                                 "smoothed"])
def test_the_compiled_bilinear_is_numpys_to_the_bit(hmap):
    rng = np.random.default_rng(7)
    (x0, y0), (length, width) = hmap.origin, hmap.size
    # inside, outside, on the samples and cell borders, in arrays of several shapes
    x = x0 + rng.uniform(-0.3, 1.3, size=(4, 37)) * length
    y = y0 + rng.uniform(-0.3, 1.3, size=(4, 37)) * width
    x[0, :10] = x0 + hmap.resolution * np.arange(10)
    y[1, :10] = y0 + hmap.resolution * np.arange(10)
    x[2, 0], y[2, 0] = x0 + length, y0 + width
    got, want = hmap.height_and_gradient(x, y), _numpy_bilinear(hmap, x, y)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and np.array_equal(g, w)
    for g, w in zip(hmap.height_and_gradient(x[0], y0 + 0.3), _numpy_bilinear(hmap, x[0], y0 + 0.3),
                    strict=True):  # broadcast against a scalar
        assert np.array_equal(g, w)
    for g, w in zip(hmap.height_and_gradient(float(x[3, 5]), float(y[3, 5])),
                    _numpy_bilinear(hmap, float(x[3, 5]), float(y[3, 5])), strict=True):
        assert np.ndim(g) == 0 and float(g) == float(w)


def test_a_point_that_is_not_finite_has_no_height():
    z, gx, gy = BUMPY.height_and_gradient(np.array([0.0, np.nan, np.inf]), 0.3)
    assert np.isfinite(z[0]) and np.isfinite(gx[0]) and np.isfinite(gy[0])
    assert np.isnan(z[1:]).all() and np.isnan(gx[1:]).all() and np.isnan(gy[1:]).all()
