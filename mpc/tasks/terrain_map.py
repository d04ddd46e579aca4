"""A terrain map: a grid of ground heights that the planner plans on and a simulated plant can
stand on.

**The grid.** ``heights[r, c]`` (metres) is the ground at the world point

    (x, y) = (origin_x + c · resolution,  origin_y + r · resolution)

rows along y, columns along x, at least 2 × 2 samples, all finite, resolution > 0. Between
samples the ground is MuJoCo's height field surface (two triangles per cell);
:meth:`HeightMap.height` interpolates bilinearly (the same at the samples and along the cell
borders), and outside the grid it holds the nearest border sample.

**Files** (:func:`load`), one of:

* a YAML file with ``heights: FILE`` (relative to the YAML), ``resolution`` and ``origin``
  ``[x, y]``; for a PNG also ``range: [z_black, z_white]`` (metres);
* a ``.npy`` (a 2-D float array in metres) or ``.png`` (8- or 16-bit grey, needs Pillow: the
  ``map`` extra) with a sidecar YAML of the same name (``stairs.npy`` and ``stairs.yaml``)
  holding the other keys.

A PNG is a map seen from above: its top row is the highest y (the image is flipped into
``heights``), grey value v of maximum V gives z_black + v/V · (z_white − z_black).

**In a model** (:meth:`HeightMap.add_to`): a height-field geom over the grid with the contact
parameters of the floor plane it stands on, which is lowered :data:`FLOOR_DROP` below the map's
lowest sample, so that a foot on the map touches the map only (MuJoCo makes a contact per
geom: a foot on a field that coincides with the plane would get both). The map must cover where
the robot walks.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path

import mujoco
import numpy as np
import yaml
from numba import njit
from scipy import ndimage

from common import yamlfile

#: How far (m) the floor plane is lowered below the map's lowest sample.
FLOOR_DROP = 0.05
#: Thickness (m) of MuJoCo's height-field base below its lowest sample.
BASE = 0.1
#: Largest number of samples a map may have (a 10 m square at 1 cm).
MAX_SAMPLES = 1_000_000


class MapError(ValueError):
    """A map that cannot be used; the message is one line saying what is wrong."""


@dataclass(frozen=True)
class HeightMap:
    """Ground heights on a regular grid (see the module docstring)."""

    heights: np.ndarray
    resolution: float
    origin: tuple[float, float] = (0.0, 0.0)
    #: Caches of the filtered maps (:meth:`dilated`, :meth:`smoothed`), by their parameters.
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        h = np.asarray(self.heights, dtype=float)
        if h.ndim != 2 or min(h.shape) < 2:
            raise MapError(f"heights must be a 2-D grid of at least 2 x 2, got shape {h.shape}")
        if h.size > MAX_SAMPLES:
            raise MapError(f"heights has {h.size} samples, at most {MAX_SAMPLES}")
        if not np.all(np.isfinite(h)):
            raise MapError("heights must be finite (NaN or inf found)")
        res = float(self.resolution)
        if not np.isfinite(res) or res <= 0.0:
            raise MapError(f"resolution must be > 0, got {self.resolution}")
        origin = np.asarray(self.origin, dtype=float)
        if origin.shape != (2,) or not np.all(np.isfinite(origin)):
            raise MapError(f"origin must be [x, y], got {self.origin!r}")
        h.setflags(write=False)
        object.__setattr__(self, "heights", h)
        object.__setattr__(self, "resolution", res)
        object.__setattr__(self, "origin", (float(origin[0]), float(origin[1])))

    # --- geometry ------------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, int]:
        return self.heights.shape

    @property
    def size(self) -> tuple[float, float]:
        """(length along x, width along y) in metres."""
        rows, cols = self.shape
        return (cols - 1) * self.resolution, (rows - 1) * self.resolution

    @property
    def centre(self) -> tuple[float, float]:
        length, width = self.size
        return self.origin[0] + length / 2, self.origin[1] + width / 2

    def height(self, x, y) -> np.ndarray:
        """Bilinear height at (x, y) (arrays broadcast); the border sample outside."""
        return self.height_and_gradient(x, y)[0]

    def height_and_gradient(self, x, y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(h, ∂h/∂x, ∂h/∂y) of the bilinear interpolation at (x, y): within a cell with
        corners h00 (lower x, y), h01 (higher x), h10 (higher y), h11 and fractions a (x), b (y)

            h = (1−a)(1−b) h00 + a(1−b) h01 + (1−a) b h10 + a b h11

        whose derivatives are those of a and b times 1/resolution; outside the grid the point
        is clamped onto it (the gradient across the border is zero there). Compiled
        (:func:`_bilinear`): the planner reads it per knot and per foothold, mostly at a few
        points, where numpy's per-call overhead was most of the cost."""
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        if x.shape != y.shape:
            x, y = np.broadcast_arrays(x, y)
        out = np.empty((3, x.size))
        _bilinear(self.heights, self.origin[0], self.origin[1], self.resolution, x.ravel(),
                  y.ravel(), out)
        if x.ndim == 0:
            return out[0, 0], out[1, 0], out[2, 0]
        z, dx, dy = out.reshape(3, *x.shape)
        return z, dx, dy

    # --- derived maps --------------------------------------------------------------------------
    def dilated(self, radius: float, sigma: float) -> HeightMap:
        """The highest ground within ``radius`` of each sample (a disc), then smoothed with a
        Gaussian of standard deviation ``sigma`` (m): what a foot of that reach must clear,
        with a gradient that leads it up before an edge rather than at it."""
        key = ("dilated", float(radius), float(sigma))
        if key not in self._cache:
            top = ndimage.maximum_filter(self.heights, footprint=self._disc(radius),
                                         mode="nearest")
            self._cache[key] = self._with(_smooth(top, sigma / self.resolution))
        return self._cache[key]

    def relief(self, radius: float, sigma: float) -> HeightMap:
        """The relief within ``radius`` of each sample (the highest less the lowest ground in
        a disc), smoothed with a Gaussian of standard deviation ``sigma`` (m): zero on flat
        ground, the rise of a step within ``radius`` of its edge, on either side, with a
        gradient that points away from the edge toward the middle of the treads."""
        key = ("relief", float(radius), float(sigma))
        if key not in self._cache:
            disc = self._disc(radius)
            top = ndimage.maximum_filter(self.heights, footprint=disc, mode="nearest")
            bottom = ndimage.minimum_filter(self.heights, footprint=disc, mode="nearest")
            self._cache[key] = self._with(_smooth(top - bottom, sigma / self.resolution))
        return self._cache[key]

    def _disc(self, radius: float) -> np.ndarray:
        """The samples within ``radius`` of the centre of a square footprint."""
        n = int(np.ceil(radius / self.resolution))
        yy, xx = np.mgrid[-n:n + 1, -n:n + 1] * self.resolution
        return xx ** 2 + yy ** 2 <= radius ** 2 + 1e-12

    def smoothed(self, sigma: float) -> HeightMap:
        """The map smoothed with a Gaussian of standard deviation ``sigma`` (m): the ground
        under a body that spans about 2 sigma (a flight of stairs becomes its slope)."""
        key = ("smoothed", float(sigma))
        if key not in self._cache:
            self._cache[key] = self._with(_smooth(self.heights, sigma / self.resolution))
        return self._cache[key]

    def despeckled(self) -> HeightMap:
        """Each sample the median of the 3 x 3 samples around it: a sample that stands out
        from its neighbours (an elevation map's noise, a spike) is gone, a straight edge (a
        riser, a curb) keeps its place and height, since the majority of each window is on
        one side of it. Features a sample wide (a post) go too."""
        key = ("despeckled",)
        if key not in self._cache:
            self._cache[key] = self._with(ndimage.median_filter(self.heights, size=3,
                                                                mode="nearest"))
        return self._cache[key]

    def perturbed(self, offset: float = 0.0, noise: float = 0.0, seed: int = 0) -> HeightMap:
        """The map raised by ``offset`` (m) with independent Gaussian noise of standard
        deviation ``noise`` (m) on every sample, seeded: a map that disagrees with the world
        as an elevation map does."""
        rng = np.random.default_rng(seed)
        return self._with(self.heights + offset + noise * rng.standard_normal(self.shape))

    def steps(self) -> list[tuple[float, float, float]] | None:
        """The map as flat treads if it is a flight of steps along x: every row the same
        profile, made of runs of at least two equal samples (a riser between two samples,
        never a slope over several). Returns (x0, x1, z) per run along +x, the first and last
        run reaching the map's border; None if the map is not so. Each riser stands at the
        higher tread's sample next to it (the lower tread covers the cell the height field's
        riser slopes over): the treads are nowhere above the field, so a foot the planner
        lifts over the field's riser clears the vertical one. (:func:`stairs`'s risers up
        stand where it puts them, at ``start + k·tread``; those down one sample before.) A
        world built of these treads has vertical risers where the field slopes over a
        cell."""
        h = self.heights
        if not np.all(h == h[0]):
            return None
        z = h[0]
        cut = np.flatnonzero(np.diff(z) != 0.0) + 1
        bounds = [0, *cut.tolist(), len(z)]
        if any(b - a < 2 for a, b in itertools.pairwise(bounds)):
            return None
        x0, res = self.origin[0], self.resolution
        riser = [c if z[c] > z[c - 1] else c - 1 for c in cut]  # the higher run's end sample
        edge = [x0, *(x0 + c * res for c in riser), x0 + (len(z) - 1) * res]
        return [(float(edge[k]), float(edge[k + 1]), float(z[bounds[k]]))
                for k in range(len(bounds) - 1)]

    def _with(self, heights: np.ndarray) -> HeightMap:
        return HeightMap(heights, self.resolution, self.origin)

    # --- in a model ----------------------------------------------------------------------------
    def add_to(self, spec: mujoco.MjSpec, name: str = "terrain_map",
               rgba: tuple[float, ...] | None = None,
               parent: mujoco.MjsBody | None = None,
               span: float | None = None) -> mujoco.MjsGeom:
        """Add the map to ``spec`` (a robot's model specification before compiling, with a
        plane geom named ``floor`` in its world body) as a height-field geom with the floor's
        contact parameters, on ``parent`` (a static body at the origin; None: the world
        body); the floor is lowered to :data:`FLOOR_DROP` below the map. ``span`` (m): the
        field's elevation range if more than the map's relief (room for heights written in
        place later, :meth:`mpc.tasks.map_ground.MapGround.reveal`)."""
        floor = floor_plane(spec)
        h = self.heights
        rows, cols = h.shape
        lo, hi = float(h.min()), float(h.max())
        span = max(hi - lo, 1e-6, span or 0.0)
        length, width = self.size
        spec.add_hfield(name=name, nrow=rows, ncol=cols,
                        size=[length / 2, width / 2, span, BASE],
                        userdata=((h - lo) / span).ravel().tolist())
        cx, cy = self.centre
        geom = (spec.worldbody if parent is None else parent).add_geom(
            name=name, type=mujoco.mjtGeom.mjGEOM_HFIELD, hfieldname=name, pos=[cx, cy, lo])
        floor_contact(floor, geom)
        if rgba is not None:
            geom.rgba = list(rgba)
        floor.pos = [floor.pos[0], floor.pos[1], lo - FLOOR_DROP]
        return geom

    # --- files ---------------------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write the map as ``path`` (a .yaml) and the heights beside it (same name, .npy);
        returns the YAML's path."""
        path = Path(path).with_suffix(".yaml")
        np.save(path.with_suffix(".npy"), self.heights)
        path.write_text(yaml.safe_dump({
            "heights": path.with_suffix(".npy").name, "resolution": self.resolution,
            "origin": list(self.origin)}, sort_keys=False))
        return path


