"""``map_input.source.type: sim``: the simulated robot's onboard mapper.

A robot that maps its surroundings (a depth camera or a lidar feeding an elevation map) builds
its map in the frame it believes it is in, its state estimate's: what it sees at a distance
``d`` ahead it writes at the estimated base plus ``d``. The map therefore drifts with the
estimate, and a foothold chosen on it is right relative to the robot even where the estimate
is off relative to the world (a map given whole in the world's frame is not: the estimate's
drift, 2 % of the distance walked on the stairs, moves every foothold by as much).

This source is that mapper on a simulated plant (``plant.type: sim`` or ``sim_estimated``,
the fake robot's lockstep plant of ``scripts/eval_terrain.py``: any plant with
:meth:`~mpc.app.plants.plant_base.Plant.copy_state`):
every ``1 / rate`` s of plant time it scans the simulated world's ground (the robot itself
left out) on a grid of ``resolution`` around a point ``ahead`` of the estimated base, ``size``
long and wide, and sends the grid as a map in the estimate's frame. With the true base at
position ``b_t`` and yaw ``ψ_t`` and the estimate at ``b_e``, ``ψ_e``, the sample at ``p`` (the
estimate's frame) holds

    h(p) = g(b_t,xy + R(ψ_t - ψ_e) (p - b_e,xy)) + (b_e,z - b_t,z) + offset + n,

``g`` the world's ground height there, ``R`` the rotation about z, ``n`` Gaussian noise of
standard deviation ``noise`` drawn afresh for every sample of every scan (seeded), ``offset``
a constant error. The grid's samples lie on multiples of ``resolution``, as a map window's do
(:mod:`mpc.tasks.map_window`), so a window of that resolution takes them unchanged.

``g`` is the world's highest surface under a vertical ray. With ``highest`` (the default) a
sample holds the highest ground in its cell, the square of one sample's side around it (rays
at half a sample, the highest of the 3 x 3 around each sample), as an elevation map's cell
holds the highest point seen in it: a riser in a sample's cell is on the map from that
sample on, as the shipped map files have it when their risers lie on samples
(:mod:`mpc.app.plants.terrain`), and the map is below the world over at most half a sample
past a riser. Without it a sample is the ground at its point, and a riser between two
samples slopes across their cell: up to a whole sample past it the map lies below the upper
tread.

A scan is made when the run takes a map (between plans) and one is due, from the plant's
state at that moment; the map arrives at once. A real mapper's latency is left out: the map is
in the estimate's frame, so over a latency only the estimate's drift would move it (a few
millimetres in 50 ms at 2 % of 0.2 m/s), and the world is still. Loose slabs are scanned where
they lie at the scan.
"""

from __future__ import annotations

import math
from typing import ClassVar

import mujoco
import numpy as np
from scipy import ndimage

from mpc.app.maps.map_source import MapSource
from mpc.app.plants.plant_base import Plant
from mpc.tasks.task_base import base_yaw
from mpc.tasks.terrain_map import HeightMap

#: Height (m) above the scanned ground from which the rays are cast (all from one point
#: above the grid's centre: one :func:`mujoco.mj_multiRay` call). From 100 km a ray to the
#: corner of a 3 x 2 m grid leans 2e-5 rad: it meets ground 0.5 m up 9 µm from the point
#: below which it was aimed (on a 10° slope, 2 µm of height).
RAY_HEIGHT = 1.0e5
#: How far (m) the robot is moved down out of the scan (rays stop at the ground above it).
OUT_OF_VIEW = 1000.0


