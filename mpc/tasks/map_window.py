"""A local window of the terrain: the part of a received map the planning model holds, moving
with the robot.

A map that arrives while the robot runs (:mod:`mpc.app.maps`) may be larger than the planning
model's height field, whose grid is fixed once the model is compiled (``nrow``, ``ncol``,
``size``; the analytic derivatives read those as constants). The window is that grid: ``rows``
× ``cols`` samples ``resolution`` apart, ``length`` × ``width`` metres, axis-aligned, its
origin (the sample [0, 0]) on a multiple of ``resolution`` in x and y. Its centre sits
``ahead`` metres in front of the base along its heading; when the robot has moved so that the
wanted centre is more than ``recentre`` metres from the window's, the window moves there (so
it is not re-sampled at every plan).

Each sample (x, y) of the window is, in this order:

1. the received map at (x, y), bilinear (:func:`resample`) where (x, y) lies on that map's
   grid (a sample that falls on one of the map's samples, within 1e-9 cells, is copied
   exactly: a map of the window's resolution on an aligned origin arrives unchanged);
2. otherwise the window's own previous value at (x, y), if the previous window covered it
   (the last good value);
3. otherwise ``floor`` (m): ground no map has described.

Heights are clipped into the window's vertical range ``heights`` = [z_low, z_high] (fixed
with the model: the field's base lies at z_low, its elevation is z_high − z_low); a map
beyond it is clipped and says so. In the model the window is a height-field geom on a body
of its own without joints (static, welded to the world: what the analytic derivatives'
height-field contacts assume), which :meth:`MapWindow.write` moves by ``body_pos``; MuJoCo
places such a body from ``body_pos`` at every forward pass and its collision reads
``hfield_data`` at every step, so an update takes effect at the next rollout. The floor plane
lies :data:`~mpc.tasks.terrain_map.FLOOR_DROP` below z_low.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import mujoco
import numpy as np

from mpc.tasks.task_base import base_yaw
from mpc.tasks.terrain_map import (
    BASE,
    FLOOR_DROP,
    MAX_SAMPLES,
    HeightMap,
    MapError,
    floor_contact,
    floor_plane,
)

log = logging.getLogger(__name__)

#: How close (in cells) a sample must fall to one of the map's samples to be copied exactly.
SNAP = 1e-9


@dataclass(frozen=True)
class WindowSpec:
    """The window's geometry and rules (see the module docstring); checked on creation."""

    length: float = 4.0
    width: float = 2.0
    resolution: float = 0.05
    ahead: float = 0.5
    recentre: float = 0.25
    z_low: float = -0.5
    z_high: float = 1.0
    floor: float = 0.0

    def __post_init__(self) -> None:
        for name in ("length", "width", "resolution", "recentre"):
            value = getattr(self, name)
            if not np.isfinite(value) or value <= 0.0:
                raise MapError(f"window {name} must be > 0, got {value}")
        if not self.z_low < self.z_high:
            raise MapError(f"window heights must be [low, high] with low < high, got "
                           f"[{self.z_low}, {self.z_high}]")
        if not self.z_low <= self.floor <= self.z_high:
            raise MapError(f"window floor must lie within its heights [{self.z_low}, "
                           f"{self.z_high}], got {self.floor}")
        rows, cols = self.shape
        if min(rows, cols) < 2:
            raise MapError(f"window of {self.length} x {self.width} m at {self.resolution} m "
                           "has fewer than 2 x 2 samples")
        if rows * cols > MAX_SAMPLES:
            raise MapError(f"window has {rows * cols} samples, at most {MAX_SAMPLES}")

    @property
    def shape(self) -> tuple[int, int]:
        """(rows along y, columns along x)."""
        return (round(self.width / self.resolution) + 1,
                round(self.length / self.resolution) + 1)