def floor_plane(spec: mujoco.MjSpec) -> mujoco.MjsGeom:
    """The floor plane of a model specification's world body (MapError without one)."""
    floor = next((g for g in spec.worldbody.geoms if g.type == mujoco.mjtGeom.mjGEOM_PLANE),
                 None)
    if floor is None:
        raise MapError("the model has no floor plane in its world body")
    return floor


def floor_contact(floor: mujoco.MjsGeom, geom: mujoco.MjsGeom) -> None:
    """Give ``geom`` (a map's height field, or the floor moved under a map) the floor's
    contact parameters and collision bits: the feet meet it as they meet the floor."""
    for attr in ("contype", "conaffinity", "condim", "friction", "solref", "solimp",
                 "solmix", "margin", "gap", "priority", "group"):
        setattr(geom, attr, getattr(floor, attr))


def _smooth(heights: np.ndarray, sigma_cells: float) -> np.ndarray:
    if sigma_cells <= 0.0:
        return heights.copy()
    return ndimage.gaussian_filter(heights, sigma_cells, mode="nearest")


# --- from a message ------------------------------------------------------------------------------
def from_message(rows: int, cols: int, heights, resolution: float,
                 origin: tuple[float, float]) -> HeightMap:
    """The map a map message describes (:mod:`mpc.app.maps`): ``heights`` row-major, ``rows``
    along y and ``cols`` along x, ``heights[r * cols + c]`` the ground at (origin_x + c ·
    resolution, origin_y + r · resolution); MapError naming what is wrong (a length other than
    rows · cols, NaN, a resolution of zero or below, fewer than 2 x 2 samples)."""
    flat = np.asarray(heights, dtype=float).ravel()
    if rows < 2 or cols < 2:
        raise MapError(f"rows and cols must be >= 2, got {rows} x {cols}")
    if rows * cols > MAX_SAMPLES:
        raise MapError(f"{rows} x {cols} samples, at most {MAX_SAMPLES}")
    if flat.size != rows * cols:
        raise MapError(f"{flat.size} heights for rows x cols = {rows} x {cols} = "
                       f"{rows * cols}")
    bad = np.flatnonzero(~np.isfinite(flat))
    if bad.size:
        r, c = divmod(int(bad[0]), cols)
        raise MapError(f"heights must be finite: {bad.size} NaN or inf, the first at row {r}, "
                       f"col {c}")
    return HeightMap(flat.reshape(rows, cols), resolution, origin)


