"""The ground from a terrain map (``task.ground: map``): the height-dependent targets of a legged
task read the map (:mod:`mpc.tasks.terrain_map`) instead of a plane.

With H the map, filtered copies of it serve the terms (ρ the foot sites' resting height,
h the standing height, step(t) the gait's lift, p the base position, f a foot's position, S
the support feet, δ the map's registration :attr:`MapGround.shift`):

    gait    per foot in swing: f_z − (B(t) + ρ + step(t))
            per foot in its next stance (``edge`` > 0, its foothold moved): d · (f − f*)
    height  p_z − mean_S(f_z) − h − (H_b(p_x, p_y) − mean_S H_b(f_x, f_y))

* B(t), the ground each swing is lifted over (:mod:`mpc.tasks.map_swing`): planned once per
  plan from the gait's schedule, from the ground the foot lifts off to the highest ground
  along its path to its predicted foothold (the clearance map's, below) and down to the
  ground it lands on, all raised by δ; it depends on time alone.
* H_c, the **clearance** map: the highest ground within ``clearance`` (m) of each point, smoothed
  with a Gaussian of half that: read along each swing's path, a foot that passes within
  ``clearance`` of a riser is lifted over its top.
* E, the **edge** map (``task.map_edge`` > 0): the map's relief within ``edge`` of each point
  (the highest less the lowest ground), smoothed with a Gaussian of half that: zero on flat
  ground, the rise near a riser on either side of it. **Footholds** (the foothold adaptation
  of perceptive MPCs): once per plan each foot's next foothold is predicted (its home
  position under the base where the gait sets it down, plus half the stance's travel at the
  base's velocity: Raibert's heuristic); if the edge map there exceeds
  :attr:`MapGround.EDGE_TOLERANCE` the foothold is moved along the travel d to the nearest
  flat point f* (:meth:`MapGround.safe_foothold`),
  and over that stance the foot's gait row is d · (f − f*): the planner sets it down short of
  the riser or well onto the tread. With ``drop`` (``task.map_drop``) a foothold within that
  reach of a drop ahead along d (lower ground by more than the tolerance) is moved too: the
  estimate's position drifts against a map given whole, on the way down behind the truth.
  A foothold is also kept :attr:`MapGround.FOOT_GAP` back from a foot that stands ahead of it
  when it lands: moved forward off a nosing, a hind foot came down on the front foot of its side.
  (A cost E(f) on the stance feet instead stalled the Go2 in front of the first riser: its
  bump between the two sides is a local minimum.) A foot
  set down on or against a riser is what trapped the feet: on the field's sloped riser it
  slides in and sinks.
* H_b, the **body** map: the map smoothed over :attr:`BODY_SIGMA`, about half a body length:
  under the base a flight of stairs is its slope, so the base rises with the flight rather than
  step by step. The height is measured from the support feet, as on a plane, corrected by how
  much higher the body map is under the base than under the feet: the estimator's absolute
  height (which drifts) cancels out.
* δ, the **registration** (:meth:`MapGround.register`): the map is raised to meet the feet
  that stand, as the estimator sees them, and the planning model's map with it.

H itself is the map as given or received, despeckled
(:meth:`~mpc.tasks.terrain_map.HeightMap.despeckled`): an elevation map's noise made the edge
map flag the middle of every tread.

H_b is a function of the sensors, not affine: the task's residual subtracts it, and its
Jacobian adds −∂H_b/∂x, −∂H_b/∂y in the columns of the base's x and y and 1/|S| of theirs in
each support foot's, exactly (the bilinear interpolation's derivative,
:meth:`~mpc.tasks.terrain_map.HeightMap.height_and_gradient`); the foothold row is affine in
f (d and f* fixed for the plan). The plane the other terms read (the upright target, the
fall check) is the body map's tangent plane under the base, updated once per plan
(:meth:`plane_under`).
The planning model stands on the map itself (a MuJoCo height field, added by
:meth:`add_to`): its contacts are the map's, which the analytic derivatives cover (unless the
task gives each foot a floor of its own, ``map_contacts: floors``: a foot pressed 2.5 cm into
the field's prisms is pushed sideways by them and not up). Only the
feet touch it (:meth:`feet_only`): a shin along a riser is a capsule parallel to a face of
the field, a line contact that has no single contact point to differentiate (the analytic
backend falls back to finite differences there), and the planner places feet, which the
swing targets keep the legs above the steps with; the simulated robot keeps every contact.
The field hangs on a static body (:data:`FIELD_BODY`, or the window's) that :meth:`place`
raises by δ before each plan. A map given whole has the floor plane on a static body of its own
(:data:`MAP_BODY`, raised with it) at its lowest level and the field's samples there
:attr:`MapGround.SINK` under it: a foot sphere on a height field touches one prism per cell it
enters (2-7 contacts, some through the prisms' side walls) where on a plane it has one, and
with the estimator in the loop the Go2 fell on the level floor in 3 of 5 runs planning on a
flat field, in none on the plane. On a **terrace** (the map within
:attr:`MapGround.TERRACE_REACH` of the base all one level above the lowest: the top of a step,
a landing; :meth:`MapGround.find_terrace`, once per plan) the plane is raised to that level and
the field lowered out from under it: the Go1 walking with its estimator on a flat field fell or
tripped in 3 of 4 runs and stalled in the fourth, and fell or stalled on top of the 8 cm step.

**A map that changes while the robot runs** (:mod:`mpc.app.maps`): with a window
(:mod:`mpc.tasks.map_window`) the planning model holds a local window of fixed size moving with
the robot, and H, H_c and H_b are the window's (recomputed when it changes,
:meth:`MapGround.follow`, between plans).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import mujoco
import numpy as np
from numba import njit

from mpc.tasks.ground import GroundPlane, foot_geoms, pose
from mpc.tasks.map_window import MapWindow, WindowSpec
from mpc.tasks.terrain_map import HeightMap, MapError, _bilinear, floor_contact, floor_plane, load

#: The map geom's name in the planning model.
MAP_GEOM = "terrain_map"
#: The static body holding the floor plane under a map given whole (a window has its own body
#: and no plane), moved by the registration and onto a terrace (:meth:`MapGround.place`).
MAP_BODY = "terrain_map_body"
#: The static body holding the height field of a map given whole, moved by the registration and
#: out from under a terrace's plane.
FIELD_BODY = "terrain_field_body"
#: The contype bit of the map, in the conaffinity of the feet alone.
MAP_BIT = 1 << 29
#: The box standing in for a revealed riser's face (``riser=True``) and its static body.
RISER_GEOM = "terrain_riser"
RISER_BODY = "terrain_riser_body"
#: Where the riser's box waits before a riser is revealed (m, x).
RISER_PARKED = -100.0


class MapGround:
    """The map a task plans on and the targets it gives (see the module docstring)."""

    #: Standard deviation (m) of the body map's smoothing.
    BODY_SIGMA: ClassVar[float] = 0.15
    #: The most (m) a swing climbs from the ground it lifts off (:meth:`within_climb`).
    CLIMB: ClassVar[float] = 0.15
    #: How far back (m) a foothold may be moved to climb no more than :attr:`CLIMB`.
    CLIMB_REACH: ClassVar[float] = 0.4
    #: Relief (m) of the edge map up to which a foothold counts as flat.
    EDGE_TOLERANCE: ClassVar[float] = 0.02
    #: How far (m) a foothold may be moved off an edge.
    SHIFT_REACH: ClassVar[float] = 0.2
    #: Least distance (m, in xy) from a foothold to a foot that stands there when it lands
    #: (:meth:`safe_foothold`'s ``occupied``): a hind foot moved forward off the landing's
    #: nosing came down on the front foot of its side, which stood on the tread below until
    #: that touchdown (the Go2 going down, its calf slanting back over the foot); both slid
    #: off the tread under the robot's weight.
    FOOT_GAP: ClassVar[float] = 0.12
    #: Fraction of the standing feet's mean offset from the map taken into :attr:`shift` per
    #: plan.
    REGISTER_GAIN: ClassVar[float] = 0.3
    #: Steepest map (|∇H|) under a standing foot that counts for the registration: a foot on a
    #: riser's cell says nothing about the tread's height.
    REGISTER_SLOPE: ClassVar[float] = 0.2
    #: m the field's samples at the map's lowest level lie under the floor plane (a map given
    #: whole): a foot there touches the plane alone. More than a loaded foot sinks into the
    #: plane: the Go2's planning model stands 13 mm deep at rest (its foot radius 22 mm less
    #: ρ 9 mm) and 15 mm deep walking, so at 0.01 each foot on the floor met the field too, 2-6
    #: contacts besides the plane's, and a step of the model took 1.6x as long.
    SINK: ClassVar[float] = 0.03
    #: Half the side (m) of the square around the base that must be one level of the map for
    #: the plane to stand in for the field there (:meth:`find_terrace`): the feet, their next
    #: footholds and the horizon's travel.
    TERRACE_REACH: ClassVar[float] = 0.5
    #: m the field's highest sample lies under the map's lowest level while a terrace's plane
    #: stands in for it.
    FIELD_DROP: ClassVar[float] = 0.5
    #: Half the height (m) of a riser's box: its top at the step's, its bottom far below.
    RISER_HALF_HEIGHT: ClassVar[float] = 0.3
    #: m the field lies under a plane that stands in for the map (:meth:`stand_in`).
    FIELD_PARKED: ClassVar[float] = 10.0

    def __init__(self, terrain: HeightMap | str | Path | None, clearance: float = 0.05,
                 window: WindowSpec | None = None, edge: float = 0.0, span: float = 0.0,
                 riser: bool = False, shift_back: bool = True, drop: float = 0.0):
        """``terrain``: a map or the path of a map file (:func:`mpc.tasks.terrain_map.load`);
        ``clearance`` (m): the reach of the clearance map; ``window``: plan on a local window
        of maps received while running (``terrain``, if given, its first contents; None:
        the floor); ``edge`` (m): the reach of the edge map (0: none); ``span`` (m): a map given
        whole, the field's elevation range if more than the map's relief (room for
        :meth:`reveal`); ``riser``: a map given whole, a box one sample deep that
        :meth:`reveal` stands at a riser's face (a height field slopes over a sample where a
        riser's face is vertical); ``shift_back``: footholds may be moved back off an edge
        (else forward only, :meth:`safe_foothold`); ``drop`` (m; 0: none): a foothold that
        much or less short of a drop ahead along the travel is moved off it too
        (:meth:`safe_foothold`)."""
        if isinstance(terrain, (str, Path)):
            terrain = load(terrain)
        if not isinstance(terrain, HeightMap) and not (terrain is None and window is not None):
            raise MapError(f"a map is a HeightMap or a file, got {type(terrain).__name__}")
        if terrain is not None:
            terrain = terrain.despeckled()  # a mapper's map: its noise out (despeckled)
        self.clearance = float(clearance)
        self.edge = float(edge)
        self.drop = float(drop)
        #: m the map is raised by to meet the standing feet (:meth:`register`).
        self.shift = 0.0
        #: The level (m, on the map) of the terrace the robot is on, or None (:meth:`find_terrace`).
        self.terrace: float | None = None
        self._body = self._field_body = self._field = -1
        self.span = float(span)
        self.riser = bool(riser)
        self.shift_back = bool(shift_back)
        self._riser_body = -1
        #: The riser's box centre (x, m) and top (m, the map's frame), or None.
        self.riser_at: tuple[float, float] | None = None
        #: A map given whole: the compiled field's lowest level and elevation range.
        self._field_lo = self._field_span = 0.0
        self._model: mujoco.MjModel | None = None
        #: The moving window, or None (the planning model holds ``terrain`` whole).
        self.window = None if window is None else MapWindow(window, terrain)
        self._derive(terrain if self.window is None else self.window.map)
        self._first_origin_x = 0.0 if self.window is not None else self.map.origin[0]

    def _derive(self, terrain: HeightMap) -> None:
        """The map the targets read and its filtered copies."""
        self.map = terrain
        self.clearance_map = terrain.dilated(self.clearance, self.clearance / 2)
        self.body_map = terrain.smoothed(self.BODY_SIGMA)
        self.edge_map = (terrain.relief(self.edge, self.edge / 2) if self.edge > 0.0
                         else None)

    def add_to(self, spec: mujoco.MjSpec) -> None:
        """The map (or the window) into the planning model's specification (its floor
        lowered under it)."""
        if self.window is not None:
            self.window.add_to(spec, MAP_GEOM)
            return
        h = self.map.heights
        lo = float(h.min())
        sunk = HeightMap(np.where(h <= lo + 1e-9, lo - self.SINK, h), self.map.resolution,
                         self.map.origin)
        # the field before the plane, in this order: the geoms' order (and so the contacts')
        # is the one of a map on one body
        sunk.add_to(spec, MAP_GEOM, parent=spec.worldbody.add_body(name=FIELD_BODY),
                    span=self.span)
        self._field_lo = lo - self.SINK
        self._field_span = max(float(h.max()) - self._field_lo, 1e-6, self.span)
        if self.riser:
            res, (_, width) = self.map.resolution, self.map.size
            box = spec.worldbody.add_body(name=RISER_BODY, pos=[RISER_PARKED, 0.0, 0.0]).add_geom(
                name=RISER_GEOM, type=mujoco.mjtGeom.mjGEOM_BOX,
                size=[res / 2, width / 2, self.RISER_HALF_HEIGHT])
            floor_contact(floor_plane(spec), box)
        _move_floor(spec, spec.worldbody.add_body(name=MAP_BODY), lo)

    def bind(self, model: mujoco.MjModel) -> None:
        """The compiled planning model whose field the window writes and whose map
        :meth:`place` raises by :attr:`shift`."""
        self._model = model
        if self.window is not None:
            self.window.bind(model, MAP_GEOM)
        else:
            self._body = model.body(MAP_BODY).id
            self._field_body = model.body(FIELD_BODY).id
            self._field = model.hfield(MAP_GEOM).id
            if self.riser:
                self._riser_body = model.body(RISER_BODY).id

    def reveal(self, terrain: HeightMap, face: float | None = None,
               top: float | None = None) -> None:
        """A map given whole replaced by ``terrain`` (between plans: nothing may be stepping the
        bound model): the same grid but for its x origin, moved by less than half a sample, and
        its lowest level (the floor plane's) the same; its heights within the compiled field's
        range (``span``). The field's samples are written in place and its body moved along x
        by the origin's move; the targets' maps follow. With ``riser``, the box's front face
        is put at x = ``face`` and its top at ``top`` (the map's frame; :meth:`place` raises
        it by :attr:`shift`): ``terrain``'s first raised samples should lie a sample past the
        face, the field's slope then inside the box; the targets then read ``terrain`` a sample
        back, its first raised samples at the face."""
        if self.window is not None:
            raise MapError("reveal is for a map given whole, not a window")
        old = self.map
        if (terrain.shape != old.shape or terrain.resolution != old.resolution
                or terrain.origin[1] != old.origin[1]
                or abs(float(terrain.heights.min()) - float(old.heights.min())) > 1e-9):
            raise MapError("a revealed map keeps the grid and the lowest level")
        if self._model is not None:
            h = terrain.heights
            lo = float(h.min())
            sunk = np.where(h <= lo + 1e-9, lo - self.SINK, h)
            norm = (sunk - self._field_lo) / self._field_span
            if norm.max() > 1.0 + 1e-9:
                raise MapError(f"a revealed map rises {float(h.max()) - lo:.3f} m, beyond the "
                               f"field's span")
            m = self._model
            adr = m.hfield_adr[self._field]
            m.hfield_data[adr:adr + h.size] = norm.ravel()
            m.body_pos[self._field_body, 0] = terrain.origin[0] - self._first_origin_x
        if self.riser and face is not None and top is not None:
            self.riser_at = (float(face) + terrain.resolution / 2, float(top))
            # the targets read the step as a given map has it: the first raised sample at
            # the face (the box's front), the field's slope in front of it
            terrain = HeightMap(terrain.heights, terrain.resolution,
                                (terrain.origin[0] - terrain.resolution, terrain.origin[1]))
        self._derive(terrain)

    def register(self, points: np.ndarray, standing: np.ndarray) -> float:
        """Meet the map with the ground points (nfeet, 3: the feet less their resting height)
        of the ``standing`` feet: the map is in the frame of the state it is planned from (the
        estimator's), and an estimator's height drifts as all odometry does (the Kalman
        filter carrying the height from foothold to foothold: 3 cm within 2.5 s on the level
        floor), so a map taken as fixed leaves the planning model's feet that far above or in
        the ground they stand on. With e the mean of z − (H(x, y) + shift) over the standing
        feet on flat map (|∇H| ≤ :attr:`REGISTER_SLOPE`), shift += :attr:`REGISTER_GAIN` · e;
        nothing without such a foot. Returns the shift; :meth:`place` moves the model's
        map. A map given whole only: maps received while running (a window) come in the
        estimator's frame already, built by a mapper from the same state, and stay as
        received."""
        if self.window is not None:
            return self.shift
        points = np.asarray(points, dtype=float)[np.asarray(standing, dtype=bool)]
        if len(points):
            z, gx, gy = self.map.height_and_gradient(points[:, 0], points[:, 1])
            flat = np.hypot(gx, gy) <= self.REGISTER_SLOPE
            if flat.any():
                self.shift += self.REGISTER_GAIN * float(np.mean(points[flat, 2] - z[flat]
                                                                 - self.shift))
        return self.shift

    def find_terrace(self, xy) -> float | None:
        """A map given whole: :attr:`terrace`, the level of the map's samples within
        :attr:`TERRACE_REACH` of ``xy`` (the base) along x and y if they are all one level
        above the lowest (the top of a step, a landing), else None. There the plane stands in
        for the field (:meth:`place`): on a height field a foot sphere has one contact per prism
        it comes within its radius of (2-6 on a flat field, edge contacts of the neighbouring
        prisms among them), which makes the planning model's footing stiffer than the one
        contact a plane or the world gives, and where it lands, different. On the lowest level
        the plane is there already."""
        self.terrace = None
        if self.window is not None:
            return None
        h, res = self.map.heights, self.map.resolution
        ox, oy = self.map.origin
        c0, c1 = (int(np.floor((float(xy[0]) + d - ox) / res)) for d in (-self.TERRACE_REACH,
                                                                          self.TERRACE_REACH))
        r0, r1 = (int(np.floor((float(xy[1]) + d - oy) / res)) for d in (-self.TERRACE_REACH,
                                                                          self.TERRACE_REACH))
        rows, cols = h.shape
        if r0 < 0 or c0 < 0 or r1 + 1 >= rows or c1 + 1 >= cols:
            return None  # the square leaves the map: the plane beyond it is the lowest level
        patch = h[r0 : r1 + 2, c0 : c1 + 2]
        level = float(patch.max())
        if level - float(patch.min()) <= 1e-9 and level > float(h.min()) + 1e-9:
            self.terrace = level
        return self.terrace

    def place(self) -> None:
        """The bound model's map raised by :attr:`shift` (nothing may be stepping it); on a
        :attr:`terrace`, the floor plane raised to it and the field lowered out from under it
        (its highest sample below the plane). A window is not registered (:meth:`register`),
        so it stays where it is written."""
        if self._model is not None and self.window is None:
            pos = self._model.body_pos
            self._model.body_quat[self._body] = (1.0, 0.0, 0.0, 0.0)  # level after stand_in
            if self.terrace is None:
                pos[self._body, 2] = pos[self._field_body, 2] = self.shift
            else:
                h = self.map.heights
                lo, hi = float(h.min()), float(h.max())
                pos[self._body, 2] = self.shift + self.terrace - lo
                pos[self._field_body, 2] = self.shift - (hi - lo) - self.FIELD_DROP
            if self._riser_body >= 0 and self.riser_at is not None:
                x, top = self.riser_at
                pos[self._riser_body] = (x, 0.0, self.shift + top - self.RISER_HALF_HEIGHT)

    def stand_in(self, plane: GroundPlane) -> None:
        """The bound model's floor plane posed on ``plane`` (nothing may be stepping it) and
        the field parked :attr:`FIELD_PARKED` under it, a riser's box parked too: the plane
        alone is the ground, as a fitted plane is (``ground: felt`` while it has no riser;
        :meth:`place` puts the map back). A map given whole only."""
        if self.window is not None:
            raise MapError("stand_in is for a map given whole, not a window")
        pose(self._model, self._body, plane)
        self._model.body_pos[self._field_body, 2] = plane.a0 - self.FIELD_PARKED
        if self._riser_body >= 0:
            self._model.body_pos[self._riser_body] = (RISER_PARKED, 0.0, 0.0)
            self.riser_at = None

    def follow(self, received: HeightMap | None, qpos: np.ndarray) -> bool:
        """Between plans (nothing may be stepping the planning model): take ``received`` (a
        new map, or None) and move the window with the base at ``qpos``
        (:mod:`mpc.tasks.map_window`); the planning model's field and the targets' maps follow.
        Returns whether anything changed."""
        if self.window is None:
            raise MapError("a map is followed only with a window (map_input)")
        if received is not None:
            received = received.despeckled()  # its noise out, as a map given whole
        if received is not None and _same(received, self.window.source):
            received = None  # the same map again (a mapper repeating itself) changes nothing
        if received is not None:
            self.window.source = received
        changed = self.window.move_to(qpos)
        if received is not None and not changed:
            self.window.fill(received)
        if changed or received is not None:
            self._derive(self.window.map)
            return True
        return False

    @staticmethod
    def feet_only(model: mujoco.MjModel, feet: tuple[str, ...]) -> None:
        """Let only the foot geoms touch the map in the compiled ``model``: the map's contype
        becomes :data:`MAP_BIT` (its conaffinity 0), which only the feet's contact geoms
        (:func:`mpc.tasks.ground.foot_geoms`) accept."""
        for name in (MAP_GEOM, RISER_GEOM):
            if mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, name) >= 0:
                g = model.geom(name).id
                model.geom_contype[g], model.geom_conaffinity[g] = MAP_BIT, 0
        for name in feet:
            for geom in foot_geoms(model, model.site(name).id):
                model.geom_conaffinity[geom] |= MAP_BIT

    def safe_foothold(self, xy, direction, occupied=None) -> np.ndarray | None:
        """Where a foot aimed at ``xy`` lands clear of the edges: None if the edge map there
        is at most :attr:`EDGE_TOLERANCE` (no shift needed), else the nearest point along
        ``direction`` (a unit xy vector: the travel), forward or back, within
        :attr:`SHIFT_REACH`, where it is (None if there is none); forward only without
        ``shift_back``. The choice is discrete, made
        once per plan, as perceptive MPCs adapt footholds: the edge map's bump between the
        two sides of a riser is a local minimum that a cost alone does not cross.

        ``occupied`` ((n, 2), with ``shift_back``): where other feet stand when this one
        lands. Of those ahead of ``xy`` along ``direction``, a point within
        :attr:`FOOT_GAP` of one is not clear either, and a foothold aimed that close is moved
        back only (forward would step past the foot, crossing the legs). A foot behind the
        aim is left out: the foot aimed ahead of it is past it already."""
        xy = np.asarray(xy, dtype=float)
        direction = np.asarray(direction, dtype=float)
        occupied = (np.empty((0, 2)) if occupied is None or not self.shift_back
                    else np.asarray(occupied, dtype=float).reshape(-1, 2))
        occupied = occupied[(occupied - xy) @ direction >= 0.0]
        crowded = bool(np.any(np.linalg.norm(occupied - xy, axis=1) < self.FOOT_GAP))
        if not crowded and self._clear(xy[None], direction)[0]:
            return None
        step = self.map.resolution / 5
        shifts = np.arange(step, self.SHIFT_REACH + step / 2, step)
        if crowded:
            shifts = -shifts
        elif self.shift_back:
            shifts = np.stack((shifts, -shifts), axis=1).ravel()  # nearest first, forward first
        points = xy + shifts[:, None] * direction
        safe = self._clear(points, direction)
        if len(occupied):
            gaps = np.linalg.norm(points[:, None, :] - occupied[None], axis=2)
            safe &= gaps.min(axis=1) >= self.FOOT_GAP
        return points[int(np.argmax(safe))] if safe.any() else None

    def _clear(self, points: np.ndarray, direction: np.ndarray) -> np.ndarray:
        """Which footholds ``points`` (n, 2) are clear of the edges: the edge map at most
        :attr:`EDGE_TOLERANCE` and, with :attr:`drop`, no ground within that reach ahead
        along ``direction`` lower by more than that."""
        clear = self.edge_map.height(points[:, 0], points[:, 1]) <= self.EDGE_TOLERANCE
        if self.drop > 0.0:
            reach = np.linspace(0.0, self.drop, int(np.ceil(self.drop / 0.01)) + 1)
            ahead = points[:, None, :] + reach[None, :, None] * direction
            low = self.map.height(ahead[..., 0], ahead[..., 1]).min(axis=1)
            clear &= low >= self.map.height(points[:, 0], points[:, 1]) - self.EDGE_TOLERANCE
        return clear

    def within_climb(self, xy, direction, ground: float) -> np.ndarray | None:
        """Where a foot lifting off ``ground`` (m, the map's) and aimed at ``xy`` lands no more
        than :attr:`CLIMB` above it: None if the map there is not higher than that, else the
        nearest point back along ``direction`` (the travel), within :attr:`CLIMB_REACH`, that
        is not and is flat (the edge map at most :attr:`EDGE_TOLERANCE`), or None if there is
        none. A foot that stood short of a riser and is aimed two treads up would be asked to
        lift to the higher tread's height plus its lift within the first part of its swing:
        above the reach of a leg under a base at its standing height, so the plan lifts the
        whole robot, its standing feet too, off the ground."""
        xy = np.asarray(xy, dtype=float)
        if float(self.map.height(xy[0], xy[1])) <= ground + self.CLIMB:
            return None
        step = self.map.resolution / 5
        shifts = np.arange(step, self.CLIMB_REACH + step / 2, step)
        points = xy - shifts[:, None] * np.asarray(direction, dtype=float)
        ok = self.map.height(points[:, 0], points[:, 1]) <= ground + self.CLIMB
        if self.edge_map is not None:
            ok &= self.edge_map.height(points[:, 0], points[:, 1]) <= self.EDGE_TOLERANCE
        return points[int(np.argmax(ok))] if ok.any() else None

    def warm_up(self) -> None:
        """Compile (or load from numba's cache) the kernels that read the map, now: felt's
        map is first read at the first riser, mid-walk, and on loopback the Go2's first plan
        there, compiling them, took 0.74 s; its policy expired and the robot was put in
        damping."""
        x0, y0 = self.map.origin
        self.highest_along(np.array([[x0, y0], [x0 + 2 * self.clearance + 0.1, y0]]))

    def highest_along(self, path: np.ndarray) -> float:
        """The highest ground a swing along ``path`` (n, 2 points, lift-off first, touchdown
        last) passes over: the map itself along the whole path, and the clearance map (the
        highest ground within ``clearance``) along it but within ``clearance`` of either end.
        Near its ends the foot is low by design, and there the clearance map reads the ground
        beyond them: a foothold short of the next riser lifted the swing over that riser's
        tread (a Go2 foot landing on the second tread 10 cm short of the third riser was
        asked to be over the third tread, 12 cm higher than where it landed)."""
        path = np.ascontiguousarray(path, dtype=float)
        m, c = self.map, self.clearance_map
        return float(_highest_along(m.heights, *m.origin, m.resolution, c.heights, *c.origin,
                                    c.resolution, path, self.clearance))

    def plane_under(self, xy) -> GroundPlane:
        """The body map's tangent plane at ``xy`` (raised by :attr:`shift`)."""
        z, gx, gy = (float(v) for v in self.body_map.height_and_gradient(xy[0], xy[1]))
        return GroundPlane(z + self.shift - gx * float(xy[0]) - gy * float(xy[1]), gx, gy)

    @staticmethod
    def subtract_all(which: HeightMap, r: np.ndarray, s: np.ndarray, row: int,
                     cols: list[slice], scales: list[float]) -> None:
        """r[..., row] −= scale · H(s[..., x], s[..., y]) for each of ``cols`` ((x, y) its
        first two columns) with its scale, in their order; the map read at all of them in one
        call (the residual's map part read it once per point before, each call's overhead
        more than its work; the same values)."""
        z = which.height(*_points(s, cols))
        for k, scale in enumerate(scales):
            r[..., row] -= scale * z[k]

    @staticmethod
    def differentiate_all(which: HeightMap, J: np.ndarray, s: np.ndarray, row: int,
                          cols: list[slice], scales: list[float]) -> None:
        """J[..., row, (x, y)] −= scale · ∇H at (s[..., x], s[..., y]) for each of ``cols``
        with its scale, in their order; the map read at all of them in one call."""
        _, gx, gy = which.height_and_gradient(*_points(s, cols))
        for k, (c, scale) in enumerate(zip(cols, scales, strict=True)):
            J[..., row, c.start] -= scale * gx[k]
            J[..., row, c.start + 1] -= scale * gy[k]


@njit(cache=True)
def _highest_along(h, ox, oy, res, ch, cox, coy, cres, path, clearance):  # pragma: no cover
    """:meth:`MapGround.highest_along` compiled (once per swing and plan, its numpy version's
    calls cost more than their work): the map ``h`` (origin, resolution) and the clearance map
    ``ch`` read as :meth:`HeightMap.height` reads them, the distances as numpy's norm along
    an axis computes them (√(Δx² + Δy²)), the maxima as ``np.max`` and Python's ``max``
    take them (a NaN height propagates): the same value."""
    n = path.shape[0]
    out = np.empty((3, n))
    _bilinear(h, ox, oy, res, path[:, 0].copy(), path[:, 1].copy(), out)
    top = _max_nan(out[0])
    inner = np.empty(n, dtype=np.bool_)
    count = 0
    for k in range(n):
        dx0, dy0 = path[k, 0] - path[0, 0], path[k, 1] - path[0, 1]
        dx1, dy1 = path[k, 0] - path[n - 1, 0], path[k, 1] - path[n - 1, 1]
        inner[k] = (np.sqrt(dx0 * dx0 + dy0 * dy0) > clearance
                    and np.sqrt(dx1 * dx1 + dy1 * dy1) > clearance)
        count += inner[k]
    if count == 0:
        return top
    x, y = path[inner, 0].copy(), path[inner, 1].copy()
    cout = np.empty((3, count))
    _bilinear(ch, cox, coy, cres, x, y, cout)
    high = _max_nan(cout[0])
    return high if high > top else top


@njit(cache=True)
def _max_nan(v):  # pragma: no cover
    """The largest of ``v`` (1-D, not empty) as ``np.max`` takes it: NaN if any is NaN."""
    top = v[0]
    for k in range(1, v.shape[0]):
        if np.isnan(top):
            break
        if np.isnan(v[k]) or v[k] > top:
            top = v[k]
    return top


def _points(s: np.ndarray, cols: list[slice]) -> tuple[np.ndarray, np.ndarray]:
    """x and y (len(cols), ...): the first two columns of each of ``cols`` in ``s``."""
    return (np.stack([s[..., c.start] for c in cols]),
            np.stack([s[..., c.start + 1] for c in cols]))


def _move_floor(spec: mujoco.MjSpec, body: mujoco.MjsBody, z: float) -> None:
    """The world's floor plane onto ``body`` (static), at height ``z`` over its origin."""
    floor = floor_plane(spec)
    geom = body.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, pos=[floor.pos[0], floor.pos[1], z],
                         size=floor.size, material=floor.material, rgba=floor.rgba)
    floor_contact(floor, geom)
    name = floor.name
    spec.delete(floor)
    geom.name = name  # after the old floor is gone: names are unique


def _same(a: HeightMap, b: HeightMap | None) -> bool:
    """Whether two maps are the same grid of the same heights."""
    return (b is not None and a.shape == b.shape and a.resolution == b.resolution
            and a.origin == b.origin and np.array_equal(a.heights, b.heights))
