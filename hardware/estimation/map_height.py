"""The ground under the feet from a terrain map, for the leg Kalman filter's ``ground: map``.

With H the map (the planner's own, despeckled: :meth:`~mpc.tasks.terrain_map.HeightMap.despeckled`)
and a foot's estimated position f = (x, y, z), two readings:

    ground(f) = H(x, y)      with  flat(f) = max_S H − min_S H ≤ FLAT_TOLERANCE
    top(f)    = max_T H

over the stencils S = {(x, y), (x ± FLAT_REACH, y), (x, y ± FLAT_REACH)} and T, the same with
the foot's radius r for FLAT_REACH. ``ground`` is what a standing foot's height row measures:
p_i,z = ground(f_i) + foot_height, on flat ground only (a foot on or next to a riser, where the
bilinear map slopes between the two levels and a foot's edge may stand on either, tells
nothing sure about the height). ``top`` is what the kinematic contact cue compares the feet
over: the highest ground under the foot's sphere, so a foot on a nosing, its centre just past
the edge, counts as on the upper tread.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from mpc.tasks.terrain_map import HeightMap


class MapHeight:
    """The map ``terrain`` read under feet of radius ``foot_radius`` (m)."""

    #: m around a foot over which the map must be flat for its height to be measured: a
    #: sample's spacing on the shipped maps, so a foot within one cell of a riser is left out.
    FLAT_REACH: ClassVar[float] = 0.05
    #: m of relief within FLAT_REACH that still counts as flat: a real elevation map's noise
    #: after despeckling (1 cm RMS noise leaves a few millimetres), well under a step.
    FLAT_TOLERANCE: ClassVar[float] = 0.01

    def __init__(self, terrain: HeightMap, foot_radius: float):
        self.map = terrain
        self.reach = np.array([[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
        self.foot_radius = float(foot_radius)

    def _stencil(self, feet: np.ndarray, reach: float) -> np.ndarray:
        """H (n, 5) at each foot's stencil of half-width ``reach``."""
        points = feet[:, None, 0:2] + reach * self.reach[None]
        return self.map.height(points[..., 0], points[..., 1])

    def ground(self, feet: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(H under each foot (n,), whether the map is flat around it (n,)) for feet (n, 3)."""
        h = self._stencil(feet, self.FLAT_REACH)
        return h[:, 0], h.max(axis=1) - h.min(axis=1) <= self.FLAT_TOLERANCE

    def top(self, feet: np.ndarray) -> np.ndarray:
        """The highest ground under each foot's sphere (n,) for feet (n, 3)."""
        return self._stencil(feet, self.foot_radius).max(axis=1)
