"""A riser met blind: a swinging foot held back in the middle of its swing.

A blind robot learns of a step up when a swinging foot runs into its riser: the foot, which
moves forward at about twice the body's speed in an ordinary swing, stops. (The MIT Cheetah 3's
swing legs react to that resistance.) :class:`HeldFeet` finds such feet; what is learnt from
them (the step written into the planning model) is :mod:`mpc.tasks.felt_step`'s.

**The rule**: while the body moves along the direction of travel u faster than
:data:`BODY_SPEED`, a foot in the middle of its planned swing (its swing phase within
:data:`WINDOW`) that moves along u slower than :data:`RATIO` of the body's speed, on end for
:data:`HOLD_TIME`. Without the body's speed every foot of a robot starting to walk, its body
still at rest, looked held back; without the time, feet slowing for a plan in ordinary walking
did (the Go2 marked risers before a step down).
"""

from __future__ import annotations

import numpy as np

#: Swing phase (0 at lift-off, 1 at touchdown) in which a foot can be found held back.
WINDOW = (0.3, 0.8)
#: How long (s) a foot must be held back on end within its swing.
HOLD_TIME = 0.06
#: The body must move along the travel faster than this (m/s) ...
BODY_SPEED = 0.1
#: ... and a swinging foot slower than this fraction of its speed is held back.
RATIO = 0.3


def held_back(phase: np.ndarray, velocity: np.ndarray, body: np.ndarray,
              u: np.ndarray) -> np.ndarray:
    """Feet held back now (nfeet,): in the middle of their swing (``phase``, NaN in stance)
    and moving along the travel ``u`` (a unit xy vector) slower than :data:`RATIO` of the body
    while the body moves faster than :data:`BODY_SPEED` (``velocity`` (nfeet, 3) the feet's
    world velocities, ``body`` the base's)."""
    speed = float(np.asarray(body)[:2] @ u)
    if speed <= BODY_SPEED:
        return np.zeros(len(phase), bool)
    with np.errstate(invalid="ignore"):
        mid = (phase >= WINDOW[0]) & (phase <= WINDOW[1])
    return mid & (np.asarray(velocity)[:, :2] @ u < RATIO * speed)


class HeldFeet:
    """Which feet have been held back on end for :data:`HOLD_TIME` (see the module
    docstring)."""

    def __init__(self, nfeet: int):
        self._since = np.full(nfeet, np.nan)

    def update(self, time: float, now: np.ndarray) -> np.ndarray:
        """Of the feet held back ``now`` (:func:`held_back`), those held back on end since at
        least :data:`HOLD_TIME` before ``time``."""
        self._since = np.where(now, np.where(np.isnan(self._since), time, self._since), np.nan)
        with np.errstate(invalid="ignore"):
            return now & (time - self._since >= HOLD_TIME - 1e-9)
