"""Swing heights on a map: what ground a swinging foot is lifted over, planned once per plan
from the gait's schedule and the map (``task.ground: map``, :mod:`mpc.tasks.map_ground`).

Each swing of a foot within the lookahead has a lift-off point a (where the foot stands, or
stood, when it lifts) and a touchdown point b (its predicted foothold, moved off an edge where
the task moves footholds). From the map H and its clearance map H_c (the highest ground within
``map_clearance`` of a point) the swing gets three heights:

    h₀ = H(a)    the ground it leaves
    h₁ = H(b)    the ground it lands on
    hₘ = max(h₀, h₁, max of H along the path a → b, max of H_c along it away from its ends)
                 the highest ground it passes over (MapGround.highest_along)

and its ground target over the swing's phase s ∈ [0, 1] (0 at lift-off, 1 at touchdown) is

    B(s) = min(h₀ + (hₘ − h₀) S(s / r),  h₁ + (hₘ − h₁) S((1 − s) / r))

with S the smoothstep 3x² − 2x³ on [0, 1] (0 below, 1 above) and r the rise (the task's
``map_rise``, :data:`RISE` by default): the foot
is led up to hₘ in the first r of the swing and stays there until the last r, where it comes
down to the ground it lands on (on a step up it stays at hₘ = h₁). The gait term asks the foot
for f_z − (ρ_foot + B(s) + step(t)). The target depends on time alone, not on where the foot
is: a target read under the foot (H_c(f)) rose only once the foot was near the riser, so the
planner, whose horizon covers less than a swing, moved the foot forward first, met the riser
low, and held a foot that was to land just short of the riser hovering over the clearance
map's skirt.

Where a config weighs the ``path`` term (:meth:`mpc.tasks.legged.LeggedTask.stance_terms`),
the swing also has a horizontal target, the point on the straight path from a to b

    s_xy(s) = a + (b − a) P(s),  P(s) = S((s − u) / (1 − u − d))

with u = r where hₘ is above h₀ (the foot first rises to hₘ) and d = r where hₘ is above h₁
(it comes down over b at the end), each 0 otherwise: lift, move over, set down
(:func:`progress`, :meth:`SwingPlan.path`). A swinging foot's xy has no other cost of its own
(the gait term is its height): on the stairs feet met risers, hovered and came down short on
the nosing, or swung on into the next riser.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

#: Fraction of a swing over which the foot rises to (and, at its end, comes down from) hₘ,
#: by default: early, since a foot that lifts off just short of a riser meets it within a few
#: centimetres (0.3 was tried: with the true state the Go2 fell on the step at 2.5 s, 0.68 m,
#: against 2.7 s, 0.85 m; 0.25 on the Go2's flight, deploy path: 3 of its first 6 runs fell
#: before the first riser, against 1 of 10). The price is speed: on the A1's 8 cm flight,
#: swings of 0.36 s, the foot is asked up 8 cm in 54 ms and its knee passed the bridge's
#: 40 rad/s at a lift-off; the A1's stairs config rises over 0.25 (``task.map_rise``).
RISE = 0.15
#: How far (m) hₘ must stand above a swing's end for its path to be held back there
#: (:func:`progress`).
CLEAR = 0.01
#: How far (m) a foot must stand above the ground under its hip to have a step down pending
#: (:func:`step_down_pending`).
DROP = 0.05


@dataclass
class SwingPlan:
    """Each foot's swings within the lookahead, (nfeet, K) arrays, NaN where a foot has fewer
    than K: lift-off and touchdown times (s) and the heights h₀, hₘ, h₁ (m)."""

    liftoff: np.ndarray
    touchdown: np.ndarray
    start: np.ndarray
    top: np.ndarray
    land: np.ndarray
    #: Slack (s) on the window's ends: the schedule was sampled on a grid this fine.
    slack: float = 0.0
    #: Each swing's foothold (nfeet, K, 2: xy, NaN where none); None: not planned.
    land_xy: np.ndarray | None = None
    #: Where each foot stands, or stood when its current swing began: xy (nfeet, 2) and
    #: the ground under it (nfeet); None: not planned.
    stood_xy: np.ndarray | None = None
    stood: np.ndarray | None = None
    #: Each swing's lift-off point (nfeet, K, 2: xy, NaN where none); None: not planned.
    lift_xy: np.ndarray | None = None
    #: Fraction r of a swing over which its foot rises to hₘ and comes down (module docstring).
    rise: float = RISE

    def _window(self, t: np.ndarray, k: int) -> np.ndarray:
        """Whether times ``t`` (..., 1) fall in each foot's k-th swing, lift-off to touchdown
        with :attr:`slack` on either end (..., nfeet)."""
        return ((t >= self.liftoff[:, k] - self.slack)
                & (t <= self.touchdown[:, k] + self.slack))

    def ground(self, time: np.ndarray, phase: np.ndarray) -> np.ndarray:
        """B (..., nfeet) at times (...) with each foot's swing phase ``phase`` (..., nfeet;
        NaN in stance): the profile of the swing whose window holds the time, 0 in stance."""
        t = np.asarray(time)[..., None]
        out = np.zeros(np.broadcast_shapes(t.shape, np.shape(phase)))
        s = np.nan_to_num(np.asarray(phase, dtype=float), nan=-1.0)
        for k in range(self.liftoff.shape[1]):
            inside = self._window(t, k) & (s >= 0.0)
            value = profile(np.clip(s, 0.0, 1.0), self.start[:, k], self.top[:, k],
                            self.land[:, k], self.rise)
            out = np.where(inside, value, out)
        return out

    def counted(self, time: np.ndarray, phase: np.ndarray) -> np.ndarray:
        """The ground (..., nfeet) a swinging foot counts as standing on in the base's height
        row (``task.height_swing: ground``) at times (...) with swing phase ``phase`` (...,
        nfeet; NaN in stance), 0 in stance. Up (h₁ ≥ h₀) the chord h₀ + (h₁ − h₀) s: the
        foot is led up early (over the first ``rise`` of the swing), and counted where it is
        the base's target rose with it, a quarter of a 19 cm rise within 0.1 s on the Go1's
        flight, and the plans lifted the base off its feet. Down the profile B(s), held at
        h₀ until the swing comes down: the base does not sink while the foot is still over
        the upper tread."""
        t = np.asarray(time)[..., None]
        out = np.zeros(np.broadcast_shapes(t.shape, np.shape(phase)))
        s = np.clip(np.nan_to_num(np.asarray(phase, dtype=float), nan=-1.0), -1.0, 1.0)
        for k in range(self.liftoff.shape[1]):
            inside = self._window(t, k) & (s >= 0.0)
            h0, h1 = self.start[:, k], self.land[:, k]
            value = np.where(h1 < h0, profile(np.clip(s, 0.0, 1.0), h0, self.top[:, k], h1,
                                              self.rise),
                             h0 + (h1 - h0) * np.clip(s, 0.0, 1.0))
            out = np.where(inside, value, out)
        return out

    def anchor(self, time: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where each foot stands in its planned stance at times (...): xy (..., nfeet, 2)
        and the ground under it (..., nfeet): where it stands (:attr:`stood_xy`,
        :attr:`stood`) until its first planned touchdown, then the foothold and h₁ of the
        last swing that touched down by then (a touchdown counts from ``slack`` before it,
        the schedule's grid). Time alone: the targets of the stance and hold rows."""
        t = np.asarray(time)[..., None]
        nfeet = self.liftoff.shape[0]
        shape = np.broadcast_shapes(t.shape, (nfeet,))
        z = np.broadcast_to(self.stood, shape).copy()
        xy = np.broadcast_to(self.stood_xy, (*shape, 2)).copy()
        for k in range(self.liftoff.shape[1]):
            down = np.isfinite(self.land[:, k]) & (t >= self.touchdown[:, k] - self.slack)
            z = np.where(down, self.land[:, k], z)
            xy = np.where(down[..., None], self.land_xy[:, k], xy)
        return xy, z

    def landing(self, time: np.ndarray) -> np.ndarray:
        """The foothold (..., nfeet, 2) of the swing whose window holds each time (...), NaN
        where a foot is in no planned swing then (or without :attr:`land_xy`)."""
        t = np.asarray(time)[..., None]
        nfeet = self.liftoff.shape[0]
        out = np.full((*np.broadcast_shapes(t.shape, (nfeet,)), 2), np.nan)
        if self.land_xy is None:
            return out
        for k in range(self.liftoff.shape[1]):
            inside = self._window(t, k)
            out = np.where(inside[..., None], self.land_xy[:, k], out)
        return out


    def path(self, time: np.ndarray, phase: np.ndarray) -> np.ndarray:
        """The swing path's point (..., nfeet, 2) at times (...) with each foot's swing phase
        ``phase`` (..., nfeet; NaN in stance): a + (b − a) P(s) of the swing whose window
        holds the time (:func:`progress`), NaN where a foot is in no planned swing then (or
        without :attr:`lift_xy` and :attr:`land_xy`)."""
        t = np.asarray(time)[..., None]
        s = np.asarray(phase, dtype=float)
        out = np.full((*np.broadcast_shapes(t.shape, s.shape), 2), np.nan)
        if self.lift_xy is None or self.land_xy is None:
            return out
        for k in range(self.liftoff.shape[1]):
            inside = self._window(t, k) & np.isfinite(s)
            p = progress(np.nan_to_num(s), self.start[:, k], self.top[:, k], self.land[:, k],
                         self.rise)
            a, b = self.lift_xy[:, k], self.land_xy[:, k]
            out = np.where(inside[..., None], a + (b - a) * p[..., None], out)
        return out