def resample(source: HeightMap, origin: tuple[float, float], resolution: float,
             shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """(heights, covered) of the grid of ``shape`` at ``origin`` and ``resolution`` read off
    ``source`` bilinearly: ``covered[r, c]`` where the sample lies within the source's grid
    (heights there are the interpolation, elsewhere NaN). Sample coordinates in source cells
    within :data:`SNAP` of an integer are taken as that integer, so aligned grids copy."""
    rows, cols = shape
    u = _cells(origin[0], resolution, cols, source.origin[0], source.resolution)
    v = _cells(origin[1], resolution, rows, source.origin[1], source.resolution)
    src_rows, src_cols = source.shape
    in_u = (u >= 0.0) & (u <= src_cols - 1)
    in_v = (v >= 0.0) & (v <= src_rows - 1)
    c = np.minimum(np.clip(u, 0, src_cols - 1).astype(int), src_cols - 2)
    r = np.minimum(np.clip(v, 0, src_rows - 1).astype(int), src_rows - 2)
    a = (np.clip(u, 0, src_cols - 1) - c)[None, :]
    b = (np.clip(v, 0, src_rows - 1) - r)[:, None]
    h = source.heights
    rr, cc = r[:, None], c[None, :]
    z = ((1 - a) * (1 - b) * h[rr, cc] + a * (1 - b) * h[rr, cc + 1]
         + (1 - a) * b * h[rr + 1, cc] + a * b * h[rr + 1, cc + 1])
    covered = in_v[:, None] & in_u[None, :]
    return np.where(covered, z, np.nan), covered


def _cells(start: float, step: float, n: int, src_start: float, src_step: float) -> np.ndarray:
    """Positions start + k·step (k < n) in cells of a source grid starting at src_start."""
    u = (start - src_start) / src_step + np.arange(n) * (step / src_step)
    near = np.round(u)
    return np.where(np.abs(u - near) <= SNAP, near, u)


class MapWindow:
    """The window's samples and where it lies (see the module docstring)."""

    #: Name of the window's body in the planning model.
    BODY = "terrain_window"

    def __init__(self, spec: WindowSpec, initial: HeightMap | None = None,
                 centre: tuple[float, float] = (0.0, 0.0)):
        """The window centred (snapped to its grid) on ``centre`` + ``ahead`` along x, filled
        from ``initial`` (a map given with the task) where it covers it, else the floor."""
        self.spec = spec
        self.shape = spec.shape
        self.heights = np.full(self.shape, spec.floor)
        self.origin = self._origin((centre[0] + spec.ahead, centre[1]))
        #: The map the window is read off (the newest received), or None.
        self.source: HeightMap | None = None
        #: Samples clipped into the window's heights when the map was last read.
        self.clipped = 0
        self._model: mujoco.MjModel | None = None
        if initial is not None:
            self.fill(initial)

    # --- geometry ------------------------------------------------------------------------------
    def _origin(self, centre) -> tuple[float, float]:
        """The grid origin (snapped to multiples of the resolution) of a window at centre."""
        res = self.spec.resolution
        rows, cols = self.shape
        return (round((centre[0] - (cols - 1) * res / 2) / res) * res,
                round((centre[1] - (rows - 1) * res / 2) / res) * res)

    @property
    def map(self) -> HeightMap:
        """The window as a map (what the task's targets read)."""
        return HeightMap(self.heights, self.spec.resolution, self.origin)

    @property
    def centre(self) -> tuple[float, float]:
        """The window's centre (x, y), as :attr:`HeightMap.centre` computes it."""
        rows, cols = self.shape
        res = self.spec.resolution
        return (self.origin[0] + (cols - 1) * res / 2, self.origin[1] + (rows - 1) * res / 2)

    def wanted_centre(self, qpos: np.ndarray) -> tuple[float, float]:
        """``ahead`` m in front of the base at ``qpos`` along its heading."""
        yaw = base_yaw(qpos)
        return (float(qpos[0] + self.spec.ahead * np.cos(yaw)),
                float(qpos[1] + self.spec.ahead * np.sin(yaw)))

    # --- contents ------------------------------------------------------------------------------
    def fill(self, source: HeightMap) -> None:
        """Read the window off ``source`` (which becomes the window's source): the samples it
        covers change, the others keep their values."""
        self.source = source
        z, covered = resample(source, self.origin, self.spec.resolution, self.shape)
        self._set(np.where(covered, z, self.heights))

    def move_to(self, qpos: np.ndarray) -> bool:
        """Move the window if the wanted centre at ``qpos`` is more than ``recentre`` from
        its centre; returns whether it moved. The samples it keeps covering keep their values,
        the new ones come from the source (or the floor), see the module docstring."""
        wanted = self.wanted_centre(qpos)
        if np.hypot(wanted[0] - self.centre[0], wanted[1] - self.centre[1]) \
                <= self.spec.recentre:
            return False
        origin = self._origin(wanted)
        if origin == self.origin:
            return False
        res = self.spec.resolution
        rows, cols = self.shape
        kept = np.full(self.shape, self.spec.floor)
        dc = round((origin[0] - self.origin[0]) / res)
        dr = round((origin[1] - self.origin[1]) / res)
        # new[r, c] = old[r + dr, c + dc] where that lies in the old window
        r0, r1 = max(0, -dr), min(rows, rows - dr)
        c0, c1 = max(0, -dc), min(cols, cols - dc)
        if r0 < r1 and c0 < c1:
            kept[r0:r1, c0:c1] = self.heights[r0 + dr:r1 + dr, c0 + dc:c1 + dc]
        self.origin = origin
        if self.source is not None:
            z, covered = resample(self.source, origin, res, self.shape)
            kept = np.where(covered, z, kept)
        self._set(kept)
        return True

    def _set(self, heights: np.ndarray) -> None:
        lo, hi = self.spec.z_low, self.spec.z_high
        clipped = (heights < lo) | (heights > hi)
        self.clipped = int(np.count_nonzero(clipped))
        if self.clipped:
            log.warning("terrain window: %d samples outside its heights [%g, %g] m clipped "
                        "(map_input.heights)", self.clipped, lo, hi)
        self.heights = np.clip(heights, lo, hi)
        self.write()

    # --- in a model ----------------------------------------------------------------------------
    def add_to(self, spec: mujoco.MjSpec, name: str) -> None:
        """The window into the planning model's specification: a height field ``name`` of the
        window's grid on a static body, with the floor's contact parameters; the floor plane
        lowered to :data:`FLOOR_DROP` below the window's lowest height."""
        floor = floor_plane(spec)
        rows, cols = self.shape
        lo, hi = self.spec.z_low, self.spec.z_high
        res = self.spec.resolution
        spec.add_hfield(name=name, nrow=rows, ncol=cols,
                        size=[(cols - 1) * res / 2, (rows - 1) * res / 2, hi - lo, BASE],
                        userdata=self._normalised().tolist())
        cx, cy = self.centre
        body = spec.worldbody.add_body(name=self.BODY, pos=[cx, cy, lo])
        geom = body.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_HFIELD, hfieldname=name)
        floor_contact(floor, geom)
        floor.pos = [floor.pos[0], floor.pos[1], lo - FLOOR_DROP]

    def bind(self, model: mujoco.MjModel, name: str) -> None:
        """Write to the field ``name`` and the window's body of the compiled ``model`` from
        now on."""
        self._model = model
        self._field = model.hfield(name).id
        self._body = model.body(self.BODY).id
        self.write()

    def write(self) -> None:
        """The window into the bound model (its samples and position); nothing may be
        stepping the model meanwhile."""
        m = self._model
        if m is None:
            return
        adr, n = m.hfield_adr[self._field], self.heights.size
        m.hfield_data[adr:adr + n] = self._normalised()
        cx, cy = self.centre
        m.body_pos[self._body] = (cx, cy, self.spec.z_low)

    def _normalised(self) -> np.ndarray:
        """The samples as MuJoCo holds them: (h − z_low)/(z_high − z_low), row-major."""
        lo, hi = self.spec.z_low, self.spec.z_high
        return ((self.heights - lo) / (hi - lo)).ravel()
