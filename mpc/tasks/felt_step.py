"""A step up met blind, given to the map mode as a map (``task.ground: felt``).

A blind robot learns of a step up when a swinging foot runs into its riser
(:mod:`mpc.tasks.riser`). From then on the step is planned on as the map mode plans on a step
it is given (:mod:`mpc.tasks.map_ground`: the swing lifted over the highest ground of its path,
footholds moved off the edge and kept for the swing, the base height from the feet, the map
registered to the standing feet, the floor plane under the map and raised onto a terrace).

**The riser's place** comes from the foot that met it, not from a sample boundary: the face is
at x = f_x + r (f the held foot's centre, r the foot's radius: the foot sphere touches the face),
placed in the model at :attr:`FeltStep.riser` = that + ``offset`` (``task.felt_offset``: a foot
pressed into a riser sinks into its soft contact, the Go2's by about 1.4 cm, so f_x + r lies
beyond the face). A height field slopes over a sample where a riser is vertical: a field whose
top began at the face had the held foot, standing at it, inside the slope, and one whose top
began a sample beyond (the map from touch of an earlier attempt) let the planner move a rising
foot forward into the world's riser. So the face is a box one sample deep
(:meth:`mpc.tasks.map_ground.MapGround.reveal`), the field's first raised sample a sample past
it (the grid's x shifted by under half a sample so that it lies exactly there) and its slope
inside the box; the targets read the step with its first raised sample at the face.

**The step's height** is not known blind: until a foot stands on top it is assumed
max(g + :attr:`FeltStep.RISE`, z_f + :attr:`FeltStep.MARGIN`) (g the ground the held foot lifted
off, z_f its ground point when held); the first foothold on top (its centre a foot radius past
the face) sets it. Before that, a foot over the top lower than it lowers it
(:meth:`FeltStep.lower`): a foot cannot be inside the step.

**Done with** (:meth:`FeltStep.done`): once every foot has stood on the top the step is
climbed; once a foot stands well beyond the riser off the top's level, what the foot met was
no step across the way (a loose slab, the foot of a ramp); once the top is found lower than
:attr:`FeltStep.MIN_RISE`, it is no step the fitted plane does not walk over. Each way the task
goes back to the plane fitted to its footholds and the next riser is met afresh
(:meth:`mpc.tasks.legged.LeggedTask._update_felt`), on level ground only
(:attr:`FeltStep.LEVEL`).

Limits: one riser at a time, perpendicular to the map's x axis (the travel of the goal-mode
configs, the riser met along +x), within the map's extent (:attr:`FeltStep.EXTENT` about the
start; :meth:`FeltStep.fits`: beyond it the task stays on the fitted plane); the ground before
it level, at the height of the ground the held foot lifted off.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from mpc.tasks.terrain_map import HeightMap


class FeltStep:
    """The map of a step up found by touch (see the module docstring)."""

    #: m between the map's samples.
    RESOLUTION: ClassVar[float] = 0.05
    #: The map's extent (m) about the start: x from, x to, half width along y.
    EXTENT: ClassVar[tuple[float, float, float]] = (-1.5, 5.0, 1.5)
    #: The rise (m) assumed over the ground the held foot lifted off, until a foot stands on top.
    RISE: ClassVar[float] = 0.08
    #: A riser's top is at least this (m) over the held foot's ground point.
    MARGIN: ClassVar[float] = 0.03
    #: A foot over the top found more than this (m) below the assumed top lowers it.
    BELOW: ClassVar[float] = 0.01
    #: The lowest top (m over the ground before the riser) a foot over it can lower it to.
    LOWEST: ClassVar[float] = 0.02
    #: The field's elevation range (m): the highest top it can be rewritten to.
    SPAN: ClassVar[float] = 0.4
    #: A foot standing more than :attr:`OFF_REACH` (m) beyond the riser and more than
    #: :attr:`OFF_LEVEL` (m) above or below the measured top shows the ground there is not the
    #: step's top (:meth:`done`). At 3 cm, and from the face on, the estimate's error on the
    #: Go2's 8 cm step took a front foot on the top for ground off its level before the hind
    #: feet were up.
    OFF_LEVEL: ClassVar[float] = 0.04
    OFF_REACH: ClassVar[float] = 0.1
    #: A step whose top is found less than this (m) over the ground before it is none the
    #: fitted plane does not walk over (:meth:`done`): a foot that touched down early on the
    #: lower level of a step down looked held back to the A1, and the step met there was
    #: lowered to :attr:`LOWEST` by the feet beyond it.
    MIN_RISE: ClassVar[float] = 0.03
    #: The steepest fitted ground (its gradient's norm, tan of the tilt) on which a held foot
    #: is taken for a riser: the step's map is level before and on top, and on a 15° ramp
    #: the A1's hind foot, held at the ramp's foot, made one of the ramp; the front feet
    #: beyond it confirmed a top 9 cm up, level, and the robot was thrown back down.
    LEVEL: ClassVar[float] = 0.1
    #: How far (m) a riser's face must lie inside the map's extent (:meth:`fits`), twice
    #: that before its far end (the top).
    INSIDE: ClassVar[float] = 0.5

    def __init__(self, foot_radius: float, offset: float = 0.0):
        """``foot_radius`` (m): the foot sphere's; ``offset`` (m): added to the face's x where
        the riser stands in the model (:attr:`riser`)."""
        self.radius = float(foot_radius)
        self.offset = float(offset)
        x0, x1, w = self.EXTENT
        res = self.RESOLUTION
        self.cols = round((x1 - x0) / res) + 1
        self.rows = round(2 * w / res) + 1
        self.origin = (x0, -w)
        #: The riser's face (x, m), the ground before it and its top (m, the map's frame),
        #: None until met.
        self.face: float | None = None
        self.ground = 0.0
        self.top = 0.0
        #: Whether a foot has stood on top (the top measured, not assumed).
        self.confirmed = False
        #: Whether each foot has stood on the top since the top was measured.
        self._on_top = np.zeros(0, bool)

    def flat(self) -> HeightMap:
        """The map before any riser: the level ground at 0."""
        return HeightMap(np.zeros((self.rows, self.cols)), self.RESOLUTION, self.origin)

    def meet(self, foot: np.ndarray, lifted: float) -> bool:
        """A foot held back at a riser: ``foot`` its ground point (x, y, z; the map's frame),
        ``lifted`` the ground (z) where it lifted off. Returns whether the map changed (the
        first riser only)."""
        if self.face is not None:
            return False
        self.face = float(foot[0]) + self.radius
        self.ground = float(lifted)
        self.top = max(self.ground + self.RISE, float(foot[2]) + self.MARGIN)
        return True

    def fits(self, foot: np.ndarray) -> bool:
        """Whether a riser met by a foot at ``foot`` (x, y; the map's frame) lies within the
        map's extent (:attr:`EXTENT` about the start), :attr:`INSIDE` from its edges: beyond
        it the step could not be written into the map (a riser's box with no top behind it),
        and the task stays on the fitted plane."""
        x0, x1, w = self.EXTENT
        face = float(foot[0]) + self.radius
        return (x0 + self.INSIDE <= face <= x1 - 2 * self.INSIDE
                and abs(float(foot[1])) <= w - self.INSIDE)

    def confirm(self, points: np.ndarray, standing: np.ndarray) -> bool:
        """The first foothold on top (a standing foot's ground point a foot radius past the
        face, ``points`` in the map's frame) sets the top; returns whether the map changed."""
        if self.face is None or self.confirmed:
            return False
        on = np.asarray(standing, bool) & (points[:, 0] >= self.face + self.radius)
        on &= points[:, 2] > self.ground + 0.5 * (self.top - self.ground)
        if not on.any():
            return False
        self.top = float(np.mean(points[on, 2]))
        self.confirmed = True
        return True

    def lower(self, points: np.ndarray, stance: np.ndarray) -> bool:
        """Before a foot has stood on top, a foot in its planned stance over it (its centre
        past the riser in the model) lower than the assumed top shows the step is lower: the
        top comes down to that foot's ground point (``points`` in the map's frame; ``stance``
        which feet are in their planned stance), never below :attr:`LOWEST` over the ground.
        A foot cannot be inside the step, and in the planning model it would be: a Go2 foot
        that came down on a 5 cm step assumed 8 cm high was 3 cm inside the model's riser,
        whose contact threw the plan (and the robot) up. A swinging foot there is not taken:
        pressed into a 10 cm riser's face (soft contact) the Go2's held foot stood as far past
        the model's riser, 4 cm under the top. Returns whether the map changed."""
        if self.face is None or self.confirmed:
            return False
        over = np.asarray(stance, bool) & (points[:, 0] >= self.riser)
        low = over & (points[:, 2] < self.top - self.BELOW)
        if not low.any():
            return False
        self.top = max(float(points[low, 2].min()), self.ground + self.LOWEST)
        return True

    def done(self, points: np.ndarray, standing: np.ndarray) -> bool:
        """Whether the step's map is done with: its top found lower than :attr:`MIN_RISE`
        over the ground before it, or, once the top is measured, every foot has stood on the
        top (the step is climbed: the plane fitted to the feet is the ground again), or a
        foot stands beyond the riser more than :attr:`OFF_LEVEL` off the top's
        level, :attr:`OFF_REACH` or more beyond it (``points`` the feet's ground points in the
        map's frame, ``standing`` which stand): what the foot met was no step across the way
        (a slab, the foot of a ramp)."""
        if self.face is not None and self.top - self.ground < self.MIN_RISE:
            return True
        if not self.confirmed:
            return False
        standing = np.asarray(standing, bool)
        beyond = standing & (points[:, 0] >= self.face + self.radius)
        far = standing & (points[:, 0] >= self.face + self.radius + self.OFF_REACH)
        if np.any(np.abs(points[far, 2] - self.top) > self.OFF_LEVEL):
            return True
        if len(self._on_top) != len(points):
            self._on_top = np.zeros(len(points), bool)
        self._on_top |= beyond
        return bool(self._on_top.all())

    @property
    def riser(self) -> float | None:
        """The riser's face in the model (x, m): the face plus the offset; None before one."""
        return None if self.face is None else self.face + self.offset

    def grid(self) -> HeightMap:
        """The map: the level ground before the riser (:attr:`riser`), the top from the
        first sample a sample past it (the field's slope behind the riser's box,
        :meth:`mpc.tasks.map_ground.MapGround.reveal`), the samples' x shifted by less than
        half a sample so that that sample lies exactly there."""
        if self.face is None:
            return self.flat()
        res = self.RESOLUTION
        at = self.riser + res
        k = int(np.ceil((at - self.origin[0]) / res - 0.5))  # nearest column
        shift = at - (self.origin[0] + k * res)
        h = np.zeros((self.rows, self.cols))  # the level the map is registered on
        h[:, max(k, 0):] = self.top
        return HeightMap(h, res, (self.origin[0] + shift, self.origin[1]))