def progress(s: np.ndarray, start, top, land, rise: float = RISE) -> np.ndarray:
    """P(s): how far along its path from lift-off a to foothold b a swing's foot is asked to
    be at phase s, held back while its ground target B(s) rises to the highest ground hₘ
    (the first ``rise`` of the swing, where hₘ is above the ground it leaves h₀) and
    ahead of it while B comes down (the last ``rise``, where hₘ is above h₁): lift, move
    over, set down. Between, a smoothstep from 0 to 1; on the level, over the whole swing."""
    up = np.where(np.asarray(top) > np.asarray(start) + CLEAR, rise, 0.0)
    down = np.where(np.asarray(top) > np.asarray(land) + CLEAR, rise, 0.0)
    return smoothstep((np.asarray(s) - up) / (1.0 - up - down))


def smoothstep(x: np.ndarray) -> np.ndarray:
    """3x² − 2x³ on [0, 1], 0 below and 1 above."""
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def profile(s: np.ndarray, start, top, land, rise: float = RISE) -> np.ndarray:
    """B(s) of the module docstring, r = ``rise``."""
    up = start + (top - start) * smoothstep(np.asarray(s) / rise)
    down = land + (top - land) * smoothstep((1.0 - np.asarray(s)) / rise)
    return np.minimum(up, down)


