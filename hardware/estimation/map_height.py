"""The ground under the feet from a terrain map, for the leg Kalman filter's ``ground: map``.

With H the map (the planner's own, despeckled: :meth:`~mpc.tasks.terrain_map.HeightMap.despeckled`)
and a foot's position f = (x, y, z) where the legs put it from the estimated base (p + k_i), two
readings:

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
        axes = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
        #: The points read around a foot: its centre, the flat stencil S, the sphere's T.
        self.offsets = np.vstack([np.zeros((1, 2)), self.FLAT_REACH * axes,
                                  float(foot_radius) * axes])

    def read(self, feet: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For feet (n, 3): the ground under each (n,), whether the map is flat around it
        (n,) and the highest ground under its sphere (n,); the map read once, at all points."""
        points = feet[:, None, 0:2] + self.offsets[None]
        h = self.map.height(points[..., 0], points[..., 1])
        flat = h[:, 0:5]
        return h[:, 0], flat.max(axis=1) - flat.min(axis=1) <= self.FLAT_TOLERANCE, \
            np.maximum(h[:, 0], h[:, 5:].max(axis=1))