# --- loading -----------------------------------------------------------------------------------
def load(path: str | Path) -> HeightMap:
    """The map of a file (see the module docstring); MapError naming what is wrong."""
    path = Path(path)
    if not path.is_file():
        raise MapError(f"no such file: {path}")
    if path.suffix in (".yaml", ".yml"):
        meta = _read_meta(path)
        if "heights" not in meta:
            raise MapError(f"{path}: missing key 'heights' (the .npy or .png file)")
        grid = path.parent / str(meta.pop("heights"))
        if not grid.is_file():
            raise MapError(f"{path}: heights: no such file: {grid}")
    elif path.suffix in (".npy", ".png"):
        grid = path
        sidecar = path.with_suffix(".yaml")
        if not sidecar.is_file():
            raise MapError(f"{path}: no sidecar {sidecar.name} (resolution, origin)")
        meta = _read_meta(sidecar)
        meta.pop("heights", None)
        path = sidecar
    else:
        raise MapError(f"{path}: a map is a .yaml, .npy or .png file")
    unknown = set(meta) - {"resolution", "origin", "range"}
    if unknown:
        raise MapError(f"{path}: unknown key(s) {', '.join(sorted(map(str, unknown)))}; "
                       "known: heights, resolution, origin, range")
    if "resolution" not in meta:
        raise MapError(f"{path}: missing key 'resolution' (m between samples)")
    heights = _read_png(grid, meta.get("range"), path) if grid.suffix == ".png" else \
        _read_npy(grid)
    try:
        resolution = float(meta["resolution"])
    except (TypeError, ValueError):
        raise MapError(f"{path}: resolution must be a number, got "
                       f"{meta['resolution']!r}") from None
    origin = meta.get("origin", [0.0, 0.0])
    try:
        origin = tuple(float(o) for o in origin)
    except (TypeError, ValueError):
        raise MapError(f"{path}: origin must be [x, y], got {origin!r}") from None
    try:
        return HeightMap(heights, resolution, origin)
    except MapError as e:
        raise MapError(f"{path}: {e}") from None


