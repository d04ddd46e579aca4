"""The ground under the feet from a terrain map, for the leg Kalman filter's ``ground: map``.

With H the map (the planner's own, despeckled: :meth:`~mpc.tasks.terrain_map.HeightMap.despeckled`)
and a foot's position f = (x, y, z) where the legs put it from the estimated base (p + k_i),
four readings over the stencils S = {(x, y), (x ± FLAT_REACH, y), (x, y ± FLAT_REACH)} and T
and L, the same with the foot's radius r and LOW_REACH for FLAT_REACH:

    ground = H(x, y)     flat = max_S H − min_S H ≤ FLAT_TOLERANCE
    top    = max_T H     low  = min_(S ∪ L) H

``ground`` is what a standing foot's height row measures, p_i,z = ground + foot_height, on flat
ground only (a foot on or next to a riser, where the bilinear map slopes between the two levels
and a foot's edge may stand on either, tells nothing sure about the height). The kinematic
contact cue takes each foot's height over ``top``, the highest ground under its sphere (a foot
on a nosing, its centre just past the edge, stands on the upper tread), and measures the feet
from the lowest of their heights over ``low``: the estimate's xy drifts against the map (6.5
cm by the A1's foot of its flight), and a foot on the floor read 1 cm past a riser would
otherwise be 8 cm under the ground and put every other foot 8 cm over it (L reaches past the
cell the bilinear map ramps over).
"""

from __future__ import annotations

from typing import ClassVar, NamedTuple

import numpy as np

from mpc.tasks.terrain_map import HeightMap


class Under(NamedTuple):
    """The map under feet (n,) each: the module docstring's four readings."""

    ground: np.ndarray
    flat: np.ndarray
    top: np.ndarray
    low: np.ndarray


class MapHeight:
    """The map ``terrain`` read under feet of radius ``foot_radius`` (m)."""

    #: m around a foot over which the map must be flat for its height to be measured: a
    #: sample's spacing on the shipped maps, so a foot within one cell of a riser is left out.
    FLAT_REACH: ClassVar[float] = 0.05
    #: m of relief within FLAT_REACH that still counts as flat: a real elevation map's noise
    #: after despeckling (1 cm RMS noise leaves a few millimetres), well under a step.
    FLAT_TOLERANCE: ClassVar[float] = 0.01
    #: m around a foot the lowest ground is looked for: the xy's drift against the map (6.5 cm
    #: by the A1's foot of its flight) and then some.
    LOW_REACH: ClassVar[float] = 0.1

    def __init__(self, terrain: HeightMap, foot_radius: float):
        self.map = terrain
        axes = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
        #: The points read around a foot: its centre, the stencils S, T and L.
        self.offsets = np.vstack([np.zeros((1, 2)), self.FLAT_REACH * axes,
                                  float(foot_radius) * axes, self.LOW_REACH * axes])

    def read(self, feet: np.ndarray) -> Under:
        """The readings under feet (n, 3); the map read once, at all their points."""
        points = feet[:, None, 0:2] + self.offsets[None]
        h = self.map.height(points[..., 0], points[..., 1])
        around = h[:, 0:5]
        return Under(ground=h[:, 0],
                     flat=around.max(axis=1) - around.min(axis=1) <= self.FLAT_TOLERANCE,
                     top=np.maximum(h[:, 0], h[:, 5:9].max(axis=1)),
                     low=np.minimum(around.min(axis=1), h[:, 9:].min(axis=1)))
