"""What several of the task tests build."""

from __future__ import annotations

import math

import numpy as np


def qpos_at(xy, yaw=0.0, nq=19) -> np.ndarray:
    """A free-floating base at ``xy`` turned ``yaw`` about z, every joint at 0."""
    q = np.zeros(nq)
    q[:2] = xy
    q[3:7] = (math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2))
    return q