def _read_meta(path: Path) -> dict:
    try:
        meta = yamlfile.loads(path.read_text())
    except (OSError, yaml.YAMLError, ValueError) as e:
        raise MapError(f"{path}: cannot read: {str(e).splitlines()[0]}") from None
    if not isinstance(meta, dict):
        raise MapError(f"{path}: expected a mapping (heights, resolution, origin)")
    return meta


def _read_npy(path: Path) -> np.ndarray:
    try:
        a = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise MapError(f"{path}: cannot read: {e}") from None
    if not np.issubdtype(a.dtype, np.number):
        raise MapError(f"{path}: heights must be numbers, got {a.dtype}")
    return np.asarray(a, dtype=float)


def _read_png(path: Path, z_range, meta_path: Path) -> np.ndarray:
    try:
        lo, hi = (float(z) for z in z_range)
    except (TypeError, ValueError):
        raise MapError(f"{meta_path}: a PNG map needs range: [z_black, z_white] (m), got "
                       f"{z_range!r}") from None
    try:
        from PIL import Image
    except ImportError:
        raise MapError(f"{path}: reading a PNG map needs Pillow (pip install "
                       "'legged-mpc[map]')") from None
    try:
        with Image.open(path) as image:
            bits = 16 if image.mode.startswith("I") else 8
            grey = np.asarray(image if bits == 16 else image.convert("L"), dtype=float)
    except OSError as e:
        raise MapError(f"{path}: cannot read: {e}") from None
    if grey.ndim != 2:
        raise MapError(f"{path}: expected a grey image, got shape {grey.shape}")
    top = 65535.0 if bits == 16 else 255.0
    return lo + np.flipud(grey) / top * (hi - lo)