class SimMapper(MapSource):
    """The simulated plant's mapper (see the module docstring)."""

    name = "sim"

    #: Bounds of the options, read by mpc.app.schema.check_kwargs.
    RANGES: ClassVar[dict[str, dict[str, float]]] = {
        "rate": {"gt": 0.0, "max": 100.0},
        "size": {"gt": 0.0, "max": 20.0},
        "ahead": {"min": -10.0, "max": 10.0},
        "resolution": {"gt": 0.0, "max": 1.0},
        "noise": {"min": 0.0, "max": 0.5},
        "offset": {"min": -1.0, "max": 1.0},
        "seed": {"min": 0},
    }
    #: Rays per sample along x and y with ``highest`` (at half a sample).
    SUBSAMPLES: ClassVar[int] = 2

    def __init__(self, plant: Plant, rate: float = 10.0, size: list[float] | None = None,
                 ahead: float = 1.0, resolution: float = 0.05, noise: float = 0.0,
                 offset: float = 0.0, seed: int = 0, highest: bool = True):
        super().__init__()
        self.check_options({"size": size})
        self.plant = plant
        self.period = 1.0 / rate
        self.size = (2.4, 1.6) if size is None else (float(size[0]), float(size[1]))
        self.ahead, self.resolution = float(ahead), float(resolution)
        self.noise, self.offset = float(noise), float(offset)
        self.highest = bool(highest)
        self.rng = np.random.default_rng(seed)
        self.scans = 0
        self._next = -math.inf
        m = plant.model
        self._scan = mujoco.MjData(m)
        # everything but the robot and the goal marker (a mocap body) is ground
        goal = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "goal")
        self._exclude = goal if goal >= 0 else -1

    @classmethod
    def check_options(cls, options: dict) -> None:
        size = options.get("size")
        if size is not None and (not isinstance(size, (list, tuple)) or len(size) != 2):
            raise ValueError(f"map_input.source.size must be [length, width] (m), got {size!r}")

    @classmethod
    def check_plant(cls, plant_cls: type) -> None:
        if plant_cls.copy_state is Plant.copy_state:
            raise ValueError(f"map_input.source.type sim maps a simulated plant (plant.type sim "
                             f"or sim_estimated), not {plant_cls.__name__}")

    @classmethod
    def build(cls, options: dict, plant) -> SimMapper:
        sim = plant
        while hasattr(sim, "plant"):  # a wrapper (the safety layer's)
            sim = sim.plant
        cls.check_plant(type(sim))
        return cls(sim, **options)

    def take(self) -> tuple[HeightMap, float] | None:
        """A scan if one is due at the plant's time (see the module docstring), else None."""
        now = self.plant.read_state().time
        if now >= self._next - 1e-9:
            self.offer(self.scan())
            self._next = now + self.period
        return super().take()

    def scan(self) -> HeightMap:
        """The map of the plant's ground now, in the estimate's frame (module docstring)."""
        estimate = self.plant.read_state().qpos
        self.plant.copy_state(self._scan)
        truth = self._scan.qpos[:7].copy()
        self._scan.qpos[2] -= OUT_OF_VIEW
        mujoco.mj_kinematics(self.plant.model, self._scan)
        res = self.resolution
        turn = base_yaw(estimate)
        heading = np.array([math.cos(turn), math.sin(turn)])
        centre = estimate[:2] + self.ahead * heading
        length, width = self.size
        x0 = math.floor((centre[0] - length / 2) / res) * res
        y0 = math.floor((centre[1] - width / 2) / res) * res
        cols, rows = math.ceil(length / res) + 1, math.ceil(width / res) + 1
        # with highest: rays at half a sample from half a sample before the first to half
        # one past the last, then the highest of the 3 x 3 rays around each sample
        k = self.SUBSAMPLES if self.highest else 1
        pad = k // 2 if self.highest else 0
        step = res / k
        xs, ys = np.meshgrid(x0 - pad * step + step * np.arange(k * (cols - 1) + 1 + 2 * pad),
                             y0 - pad * step + step * np.arange(k * (rows - 1) + 1 + 2 * pad))
        dyaw = base_yaw(truth) - turn
        c, s = math.cos(dyaw), math.sin(dyaw)
        dx, dy = xs - estimate[0], ys - estimate[1]
        wx, wy = truth[0] + c * dx - s * dy, truth[1] + s * dx + c * dy
        ground = self._ground(wx.ravel(), wy.ravel()).reshape(xs.shape)
        if self.highest:
            ground = ndimage.maximum_filter(ground, size=k + 1, mode="nearest")
            ground = ground[pad:-pad:k, pad:-pad:k]
        heights = ground + (estimate[2] - truth[2]) + self.offset
        if self.noise > 0:
            heights = heights + self.noise * self.rng.standard_normal(heights.shape)
        self.scans += 1
        return HeightMap(heights, res, (x0, y0))

    def _ground(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The height of the scanned world's highest surface under each (x, y): rays from
        :data:`RAY_HEIGHT` above the points' centre, one :func:`mujoco.mj_multiRay` call."""
        n = len(x)
        top = np.array([x.mean(), y.mean(), RAY_HEIGHT])
        vec = np.stack((x - top[0], y - top[1], np.full(n, -top[2])), axis=1)
        vec /= np.linalg.norm(vec, axis=1, keepdims=True)
        dist = np.empty(n)
        geom = np.empty(n, dtype=np.int32)
        mujoco.mj_multiRay(self.plant.model, self._scan, top, vec.ravel(), None, True,
                           self._exclude, geom, dist, None, n, 2 * RAY_HEIGHT)
        if np.any(geom < 0):
            raise ValueError(f"map_input.source sim: {int(np.sum(geom < 0))} rays met no "
                             f"ground (a world without a floor under the scan)")
        return top[2] + dist * vec[:, 2]

    def describe(self) -> str:
        return f"the simulated mapper ({1.0 / self.period:g} Hz)"

    def stats(self) -> dict:
        return {**super().stats(), "scans": self.scans}

    def close(self) -> None:
        """Nothing to release."""