def path_points(points: np.ndarray, spacing: float) -> np.ndarray:
    """Points (n, 2) along the polyline through ``points`` (k, 2), at most ``spacing`` apart,
    the corners included."""
    points = np.asarray(points, dtype=float)
    out = [points[:1]]
    for a, b in itertools.pairwise(points):
        n = max(1, int(np.ceil(np.linalg.norm(b - a) / spacing)))
        f = np.arange(1, n + 1)[:, None] / n
        out.append(a + f * (b - a))
    return np.concatenate(out)


def step_down_pending(feet: np.ndarray, hips: np.ndarray, heading: np.ndarray, height,
                      lag: float, drop: float = DROP) -> bool:
    """Whether a foot at ``feet`` (n, 2) stands more than ``drop`` (m) above the ground
    under its hip (``hips``, n, 2; ``height(x, y)`` the map) and more than ``lag`` (m) behind
    the hip along ``heading``: the hips have walked past a foot that has not stepped down."""
    feet, hips = np.asarray(feet, dtype=float), np.asarray(hips, dtype=float)
    behind = (hips - feet) @ np.asarray(heading, dtype=float)
    above = (np.asarray(height(feet[:, 0], feet[:, 1]))
             - np.asarray(height(hips[:, 0], hips[:, 1])))
    return bool(np.any((behind > lag) & (above > drop)))