# --- a flight of stairs ------------------------------------------------------------------------
def stairs(steps: int = 5, rise: float = 0.12, tread: float = 0.25, start: float = 0.6,
           landing: float = 1.0, down: bool = True, resolution: float = 0.05,
           width: float = 2.0, before: float = 1.0, after: float = 1.5) -> HeightMap:
    """A flight of ``steps`` steps of ``rise`` and ``tread`` (m) rising along +x from
    ``start`` m ahead of the origin, a ``landing`` on top and (``down``) the same flight
    down again, ``before`` m of floor behind x = 0 and ``after`` m beyond; ``width`` across,
    centred on y = 0. Each riser lies on a sample column (the step's edge at a sample, so the
    height field's wall is as steep as a cell allows)."""
    xs = np.arange(-before, start + 2 * steps * tread + landing + after + resolution / 2,
                   resolution)
    z = np.zeros_like(xs)
    for k in range(steps):
        z[xs >= start + k * tread - 1e-9] += rise
    if down:
        top_end = start + steps * tread + landing
        for k in range(steps):
            z[xs >= top_end + k * tread - 1e-9] -= rise
    rows = round(width / resolution) + 1
    heights = np.tile(z, (rows, 1))
    return HeightMap(heights, resolution, (float(xs[0]), -width / 2))


@njit(cache=True)
def _bilinear(h, ox, oy, res, x, y, out):  # pragma: no cover (compiled)
    """:meth:`HeightMap.height_and_gradient` at the points (x[k], y[k]) into out[:, k] (the
    height and the two slopes): the same operations in the same order as numpy's version of it
    had (identical results); a point that is not finite gives NaN."""
    rows, cols = h.shape
    z, dx, dy = out[0], out[1], out[2]
    for k in range(x.shape[0]):
        u = (x[k] - ox) / res
        v = (y[k] - oy) / res
        if not (np.isfinite(u) and np.isfinite(v)):
            z[k] = dx[k] = dy[k] = np.nan
            continue
        inside_u = u >= 0.0 and u <= cols - 1
        inside_v = v >= 0.0 and v <= rows - 1
        u = min(max(u, 0.0), cols - 1.0)
        v = min(max(v, 0.0), rows - 1.0)
        c = min(int(u), cols - 2)
        r = min(int(v), rows - 2)
        a = u - c
        b = v - r
        h00, h01, h10, h11 = h[r, c], h[r, c + 1], h[r + 1, c], h[r + 1, c + 1]
        z[k] = (1 - a) * (1 - b) * h00 + a * (1 - b) * h01 + (1 - a) * b * h10 + a * b * h11
        dx[k] = ((1 - b) * (h01 - h00) + b * (h11 - h10)) / res if inside_u else 0.0
        dy[k] = ((1 - a) * (h10 - h00) + a * (h11 - h01)) / res if inside_v else 0.0
