"""The legged-task base: what every task of a walking robot shares.

A legged task is a :class:`~mpc.tasks.task_base.Task` whose residual reads the robot's base,
feet, centre of mass and actuators; it walks to goals on a gait schedule, or tracks a velocity
command. This class holds all of that; a concrete task (:mod:`mpc.tasks.quadruped`,
:mod:`mpc.tasks.humanoid`, :mod:`mpc.tasks.quadruped_biped`) declares its terms and adds the
residuals of its own. ``docs/tasks.md`` walks through writing one.

**Terms.** :meth:`LeggedTask.declare_terms` lists the terms in residual order, each a
:class:`~mpc.tasks.task_base.CostTerm` (name, dimension, norm, norm parameter, default weight);
a config's ``weights`` replace the defaults. The residual is affine in the sensors s where it
can be, r = G s + c − target(t): at :meth:`bind` the method ``affine_<name>(model, G, c)`` of
each term fills its rows of G (nr, ns) and c (nr), and at every evaluation :meth:`targets`
gives what is subtracted from a term's rows at the knot times (a goal, a command, a heading).
Then ∂r/∂s = G exactly, except where a task overrides :meth:`residual` and
:meth:`residual_jacobian` for a term that is not affine (the humanoid's balance). The terms
this base can build, with p the base position and z its z-axis (site ``imu``), f the foot
positions, S the support feet (all by default), ρ the foot sites' resting height, h the
standing height, c and ċ the centre of mass and its velocity, σ the effort scale, γ the
posture gains, ĉ the command, and ψ(t) the heading of the stage, of the task or of the
velocity reference:

    upright   z − e_z                                              (3)
    height    p_z − mean_S(f_z) − h                                (1)
              (``height_swing: ground``: a swinging foot's f_z less its lift over its ground)
    position  p_xy − g(t)          (goal, stage or velocity reference)   (2)
    gait      per foot in swing: f_z − (ρ + step(t)), else 0       (feet)
    stance    per foot in planned stance: f_z − (ρ + H(a(t))), else 0     (feet; map)
    hold      per foot in planned stance: f_xy − a(t), else 0      (2 feet; map)
    overshoot per foot in swing: max(0, d · (f_xy − b) − m), else 0  (feet; map, if weighed)
    path      per foot in swing: f_xy − (a + (b − a) P(s)), else 0  (2 feet; map, if weighed)
    support   c_xy kept inside the hull of a(t) of the feet in planned stance  (2; map, if weighed)
    balance   c_xy + ċ_xy √(2h/g₀) − mean_S(f_xy)  (capture point)  (2)
    effort    σ τ                                                  (actuators)
    posture   γ ⊙ (q − q_home)                                     (actuators)
    velocity  (v_x, v_y, ω_z) − ĉ               (velocity mode)   (3)
    heading   a_xy − (cos ψ(t), sin ψ(t))     a the forward axis  (2)

**Sensors.** The base position and axes (:attr:`BASE_SENSORS`) on the site ``imu``, each foot's
position (and axes, :attr:`FOOT_SENSORS`), the subtree centre of mass and its velocity,
actuator forces and joint angles; in velocity mode a velocimeter and a gyro; the forward axis
when there is a heading term. The order they are added in is the order of ``sensordata``,
the columns of G.

**Goals, stages and modes.** In ``goal`` mode the task walks through ``waypoints`` (a goal or a
list of them) in stages (:mod:`mpc.tasks.goal_mode`): by default an optional hold
(``hold_time`` seconds at the start position), then one stage per waypoint, each over when the
base is within ``waypoint_tolerance`` of it. A task sequences other behaviour by returning its
own stages from :meth:`make_stages`. In ``velocity`` mode it tracks a body-frame command ĉ with
the reference of :mod:`mpc.tasks.velocity` and the speed-adapted gait of
:class:`mpc.tasks.gait.SpeedGait`.

**Options.** The keyword arguments of :meth:`LeggedTask.__init__`, bounded in :attr:`RANGES`.
A subclass takes ``**options`` and passes them on: the config check
(:func:`mpc.app.schema.check_kwargs`) follows ``**options`` up the classes and merges their
``RANGES``, so a subclass declares only its own options, their ranges and the defaults it
changes.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import mujoco
import numpy as np

from mpc.tasks.felt_step import FeltStep
from mpc.tasks.gait import Gait, GaitClock, SpeedGait, step_height, swing_phase
from mpc.tasks.goal_mode import GoalMode, Stage, as_waypoints
from mpc.tasks.ground import (
    GroundFit,
    GroundPlane,
    add_foot_floors,
    foot_floor_bodies,
    pose,
    split_foot_contacts,
    up_axis,
)
from mpc.tasks.map_ground import MapGround
from mpc.tasks.map_swing import DROP, RISE, SwingPlan, path_points, step_down_pending
from mpc.tasks.map_window import WindowSpec
from mpc.tasks.riser import HeldFeet, held_back
from mpc.tasks.support import support_edges, support_residual
from mpc.tasks.task_base import CostTerm, Task, base_yaw, weighted_terms
from mpc.tasks.terrain_map import HeightMap
from mpc.tasks.velocity import (
    VELOCITY_MODE_RANGES,
    VelocityMode,
    VelocityReference,
    clamp_distance,
)
from robots.info import RobotInfo
from robots.statics import resting_site_heights

GRAVITY = 9.81

#: Sensor types of the frame sensors a task can ask for on the base and the feet.
FRAME_SENSORS = {"pos": mujoco.mjtSensor.mjSENS_FRAMEPOS,
                 "xaxis": mujoco.mjtSensor.mjSENS_FRAMEXAXIS,
                 "zaxis": mujoco.mjtSensor.mjSENS_FRAMEZAXIS}


@dataclass
class FootholdPlan:
    """Each foot's next stance from ``touchdown`` to ``liftoff`` (s; inf: none ahead) and,
    where ``moved``, the foothold ``target`` (world xy) it is led to along ``direction``."""

    touchdown: np.ndarray
    liftoff: np.ndarray
    target: np.ndarray
    moved: np.ndarray
    direction: np.ndarray


class LeggedTask(GoalMode, VelocityMode, Task):
    """Base of the legged tasks (see the module docstring)."""

    #: Gaits by name, feet in the robot's foot order (their count is the feet the task needs).
    GAITS: ClassVar[dict[str, Gait]]
    #: The modes the task offers.
    MODES: ClassVar[tuple[str, ...]] = ("goal", "velocity")
    #: Frame sensors on the base site ``imu`` and on each foot site, in this order.
    BASE_SENSORS: ClassVar[tuple[str, ...]] = ("pos", "zaxis")
    FOOT_SENSORS: ClassVar[tuple[str, ...]] = ("pos",)

    #: Bounds of the options, read by mpc.app.schema.check_kwargs (see mpc/app/schema.py);
    #: a subclass's RANGES add to these and replace those it names.
    RANGES: ClassVar[dict[str, dict]] = {
        "goal": {"min": -1000.0, "max": 1000.0},  # m, also every waypoint's x and y
        "hold_time": {"min": 0.0, "max": 86400.0},
        "height": {"gt": 0.0, "max": 2.0},
        "foot_height": {"min": 0.0, "max": 0.2},
        "duty": {"gt": 0.0, "max": 1.0},
        "cadence": {"gt": 0.0, "max": 10.0},
        "step_height": {"min": 0.0, "max": 0.5},
        "effort_scale": {"gt": 0.0, "max": 100.0},
        "waypoint_tolerance": {"gt": 0.0, "max": 10.0},
        "weights": {"min": 0.0, "max": 1e6},
        "slope_follow": {"min": 0.0, "max": 1.0},
        "ground_prior": {"gt": 0.0, "max": 10.0},
        "ground_below": {"min": 0.0, "max": 0.2},
        "ground": {"choices": ("level", "fit", "map", "felt")},
        "felt_offset": {"min": -0.1, "max": 0.1},
        "map_clearance": {"min": 0.0, "max": 0.5},
        "map_edge": {"min": 0.0, "max": 0.5},
        "map_rise": {"gt": 0.0, "max": 0.45},
        "map_drop": {"min": 0.0, "max": 0.5},
        "map_contacts": {"choices": ("pruned", "all", "floors")},
        "travel_speed": {"min": 0.0, "max": 2.0},
        "travel_hold": {"min": 0.0, "max": 0.5},
        "height_swing": {"choices": ("foot", "ground")},
        **VELOCITY_MODE_RANGES,
    }
    #: Terms whose affine part depends on :attr:`ground`: rebuilt when it changes.
    GROUND_TERMS: ClassVar[tuple[str, ...]] = ("upright", "gait")
    #: A foot slower than this (m/s) in its planned stance stands: its foothold counts.
    STANCE_SPEED: ClassVar[float] = 0.25
    #: Gait cycles ahead in which each foot's next stance is looked for (footholds on a map).
    FOOTHOLD_LOOKAHEAD: ClassVar[float] = 1.5
    #: Swings per foot planned over a map within that lookahead.
    SWINGS_PLANNED: ClassVar[int] = 2
    #: How far (m) a swinging foot may pass its foothold along the travel before the
    #: overshoot row counts (:meth:`_overshoot_rows`).
    OVERSHOOT_MARGIN: ClassVar[float] = 0.03
    #: m the centre of mass is kept inside the support polygon by the support term.
    SUPPORT_MARGIN: ClassVar[float] = 0.03
    #: Default weights of the stance and hold terms on a map (:meth:`stance_terms`).
    STANCE_WEIGHTS: ClassVar[tuple[float, float]] = (0.0, 0.0)

    def __init__(self, robot: RobotInfo, gait: str = "trot", goal=(0.0, 0.0),
                 hold_time: float = 0.0, height: float = 0.25,
                 foot_height: float | None = None, duty: float | None = None,
                 cadence: float | None = None, step_height: float | None = None,
                 effort_scale: float = 0.02, waypoint_tolerance: float = 0.15,
                 weights: dict | None = None, mode: str = "goal", lead: float = 0.2,
                 cadence_gain: float = 1.0, max_cadence: float = 3.5, lift_gain: float = 0.03,
                 max_lift: float = 0.08, hip_radius: float = 0.25, stand_speed: float = 0.05,
                 ground: str = "level", ground_prior: float = 0.01, slope_follow: float = 0.5,
                 ground_below: float | None = None, foot_floors: bool = False,
                 map: str | None = None,
                 map_clearance: float = 0.05, map_edge: float = 0.0, map_rise: float = RISE,
                 map_contacts: str = "all", felt_offset: float = -0.015,
                 travel_speed: float = 0.0, travel_hold: float = 0.0, map_drop: float = 0.0,
                 height_swing: str = "foot"):
        """``gait``: a name of :attr:`GAITS`, its ``duty``, ``cadence`` (Hz) and
        ``step_height`` (m) replaced where given. ``goal``: [x, y] or waypoints [[x, y], ...];
        ``hold_time`` (s): hold the start position until then. ``height`` (m): the base over
        the support feet. ``foot_height`` (ρ, m): where a foot site rests on the ground
        (default: :meth:`resting_foot_height`). ``effort_scale`` σ. ``weights``: term name ->
        weight. ``mode``: one of :attr:`MODES`; ``lead`` (m) bounds the velocity mode's
        position reference around the base; ``cadence_gain`` … ``stand_speed``: its
        speed-adapted gait timing (:class:`mpc.tasks.gait.SpeedGait`). ``ground``: ``level``
        (the default: the plane z = 0, fixed) or ``fit`` (blind terrain: the plane under the
        standing feet, :mod:`mpc.tasks.ground`, with slope prior ``ground_prior`` λ in m²);
        ``slope_follow``: the fraction of the fitted ground's tilt the upright target
        follows; ``ground_below`` (m; None: off): a foot in its planned stance found more than
        that below the fitted plane stands, however fast it moves (:meth:`_footholds`);
        ``foot_floors``: each foot touches a floor of its own in the planning model
        (:meth:`foot_floor`). Both are ``ground: fit``'s: an error with ``level``, unused with
        ``map`` and ``felt``.
        ``ground: map``: the terrain map of file ``map`` (:mod:`mpc.tasks.map_ground`;
        or set one from code with :meth:`set_map`), ``map_clearance`` (m) how near a swing's
        path a riser lifts it over its top (:mod:`mpc.tasks.map_swing`), ``map_edge`` (m; 0:
        none) the reach of its edge map: a foot whose next foothold is within that reach of
        an edge is led off it (:meth:`plan_footholds`), ``map_drop`` (m; 0: none) the
        same for a foothold within that reach short of a drop ahead along the travel (the
        top of a step down: the estimate's position drifts against the map, and a foothold
        only ``map_edge`` short of the nosing in its frame can lie on it;
        :meth:`MapGround.safe_foothold`), ``map_rise`` the fraction of a swing
        over which its foot is led up to the highest ground on its path and, at its end, down
        (:data:`mpc.tasks.map_swing.RISE` by default), ``map_contacts`` the feet's contacts
        with the map's field in the planning model: ``all`` (MuJoCo's, one per prism; the
        default), ``pruned`` (the deepest per direction, :mod:`common.hfield_contacts`) or
        ``floors`` (none: each foot stands on a level floor of its own,
        :meth:`_place_map_floors`; ``ground: map`` only).
        ``ground: felt``: blind, the fitted plane as ``fit`` (its options too) until a swing
        foot is held back at a riser on level ground; from then the step is planned on as a
        given map (:mod:`mpc.tasks.felt_step`; the riser stands ``felt_offset`` m from where
        the foot touched it: −0.015 by default, the offset measured best, as a pressed foot
        sinks into its soft contact; the map settings as for ``map``) until it is done with
        (:meth:`FeltStep.done`: climbed, no step across the way, or lower than 3 cm), and
        then the fitted plane again (:meth:`_update_felt`). ``travel_speed`` (m/s; 0, the
        default: off): in goal mode the position target is a point travelling toward the
        goal at that speed (:meth:`travel_target`, kept within ``lead`` of the base) instead
        of the goal itself, and on a map the footholds are aimed with that travel's velocity
        instead of the base's measured one (:meth:`plan_footholds`). ``travel_hold`` (m; 0,
        the default: off): on a map, the travel stands still while a front foot stands
        higher than the ground under its hip and more than that far behind the hip
        (:func:`mpc.tasks.map_swing.step_down_pending`: the hips walked past a front foot
        that has not stepped down yet). ``height_swing``: where the height row counts a
        swinging support foot: ``foot`` (the default) where it is, ``ground`` on the ground
        under its swing (its gait target less its lift and, on a map, counted on
        :meth:`SwingPlan.counted`: up a step the chord of the swing), so a foot led up a
        tread does not lift the base's target with it (:meth:`_lifted`)."""
        super().__init__(robot)
        if ground not in ("level", "fit", "map", "felt"):
            raise ValueError(f"unknown ground {ground!r}; choose from level, fit, map, felt")
        if map is not None and ground != "map":
            raise ValueError(f"map is set but ground is {ground!r} (set ground: map)")
        self.ground_mode = ground
        if height_swing not in ("foot", "ground"):
            raise ValueError(f"unknown height_swing {height_swing!r}; choose foot or ground")
        self.height_swing = height_swing
        self.map_clearance = float(map_clearance)
        self.map_edge = float(map_edge)
        self.map_rise = float(map_rise)
        self.map_drop = float(map_drop)
        if map_contacts not in ("pruned", "all", "floors"):
            raise ValueError(f"unknown map_contacts {map_contacts!r}; choose pruned, all or "
                             f"floors")
        self.prune_field_contacts = map_contacts == "pruned"
        if map_contacts == "floors" and ground != "map":
            # felt mode's riser box must touch the feet: with floors of their own they pass it
            raise ValueError(f"map_contacts: floors needs ground: map, the task's ground is "
                             f"{ground!r}")
        self.map_floors = map_contacts == "floors"
        #: ``map_contacts: floors``: each foot's floor (height, and the xy it is drawn from).
        self._map_floor_z: np.ndarray | None = None
        self._map_floor_xy: np.ndarray | None = None
        #: Each foot's next stance and moved foothold (``map_edge`` > 0), else None.
        self.foothold_plan: FootholdPlan | None = None
        #: Each foot's swings over the map and the ground they pass over (``ground: map``).
        self.swing_plan: SwingPlan | None = None
        self._home_feet: np.ndarray | None = None
        #: Where each foot last stood in its planned stance (xy), on a map.
        self._stance_xy: np.ndarray | None = None
        #: The moved foothold (xy) each swinging foot is committed to, NaN where none.
        self._committed: np.ndarray | None = None
        #: (key, values, their views by batch shape) of the last :meth:`_time_terms`.
        self._time_cache: tuple[tuple, dict, dict] | None = None
        #: (terms, rows) of the last :attr:`rows`.
        self._rows_cache: tuple[tuple, dict] | None = None
        #: The terrain map the task plans on (``ground: map``), else None.
        self.map_ground: MapGround | None = None
        self._model: mujoco.MjModel | None = None
        if map is not None:
            try:
                self.map_ground = MapGround(map, self.map_clearance, edge=self.map_edge,
                                            drop=self.map_drop)
            except ValueError as e:
                raise ValueError(f"map: {e}") from None
        #: The step found by touch (``ground: felt``), else None.
        self.felt: FeltStep | None = None
        #: ``ground: felt``: the step's map, in the planning model from the start and read by
        #: the targets (as :attr:`map_ground`) once a riser is met (:meth:`_meet_riser`).
        self._felt_map: MapGround | None = None
        #: ``ground: felt`` with ``foot_floors``: the compiled model's collision bits before
        #: each foot got a floor of its own (geom contype, conaffinity; body contype,
        #: conaffinity), given back when a riser is met.
        self._shared_bits: tuple[np.ndarray, ...] | None = None
        if ground == "felt":
            self.felt = FeltStep(robot.foot_radius, felt_offset)
            self._felt_map = MapGround(self.felt.flat(), self.map_clearance,
                                       edge=self.map_edge, span=FeltStep.SPAN, riser=True,
                                       shift_back=False)
            self._held = HeldFeet(len(robot.feet))
        self.ground_prior = float(ground_prior)
        self.slope_follow = float(slope_follow)
        # The fitted ground's own options: an error on the level floor, which has no ground
        # model; on a map unused, so that a terrain config switched to a map with --set plans
        # on it as it would without them; felt's until it meets a riser.
        for key, value in (("ground_below", ground_below), ("foot_floors", foot_floors)):
            if value not in (None, False) and ground == "level":
                raise ValueError(f"{key} is set but ground is 'level' (set ground: fit)")
        fitted = ground in ("fit", "felt")
        self.ground_below = None if ground_below is None or not fitted else float(ground_below)
        self.split_floors = bool(foot_floors) and fitted
        self.ground_fit: GroundFit | None = None
        if mode not in self.MODES:
            raise ValueError(f"unknown mode {mode!r}; choose from {', '.join(self.MODES)}")
        self.mode = mode
        if gait not in self.GAITS:
            raise ValueError(f"unknown gait {gait!r}; choose from {', '.join(self.GAITS)}")
        base = self.GAITS[gait]
        if len(base.offsets) != len(robot.feet):
            raise ValueError(f"{self.name} needs a robot with {len(base.offsets)} feet, "
                             f"{robot.name} has {len(robot.feet)}")
        self.gait = Gait(base.name, base.offsets,
                         base.duty if duty is None else float(duty),
                         base.cadence if cadence is None else float(cadence),
                         base.amplitude if step_height is None else float(step_height))
        if not 0.0 < self.gait.duty <= 1.0:
            raise ValueError(f"duty must be in (0, 1], got {self.gait.duty}")
        self.height = float(height)
        self._given_foot_height = None if foot_height is None else float(foot_height)
        #: ρ (m): the gait targets' foot height on the ground, known once bound to a model.
        self.foot_height = self._given_foot_height
        self.effort_scale = float(effort_scale)
        self.waypoint_tolerance = float(waypoint_tolerance)
        self.hold_time = float(hold_time)
        self.waypoints = as_waypoints(goal)
        #: ψ (rad) of the heading term in goal mode, where a stage does not set one.
        self.heading = 0.0
        #: The goal-mode stages, made at the first :meth:`update` (the start is known then).
        self.stages: list[Stage] | None = None
        self.stage_index = 0
        #: Where the base stood when the current stage began (a stage without a goal).
        self.stage_start: np.ndarray | None = None
        self.clock = GaitClock(self.gait.cadence)
        self._ground_started = False
        #: Gait timing in force (duty, cadence, lift): the gait's, or speed-adapted.
        self.timing = (self.gait.duty, self.gait.cadence, self.gait.amplitude)
        self.speed_gait = SpeedGait(cadence_gain, max_cadence, lift_gain, max_lift,
                                    stand_speed, hip_radius)
        self.reference = VelocityReference(lead)
        self.travel_speed = float(travel_speed)
        if self.travel_speed < 0.0:
            raise ValueError(f"travel_speed must be >= 0, got {travel_speed}")
        #: The goal-mode travel reference (``travel_speed`` > 0): its point at ``_travel_time``
        #: (None before the first update), its unit direction and how far the goal is from it.
        self._travel_from: np.ndarray | None = None
        self._travel_time = 0.0
        self._travel_dir = np.zeros(2)
        self._travel_left = 0.0
        self.travel_hold = float(travel_hold)
        #: Whether the travel stands still until the next update (``travel_hold``).
        self.travel_held = False
        #: The travel d footholds are moved along, at the last plan (:meth:`plan_footholds`).
        self._travel_direction = np.array([1.0, 0.0])
        self._command = np.zeros(3)
        #: Actuators the planner drives (the robot's motors but those locked in planning).
        self.nu = len(robot.motor_joints) - len(robot.locked_joints)
        #: The config's weights as given (the terms declared only when weighted read it).
        self._weights_given = dict(weights or {})
        self.terms = weighted_terms(self.declare_terms(), weights, self.name)

    # --- terms -----------------------------------------------------------------------------
    @abstractmethod
    def declare_terms(self) -> list[CostTerm]:
        """The task's terms in residual order, with their default weights; called once at
        the end of ``__init__`` (so the attributes it reads are set before). Each term needs
        a method ``affine_<name>``."""

    def stance_terms(self) -> list[CostTerm]:
        """On a map (``ground: map``) the stance and hold terms (:meth:`_stance_rows`), with
        weights :attr:`STANCE_WEIGHTS`, and the overshoot term (:meth:`_overshoot_rows`) where
        the weights name it; elsewhere none."""
        if self.ground_mode != "map":
            return []
        nfeet, (stance, hold) = len(self.robot.feet), self.STANCE_WEIGHTS
        terms = [CostTerm("stance", nfeet, "smooth_abs", param=0.03, weight=stance),
                 CostTerm("hold", 2 * nfeet, "smooth_abs", param=0.03, weight=hold)]
        for name, dim in (("overshoot", nfeet), ("path", 2 * nfeet)):
            if name in self._weights_given:  # only where a config weighs it: the residual
                # elsewhere stays as it was, row for row
                terms.append(CostTerm(name, dim, "smooth_abs", param=0.03, weight=0.0))
        if "support" in self._weights_given:
            terms.append(CostTerm("support", 2, "quadratic", param=0.0, weight=0.0))
        return terms

    @property
    def rows(self) -> dict[str, slice]:
        """Rows of each term (by name) in the residual (not to be written: built again only
        when the terms change; the residual and its Jacobian read it a few dozen times per
        plan)."""
        terms = tuple(self.terms)
        cached = self._rows_cache
        if cached is None or cached[0] != terms:
            rows = dict(zip([t.name for t in terms], self.term_slices, strict=True))
            cached = self._rows_cache = (terms, rows)
        return cached[1]

    def support_mask(self) -> np.ndarray:
        """(nfeet,) bool: which feet are :attr:`support_feet`."""
        mask = np.zeros(len(self.robot.feet), bool)
        mask[list(self.support_feet)] = True
        return mask

    @property
    def support_feet(self) -> tuple[int, ...]:
        """Indices (in ``robot.feet``) of the feet that carry the robot: height and balance
        are measured from their mean."""
        return tuple(range(len(self.robot.feet)))

    def heading_axis(self) -> tuple[str, float]:
        """(sensor, sign) of the forward axis a whose ground projection the heading term
        points along ψ: the base x-axis."""
        return "base_xaxis", 1.0

    def posture_gains(self, model: mujoco.MjModel) -> np.ndarray:
        """Per-joint gains γ of the posture term, in ``model``'s actuator order: ones."""
        return np.ones(model.nu)

    # --- model -----------------------------------------------------------------------------
    def add_sensors(self, spec: mujoco.MjSpec) -> None:
        S, site = mujoco.mjtSensor, mujoco.mjtObj.mjOBJ_SITE
        for kind in self.BASE_SENSORS:
            add_frame_sensor(spec, f"base_{kind}", kind, "imu")
        for foot in self.robot.feet:
            for kind in self.FOOT_SENSORS:
                add_frame_sensor(spec, f"{foot}_{kind}", kind, foot)
        body, base = mujoco.mjtObj.mjOBJ_BODY, self.robot.base_body
        spec.add_sensor(name="com_pos", type=S.mjSENS_SUBTREECOM, objtype=body, objname=base)
        spec.add_sensor(name="com_vel", type=S.mjSENS_SUBTREELINVEL, objtype=body, objname=base)
        for act in spec.actuators:
            spec.add_sensor(name=f"{act.name}_force", type=S.mjSENS_ACTUATORFRC,
                            objtype=mujoco.mjtObj.mjOBJ_ACTUATOR, objname=act.name)
        for act in spec.actuators:
            spec.add_sensor(name=f"{act.name}_angle", type=S.mjSENS_JOINTPOS,
                            objtype=mujoco.mjtObj.mjOBJ_JOINT, objname=act.target)
        if self.velocity_mode:
            spec.add_sensor(name="base_linvel", type=S.mjSENS_VELOCIMETER, objtype=site,
                            objname="imu")
            spec.add_sensor(name="base_angvel", type=S.mjSENS_GYRO, objtype=site, objname="imu")
        if "heading" in self.rows:
            axis = self.heading_axis()[0]
            add_frame_sensor(spec, axis, axis.removeprefix("base_"), "imu")

    def resting_foot_height(self, model: mujoco.MjModel) -> float:
        """ρ: the mean height of the foot sites of the standing robot in the planning model
        over the ground they rest on (:func:`robots.statics.resting_site_heights`; as their
        absolute height, on a map raised 2 cm by an elevation map's error ρ came out 2 cm
        high, no planned foot stood on its floor and the A1 fell at the start). Not the foot
        sphere's radius: the soft contacts sink under the robot's weight, and a foot asked to
        be that far up from the first instant of its swing window makes the robot hop."""
        return float(np.mean(resting_site_heights(model, self.robot.home_key,
                                                  self.robot.feet)))

    def bind(self, model: mujoco.MjModel) -> None:
        """Resolve the sensors, measure what the residual needs from the model (home joint
        angles, ρ) and build G and c from the terms' ``affine_<name>`` methods."""
        super().bind(model)
        key = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, self.robot.home_key)
        self.home_angles = model.key_qpos[key, model.jnt_qposadr[model.actuator_trnid[:, 0]]]
        if self._given_foot_height is None:
            self.foot_height = self.resting_foot_height(model)
        first = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, 0)
        #: Columns of the actuator forces and of the joint angles, in actuator order.
        self.force_columns = _block(self.sensor(f"{first}_force"), model.nu)
        self.angle_columns = _block(self.sensor(f"{first}_angle"), model.nu)
        G, c = np.zeros((self.nresidual, model.nsensordata)), np.zeros(self.nresidual)
        for name, rows in self.rows.items():
            build = getattr(self, f"affine_{name}", None)
            if build is None:
                raise TypeError(f"{type(self).__name__}: term {name!r} has no method "
                                f"affine_{name}(model, G, c)")
            build(model, G[rows], c[rows])
        #: r = G s + c − target(t) (see the module docstring).
        self.G, self.c = G, c
        self._model = model
        self._kin = mujoco.MjData(model)
        self._foot_sites = [model.site(f).id for f in self.robot.feet]
        self._site_vel = np.zeros(6)
        #: The foot sites' world velocities (nfeet, 3) at the state :meth:`feet` last read.
        self.foot_velocity = np.zeros((len(self._foot_sites), 3))
        self._foot_floor_bodies: list[int] = []
        if self.ground_mode in ("fit", "felt"):
            self.ground_fit = GroundFit(len(self.robot.feet), self.ground_prior)
        if self.foot_floors:
            option = "foot_floors" if self.split_floors else "map_contacts: floors"
            if self.felt is not None:
                self._shared_bits = tuple(a.copy() for a in (
                    model.geom_contype, model.geom_conaffinity, model.body_contype,
                    model.body_conaffinity))
            if not split_foot_contacts(model, self._foot_sites):
                raise ValueError(f"{option} needs a sphere on every foot and a floor plane; "
                                 f"{self.robot.name}'s planning model has not")
            self._foot_floor_bodies = foot_floor_bodies(model)
        if self._felt_map is not None:
            self._felt_map.warm_up()  # read first at the first riser, mid-walk
        if self.terrain is not None:
            mujoco.mj_resetDataKeyframe(model, self._kin, key)
            mujoco.mj_kinematics(model, self._kin)
            #: The feet's xy under the base at home, in the base's heading frame.
            self._home_feet = (self._kin.site_xpos[self._foot_sites, 0:2]
                               - self._kin.qpos[0:2])

    @property
    def terrain(self) -> MapGround | None:
        """The map in the planning model: the map mode's, or felt's from the start (the
        targets read it as :attr:`map_ground` once a riser is met); None on a plane."""
        return self._felt_map if self.felt is not None else self.map_ground

    @property
    def posable_ground(self) -> bool:
        """With ``ground: fit`` the ground follows the footholds."""
        return self.ground_mode == "fit"

    @property
    def foot_floors(self) -> int:
        """With ``foot_floors`` (``ground: fit``) or ``map_contacts: floors`` (``ground: map``)
        set, a floor per foot in the planning model."""
        return len(self.robot.feet) if self.split_floors or self.map_floors else 0

    def foot_floor(self, i: int) -> GroundPlane:
        """Foot i's floor in the planning model (``foot_floors``): while it stands (its
        foothold counted at the last :meth:`update_ground`), the fitted plane's slope through
        that foothold; in its swing (or before it has a foothold), the fitted plane. Over a
        step the feet stand on two levels and the plane fitted to them runs between: it
        leaves the feet on the top above the model's floor (standing on nothing in the plan)
        and those below under it; its own floor puts each standing foot where it stands.
        Where a swinging foot lands is not known; the fitted plane, which runs from the feet
        behind to where the feet ahead found the ground, guesses it."""
        g = self.ground
        if self.ground_fit is None or not self.ground_fit.standing[i]:
            return g
        p = self.ground_fit.footholds[i, 0]
        if not np.all(np.isfinite(p)):
            return g
        return GroundPlane(float(p[2] - g.a1 * p[0] - g.a2 * p[1]), g.a1, g.a2)

    def set_map(self, terrain) -> None:
        """Plan on ``terrain`` (a :class:`mpc.tasks.terrain_map.HeightMap` or a map file):
        the library's way to give a task its map, before its planning model is built."""
        if self.ground_mode != "map":
            raise ValueError(f"set_map needs ground: map, the task's ground is "
                             f"{self.ground_mode!r}")
        if self._model is not None:
            raise ValueError("set_map after the planning model was built")
        self.map_ground = MapGround(terrain, self.map_clearance, edge=self.map_edge,
                                    drop=self.map_drop)

    def set_map_window(self, window: WindowSpec) -> None:
        """Plan on a local ``window`` of maps received while running (``ground: map``; the
        task's map, if any, its first contents): before the planning model is built; then
        :meth:`follow_map` between plans."""
        if self.ground_mode != "map":
            raise ValueError(f"a map window needs ground: map, the task's ground is "
                             f"{self.ground_mode!r}")
        if self._model is not None:
            raise ValueError("set_map_window after the planning model was built")
        initial = None if self.map_ground is None else self.map_ground.map
        self.map_ground = MapGround(initial, self.map_clearance, window, edge=self.map_edge,
                                    drop=self.map_drop)

    def follow_map(self, received: HeightMap | None, qpos: np.ndarray) -> bool:
        """Between plans: a newly received map (or None) and the window moving with the base
        at ``qpos`` (:meth:`MapGround.follow`); whether the planning model's terrain changed."""
        if self.map_ground is None or self.map_ground.window is None:
            raise ValueError("follow_map needs a map window (set_map_window)")
        return self.map_ground.follow(received, qpos)

    def add_terrain(self, spec: mujoco.MjSpec) -> None:
        """The map into the planning model (``ground: map``, ``felt``): with ``felt`` its
        floor plane is also the fitted ground's until a riser is met, and the feet's floors
        (``foot_floors``) are copies of it."""
        if self.ground_mode in ("map", "felt"):
            if self.terrain is None:
                raise ValueError("ground: map needs a map (task.map, or set_map)")
            self.terrain.add_to(spec)
            if self.map_floors or self.split_floors:
                floor = next(g for g in spec.geoms if g.type == mujoco.mjtGeom.mjGEOM_PLANE)
                add_foot_floors(spec, floor, len(self.robot.feet))

    def terrain_contacts(self, model: mujoco.MjModel) -> None:
        """On a map, the feet alone touch it (:meth:`MapGround.feet_only`)."""
        if self.terrain is not None:
            self.terrain.feet_only(model, self.robot.feet)
            self.terrain.bind(model)

    def _rebuild(self, names: tuple[str, ...]) -> None:
        """Rebuild the affine rows of the terms ``names`` (those the task has)."""
        rows = self.rows
        for name in names:
            if name in rows:
                self.G[rows[name]] = 0.0
                self.c[rows[name]] = 0.0
                getattr(self, f"affine_{name}")(self._model, self.G[rows[name]],
                                                self.c[rows[name]])

    def feet(self, qpos: np.ndarray, qvel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """World positions (nfeet, 3) and speeds (nfeet,) of the foot sites at a state,
        through the planning model's kinematics."""
        m, d = self._model, self._kin
        d.qpos[:], d.qvel[:] = qpos, qvel
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        mujoco.mj_comVel(m, d)
        speed = np.empty(len(self._foot_sites))
        for i, site in enumerate(self._foot_sites):
            mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_SITE, site, self._site_vel, 0)
            self.foot_velocity[i] = self._site_vel[3:]
            speed[i] = np.linalg.norm(self._site_vel[3:])
        return d.site_xpos[self._foot_sites].copy(), speed

    def update_ground(self, time: float, qpos: np.ndarray, qvel: np.ndarray) -> None:
        """Refit :attr:`ground` to the feet that stand at this state (support feet in planned
        stance and slower than :attr:`STANCE_SPEED` or found below the plane:
        :meth:`_footholds`; all feet at the first call) and rebuild
        the terms that depend on it (:attr:`GROUND_TERMS`). A foot outside
        :attr:`support_feet` (a quadruped's lifted pair on two legs) holds still in the air
        without a swing target: it is no foothold. With ``ground: felt`` the fitted plane
        until a swing foot is held back at a riser (:meth:`_meet_riser`), the step's map
        from then on."""
        if self.felt is not None:
            self._update_felt(time, qpos, qvel)
            return
        if self.map_ground is not None:
            points, standing, _ = self._footholds(time, qpos, qvel)
            self._update_map(time, qpos, qvel, points, standing)
            return
        if self.ground_fit is None:
            return
        points, standing, first = self._footholds(time, qpos, qvel)
        self._refit(points, standing, first)
        self._rebuild(self.GROUND_TERMS)

    def _refit(self, points: np.ndarray, standing: np.ndarray, first: bool) -> None:
        """:attr:`ground` fitted anew to the feet at the first call, else refitted to the
        standing feet's footholds (``points``/``standing``/``first``: :meth:`_footholds`)."""
        self.ground = (self.ground_fit.reset(points) if first
                       else self.ground_fit.observe(points, standing))

    def _update_map(self, time: float, qpos: np.ndarray, qvel: np.ndarray, points: np.ndarray,
                    standing: np.ndarray) -> None:
        """On a map: register it to the standing feet, take the plane under the base and plan
        the footholds and swings (``points``/``standing``: :meth:`_footholds`)."""
        self.map_ground.register(points, standing)
        self.map_ground.find_terrace(qpos[:2])
        self.ground = self.map_ground.plane_under(qpos[:2])
        self._rebuild(("upright",))
        self.plan_footholds(time, qpos, qvel)
        if self.map_floors:
            self._place_map_floors(points, standing, self.planned_stance(time))

    def _update_felt(self, time: float, qpos: np.ndarray, qvel: np.ndarray) -> None:
        """``ground: felt``: the plane fitted to the footholds, and while the robot climbs a
        step that a swing foot met, the step's map (:meth:`_meet_riser`, :meth:`_feel`).
        The plane is fitted throughout, so that it is current when the map is left."""
        points, standing, first = self._footholds(time, qpos, qvel)
        self._refit(points, standing, first)
        if self.map_ground is None:
            if first or not self._meet_riser(time, qpos, qvel, points):
                self._rebuild(self.GROUND_TERMS)
                return
        elif self._feel(time, qpos, qvel, points, standing):
            self._leave_map()
            self._rebuild(self.GROUND_TERMS)
            return
        self._update_map(time, qpos, qvel, points, standing)

    def _place_map_floors(self, points: np.ndarray, standing: np.ndarray,
                          stance: np.ndarray) -> None:
        """``map_contacts: floors``: each foot's own level floor, never above the foot
        (``points``: the feet's ground points; ``standing``: :meth:`_footholds`; ``stance``:
        the feet in their planned stance now). A standing foot's is where it stands. A foot
        in its planned stance that does not stand (it moves: slips, or settles after its
        touchdown) gets the lower of where it is and the map's ground under it: with its next
        swing's ground (as before 2026-11-27) a foot on the landing whose next swing stepped
        down had its floor on the tread below, the planning model lost its support, the plans
        lifted the other feet too, and the Go2 fell at the top of every flight down. A swinging
        foot gets the lowest of where it is over, the ground its swing left and the one it
        lands on."""
        z = points[:, 2].copy()
        plan = self.swing_plan
        for i in np.flatnonzero(~np.asarray(standing, bool)):
            low = [z[i]]
            if plan is not None and stance[i]:
                low.append(plan.stood[i])  # the ground under it (the swing plan read it)
            elif plan is not None:
                low += [v for v in (plan.start[i, 0], plan.land[i, 0]) if np.isfinite(v)]
            z[i] = min(low)
        self._map_floor_z = z
        self._map_floor_xy = points[:, :2].copy()

    def _feel(self, time: float, qpos: np.ndarray, qvel: np.ndarray, points: np.ndarray,
              standing: np.ndarray) -> bool:
        """``ground: felt`` on a step's map, once per plan before the registration: a foot
        over the step lower than its assumed top lowers it, a foot standing on top measures
        it (:mod:`mpc.tasks.felt_step`); the map is revealed to the planning model and the
        targets when it changes. Returns whether the map is done with
        (:meth:`FeltStep.done`). ``points``/``standing``: :meth:`_footholds` at this
        state."""
        mg, felt = self.map_ground, self.felt
        local = points.copy()
        local[:, 2] -= mg.shift  # the map's frame
        self._held_feet(time, qpos, qvel)  # kept current for the next riser
        changed = felt.lower(local, self.swing_targets(np.asarray(time)) <= 0.0)
        changed |= felt.confirm(local, standing)
        if changed:
            mg.reveal(felt.grid(), felt.riser, felt.top)
        return felt.done(local, standing)

    def _leave_map(self) -> None:
        """``ground: felt``: back from a step's map to the fitted plane (:meth:`_feel`), fitted
        to each foot's newest foothold (on the top, once the step is climbed); the map flat
        and its riser parked again for the next riser, the plans made on it dropped, the feet
        on floors of their own again if they had them."""
        felt = self.felt
        self.felt = FeltStep(felt.radius, felt.offset)
        mg = self._felt_map
        mg.reveal(self.felt.flat())
        mg.shift = 0.0
        self.map_ground = None
        self.foothold_plan = self.swing_plan = None
        self._stance_xy = self._committed = None
        if self._shared_bits is not None:
            split_foot_contacts(self._model, self._foot_sites)
        self.ground = self.ground_fit.keep_newest()

    def _held_feet(self, time: float, qpos: np.ndarray, qvel: np.ndarray) -> np.ndarray:
        """The swing feet held back on end at this state (:mod:`mpc.tasks.riser`; the foot
        velocities of the last :meth:`feet`)."""
        yaw = base_yaw(qpos)
        u = np.array([np.cos(yaw), np.sin(yaw)])
        phase = swing_phase(self.clock.phase(time), np.array(self.gait.offsets),
                            self.timing[0])
        return self._held.update(time, held_back(phase, self.foot_velocity,
                                                 np.asarray(qvel[0:3]), u))

    def _meet_riser(self, time: float, qpos: np.ndarray, qvel: np.ndarray,
                    points: np.ndarray) -> bool:
        """``ground: felt`` on the fitted plane: whether a swing foot is held back at a riser
        (:meth:`_held_feet`) while the plane is level (no steeper than
        :attr:`FeltStep.LEVEL`), within the map's extent (:meth:`FeltStep.fits`). If one
        is, the step's map takes over from the plane: its level ground (0 in the map's
        frame) is raised to the ground the held foot lifted off (its newest foothold, or
        the plane under it), the riser is placed from the foot (:meth:`FeltStep.meet`)
        and revealed, the targets read the map from now on, and the feet, if they had
        floors of their own, stand on the map's floor again (felt's map mode has none:
        its riser's box must touch them)."""
        held = self._held_feet(time, qpos, qvel)
        if not held.any() or np.hypot(self.ground.a1, self.ground.a2) > FeltStep.LEVEL:
            return False
        i = int(np.flatnonzero(held)[0])
        if not self.felt.fits(points[i]):
            return False
        p = self.ground_fit.footholds[i, 0]
        lifted = (float(p[2]) if np.all(np.isfinite(p))
                  else float(self.ground.height(points[i, 0], points[i, 1])))
        mg = self._felt_map
        mg.shift = lifted
        foot = points[i].copy()
        foot[2] -= lifted  # the map's frame
        self.felt.meet(foot, 0.0)
        mg.reveal(self.felt.grid(), self.felt.riser, self.felt.top)
        self.map_ground = mg
        self._rebuild(self.GROUND_TERMS)  # the gait rows read the map's ground from now on
        if self._shared_bits is not None:
            m = self._model
            (m.geom_contype[:], m.geom_conaffinity[:], m.body_contype[:],
             m.body_conaffinity[:]) = self._shared_bits
        return True

    def _footholds(self, time: float, qpos: np.ndarray,
                   qvel: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
        """The ground points under the feet (nfeet, 3: the foot sites less ρ), which feet
        stand on them (support feet in planned stance, slower than :attr:`STANCE_SPEED` or,
        with :attr:`ground_below` set, more than that below the plane) and whether this is
        the first call (then every foot, a foot radius below the sites)."""
        points, speed = self.feet(qpos, qvel)
        if not self._ground_started:
            # The start may be a keyframe whose feet touch the ground without sinking in: the
            # ground is taken a foot radius below them, never above where they are.
            points[:, 2] -= max(self.foot_height, self.robot.foot_radius)
            self._ground_started = True
            return points, np.ones(len(points), bool), True
        points[:, 2] -= self.foot_height
        # A foot can stand no lower than the ground: one in its planned stance found below the
        # plane has found lower ground (over a step down it slides down the riser, or reaches
        # for the floor below), and the plane must follow it there, or the planning model's
        # floor holds that foot up where there is nothing.
        below = np.zeros(len(points), bool)
        if self.ground_below is not None and self.map_ground is None:
            below = points[:, 2] < (self.ground.height(points[:, 0], points[:, 1])
                                    - self.ground_below)
        stance = self.planned_stance(time) & ((speed < self.STANCE_SPEED) | below)
        return points, stance & self.support_mask(), False

    def pose_ground(self, model: mujoco.MjModel) -> None:
        """The planning model's floor on :attr:`ground`; on a map, the map raised by its
        registration (:meth:`MapGround.register`)."""
        super().pose_ground(model)
        if self.map_floors:
            if self._map_floor_z is not None:
                for i, body in enumerate(self._foot_floor_bodies):
                    pose(model, body, GroundPlane(float(self._map_floor_z[i]), 0.0, 0.0),
                         self._map_floor_xy[i])
        elif self.map_ground is None:
            for i, body in enumerate(self._foot_floor_bodies):
                p = self.ground_fit.footholds[i, 0]
                at = p[:2] if np.all(np.isfinite(p)) else (0.0, 0.0)
                pose(model, body, self.foot_floor(i), at)
        if self.map_ground is not None:
            self.map_ground.place()
        elif self.terrain is not None:  # felt before a riser: its floor on the fitted plane
            self.terrain.stand_in(self.ground)

    # --- the terms' affine parts: G and c are the term's rows ---------------------------
    def affine_upright(self, model: mujoco.MjModel, G: np.ndarray, c: np.ndarray) -> None:
        """z − u: u the vertical turned toward the ground's normal by ``slope_follow``."""
        G[:, self.sensor("base_zaxis")] = np.eye(3)
        c[:] = -up_axis(self.ground, self.slope_follow)

    def affine_height(self, model: mujoco.MjModel, G: np.ndarray, c: np.ndarray) -> None:
        """p_z − mean_S(f_z) − h (on a map less H_b(p) − mean_S H_b(f) at evaluation)."""
        G[0, self.sensor("base_pos").start + 2] = 1.0
        feet = self.support_feet
        for i in feet:
            G[0, self.sensor(f"{self.robot.feet[i]}_pos").start + 2] -= 1.0 / len(feet)
        c[0] = -self.height

    def affine_position(self, model: mujoco.MjModel, G: np.ndarray, c: np.ndarray) -> None:
        G[:, _block(self.sensor("base_pos"), 2)] = np.eye(2)

    def affine_gait(self, model: mujoco.MjModel, G: np.ndarray, c: np.ndarray) -> None:
        """f_z − g(f_x, f_y): the foot's height over the ground (mask, ρ and step target at
        evaluation); on a map f_z (less the map at evaluation)."""
        g = self.ground if self.map_ground is None else GroundPlane()
        for i, foot in enumerate(self.robot.feet):
            start = self.sensor(f"{foot}_pos").start
            G[i, start : start + 3] = (-g.a1, -g.a2, 1.0)
            c[i] = -g.a0

    def affine_stance(self, model: mujoco.MjModel, G: np.ndarray, c: np.ndarray) -> None:
        """f_z of each foot (ρ, the ground under its stance point and the mask at evaluation:
        :meth:`_stance_rows`)."""
        for i, foot in enumerate(self.robot.feet):
            G[i, self.sensor(f"{foot}_pos").start + 2] = 1.0

    def affine_hold(self, model: mujoco.MjModel, G: np.ndarray, c: np.ndarray) -> None:
        """f_xy of each foot (its stance point and the mask at evaluation)."""
        for i, foot in enumerate(self.robot.feet):
            G[2 * i : 2 * i + 2, _block(self.sensor(f"{foot}_pos"), 2)] = np.eye(2)

    def affine_path(self, model: mujoco.MjModel, G: np.ndarray, c: np.ndarray) -> None:
        """f_xy of each foot (its swing path's point and the mask at evaluation)."""
        self.affine_hold(model, G, c)

    def affine_support(self, model: mujoco.MjModel, G: np.ndarray, c: np.ndarray) -> None:
        """Nothing affine: the rows are built at evaluation (:mod:`mpc.tasks.support`)."""

    def affine_overshoot(self, model: mujoco.MjModel, G: np.ndarray, c: np.ndarray) -> None:
        """Nothing affine: the rows are built at evaluation (:meth:`_overshoot_rows`)."""

    def affine_balance(self, model: mujoco.MjModel, G: np.ndarray, c: np.ndarray) -> None:
        fall_time = np.sqrt(2 * self.height / GRAVITY)
        G[:, _block(self.sensor("com_pos"), 2)] = np.eye(2)
        G[:, _block(self.sensor("com_vel"), 2)] = fall_time * np.eye(2)
        feet = self.support_feet
        for i in feet:
            G[:, _block(self.sensor(f"{self.robot.feet[i]}_pos"), 2)] -= np.eye(2) / len(feet)

    def affine_effort(self, model: mujoco.MjModel, G: np.ndarray, c: np.ndarray) -> None:
        G[:, self.force_columns] = self.effort_scale * np.eye(model.nu)

    def affine_posture(self, model: mujoco.MjModel, G: np.ndarray, c: np.ndarray) -> None:
        gains = self.posture_gains(model)
        G[:, self.angle_columns] = np.diag(gains)
        c[:] = -gains * self.home_angles

    def affine_velocity(self, model: mujoco.MjModel, G: np.ndarray, c: np.ndarray) -> None:
        G[0:2, _block(self.sensor("base_linvel"), 2)] = np.eye(2)
        G[2, self.sensor("base_angvel").start + 2] = 1.0

    def affine_heading(self, model: mujoco.MjModel, G: np.ndarray, c: np.ndarray) -> None:
        axis, sign = self.heading_axis()
        G[:, _block(self.sensor(axis), 2)] = sign * np.eye(2)

    # --- residual --------------------------------------------------------------------------
    def targets(self, time: np.ndarray) -> dict[str, np.ndarray]:
        """What is subtracted from each term's rows at times (...): arrays that broadcast
        against (..., dim). Position: the goal, or in velocity mode the reference g(t);
        velocity: the command; heading: (cos ψ, sin ψ) of :meth:`heading_target`."""
        rows, out = self.rows, {}
        if "position" in rows:
            out["position"] = self.position_target(time)
        if "velocity" in rows:
            out["velocity"] = self._command
        if "heading" in rows:
            heading = self.heading_target(time)
            out["heading"] = np.stack((np.cos(heading), np.sin(heading)), axis=-1)
        return out

    def position_target(self, time: np.ndarray) -> np.ndarray:
        """Target of the position term (..., 2) at times (...): the goal (with
        ``travel_speed``, the travelling point :meth:`travel_target`), or in velocity mode
        the reference g(t) integrated from the command."""
        if not self.velocity_mode:
            if self.travel_speed > 0.0 and self._travel_from is not None:
                return self.travel_target(time)
            return self.goal
        return self.reference.position(time)

    def travel_target(self, time: np.ndarray) -> np.ndarray:
        """The goal-mode travel reference (..., 2) at times (...) (``travel_speed`` v > 0):

            g(t) = g₀ + u min(v (t − t_u), L)

        with g₀ the point at the last :meth:`update` t_u, u the unit direction from it to the
        goal and L its distance: a point walking to the goal at v and stopping there. At each
        update g₀ ← g(t_u), moved to within ``lead`` of the base (a robot held back is pulled
        by a bounded error, as the velocity mode's reference). The goal's pull alone is a push
        of the same size wherever the goal is: at a riser the Go2 slowed to 0.05-0.1 m/s and
        its footholds, aimed with that velocity, came to where its feet stood."""
        t = np.asarray(time, dtype=float)[..., None]
        speed = 0.0 if self.travel_held else self.travel_speed
        ahead = np.minimum(speed * np.maximum(t - self._travel_time, 0.0),
                           self._travel_left)
        return self._travel_from + self._travel_dir * ahead

    def travel_velocity(self) -> np.ndarray:
        """The travel reference's velocity (world xy) at the last update: u v, slowed to
        L / (one gait cycle) within a cycle's travel of the goal (zero there)."""
        period = 1.0 / self.timing[1]
        if self.travel_held:
            return np.zeros(2)
        speed = min(self.travel_speed, self._travel_left / period)
        return self._travel_dir * speed

    def _advance_travel(self, time: float, qpos: np.ndarray) -> None:
        """Move the travel reference to plan time ``time`` toward the current goal."""
        base = np.asarray(qpos[:2], dtype=float)
        point = base.copy() if self._travel_from is None else self.travel_target(time)
        point = clamp_distance(point, base, self.reference.lead)
        offset = self.goal - point
        left = float(np.linalg.norm(offset))
        self._travel_from, self._travel_time = point, float(time)
        self._travel_dir = offset / left if left > 1e-9 else np.zeros(2)
        self._travel_left = left

    def _hold_travel(self, qpos: np.ndarray, qvel: np.ndarray) -> None:
        """Hold the travel until the next update where a front foot has a step down pending
        (``travel_hold`` > 0, on a map): at the top of the flight down the travel walked on
        while a front foot still stood on the landing's edge, the hips passed it and the
        robot pitched over forward."""
        mg = self.map_ground
        if self.travel_hold <= 0.0 or mg is None or self._home_feet is None:
            self.travel_held = False
            return
        yaw = base_yaw(qpos)
        turn = np.array([[np.cos(yaw), -np.sin(yaw)], [np.sin(yaw), np.cos(yaw)]])
        front = self._home_feet[:, 0] > 0.0
        hips = qpos[0:2] + self._home_feet[front] @ turn.T
        feet = self.feet(qpos, qvel)[0][front, 0:2]
        self.travel_held = step_down_pending(feet, hips, turn[:, 0], mg.map.height,
                                             self.travel_hold)

    def heading_target(self, time: np.ndarray):
        """ψ of the heading term at times (...): the stage's heading or :attr:`heading`, or
        in velocity mode the reference θ(t)."""
        if self.velocity_mode:
            return self.reference.heading(time)
        stage = self.stage
        return self.heading if stage is None or stage.heading is None else stage.heading

    def swing_targets(self, time: np.ndarray) -> np.ndarray:
        """Lift target step(t) (..., nfeet) of each foot at times (...); 0 in stance."""
        duty, _, lift = self.timing
        return step_height(self.clock.phase(time), np.array(self.gait.offsets), duty, lift)

    def planned_stance(self, time: float) -> np.ndarray:
        """Feet without a swing target at ``time``."""
        return self.swing_targets(np.asarray(time)) <= 0.0

    def residual(self, sensordata: np.ndarray, time: np.ndarray) -> np.ndarray:
        r = sensordata @ self.G.T + self.c
        rows = self.rows
        for name, target in self.targets(time).items():
            r[..., rows[name]] -= target
        if self.map_ground is not None:
            self._map_terms(sensordata, r, None)
        at = self._time_terms(time)
        if "gait" in rows:
            step = at["step"]
            gait = r[..., rows["gait"]]
            lift = step + at["ground"]
            r[..., rows["gait"]] = np.where(step > 0, gait - self.foot_height - lift,
                                            self._foothold_rows(sensordata, at["foothold"]))
        self._stance_rows(r, at["stance"], at["anchor"])
        if at["lifted"] is not None and "height" in rows:
            r[..., rows["height"]] += (at["lifted"].sum(axis=-1, keepdims=True)
                                       / len(self.support_feet))
        if "support" in rows:
            r[..., rows["support"]] = self._support(sensordata, at["support"])[0]
        if "overshoot" in rows:
            r[..., rows["overshoot"]] = self._overshoot_rows(sensordata, time, at["step"],
                                                             at["landing"])[0]
        if "path" in rows:
            where = at["path"]
            on = np.repeat(np.isfinite(where[..., 0]), 2, axis=-1)
            path = r[..., rows["path"]] - np.nan_to_num(where).reshape(*where.shape[:-2], -1)
            r[..., rows["path"]] = np.where(on, path, 0.0)
        return r

    def _time_terms(self, time: np.ndarray) -> dict:
        """What the residual takes from the times (...) alone, at each: ``step``
        (:meth:`swing_targets`), ``ground`` (:meth:`swing_ground`), ``foothold``
        (:meth:`_foothold_knots`, None without a foothold plan), ``stance``
        (:meth:`_stance_mask`), ``anchor`` (:meth:`SwingPlan.anchor`, (0, 0) without a
        swing plan) and ``landing`` (:meth:`SwingPlan.landing`: where it is finite, and
        the footholds with NaN as 0, for :meth:`_overshoot_rows`; None without a swing
        plan). The rollouts of one plan share their knots' times, so times whose rows all
        repeat one row are computed for that row once per plan (the plans, the gait's clock
        and timing the same) and broadcast: the same values, elementwise."""
        time = np.asarray(time)
        if time.ndim == 0 or (time.ndim > 1 and not np.all(time == time.reshape(
                -1, time.shape[-1])[:1].reshape(time.shape[-1]))):
            return self._time_terms_at(time)
        row = time.reshape(-1, time.shape[-1])[0]
        key = (row.tobytes(), self.swing_plan, self.foothold_plan, self.timing,
               self.clock.state())
        cached = self._time_cache
        if cached is None or not _same_key(cached[0], key):
            values = self._time_terms_at(row)
            for v in values.values():  # shared by every call of the plan: not to be written
                for a in v if isinstance(v, tuple) else (v,):
                    if isinstance(a, np.ndarray):
                        a.flags.writeable = False
            cached = self._time_cache = (key, values, {})
        values, spread = cached[1], cached[2]
        if time.ndim == 1:
            return values
        lead = time.shape  # the views for a batch's shape, made once per plan (read-only)
        if lead not in spread:
            spread[lead] = {k: _spread(v, lead) for k, v in values.items()}
        return spread[lead]

    def _time_terms_at(self, time: np.ndarray) -> dict:
        """:meth:`_time_terms` computed at ``time``."""
        plan = self.swing_plan
        landing = None
        if plan is not None:
            b = plan.landing(time)
            landing = (np.isfinite(b[..., 0]), np.nan_to_num(b))
        stance = self._stance_mask(time)
        anchor = (0.0, 0.0) if plan is None else plan.anchor(time)
        step, ground = self.swing_targets(time), self.swing_ground(time)
        return {"step": step, "ground": ground,
                "foothold": (None if self.foothold_plan is None
                             else self._foothold_knots(time)),
                "stance": stance, "anchor": anchor, "landing": landing,
                "path": self._swing_path(time),
                "lifted": self._lifted(time, step, ground),
                "support": (None if plan is None or "support" not in self.rows
                            else support_edges(anchor[0], stance, self.SUPPORT_MARGIN))}

    def _lifted(self, time: np.ndarray, step: np.ndarray,
                ground: np.ndarray | float) -> np.ndarray | None:
        """``height_swing: ground``: how far (..., nfeet) each swinging support foot's gait
        target, ρ + B(s) + step(t), stands over ρ plus the ground it counts as standing on
        in the height row at times (...) (:meth:`SwingPlan.counted`; without a swing plan
        the ground B, so its lift alone), 0 in stance; None with ``height_swing: foot``,
        where a swinging foot counts where it is. ``step``, ``ground``: :meth:`swing_targets`
        and :meth:`swing_ground` at ``time``."""
        if self.height_swing != "ground":
            return None
        lifted = step + ground
        if self.swing_plan is not None:
            phase = swing_phase(self.clock.phase(time), np.array(self.gait.offsets),
                                self.timing[0])
            lifted = lifted - self.swing_plan.counted(time, phase)
        return np.where((step > 0.0) & self.support_mask(), lifted, 0.0)

    def _swing_path(self, time: np.ndarray) -> np.ndarray:
        """The path rows' target (..., nfeet, 2) at times (...): each swinging foot's point
        on its swing path (:meth:`SwingPlan.path`), NaN where the rows are 0 (a foot in
        stance, no swing plan). A swinging foot's xy has no other cost of its own: on the
        stairs feet met risers, hovered and came down short on the nosing."""
        plan, nfeet = self.swing_plan, len(self.robot.feet)
        if plan is None or "path" not in self.rows:
            return np.full((*np.shape(time), nfeet, 2), np.nan)
        phase = swing_phase(self.clock.phase(time), np.array(self.gait.offsets),
                            self.timing[0])
        return plan.path(time, phase)

    def _overshoot_rows(self, s: np.ndarray, time: np.ndarray, step: np.ndarray,
                        landing: tuple | None) -> tuple[np.ndarray, np.ndarray]:
        """The overshoot rows (..., nfeet) and where they are active: a swinging foot's
        distance past its swing's foothold b along the travel d, less
        :attr:`OVERSHOOT_MARGIN`, where positive: max(0, d · (f − b) − m); 0 elsewhere
        (``step``, ``landing``: :meth:`swing_targets` and the footholds at ``time``, from
        :meth:`_time_terms`). In its swing a foot's xy has no cost of its own, and on the
        stairs a foot aimed at a tread swung on past it into the next riser."""
        shape = np.broadcast_shapes(np.shape(s)[:-1], np.shape(time))
        nfeet = len(self.robot.feet)
        if self.swing_plan is None:
            return np.zeros((*shape, nfeet)), np.zeros((*shape, nfeet), bool)
        finite, b = landing
        swing = (step > 0.0) & finite
        d = self._travel_direction
        past = np.zeros((*shape, nfeet))
        for i, foot in enumerate(self.robot.feet):
            c = self.sensor(f"{foot}_pos").start
            past[..., i] = ((s[..., c] - b[..., i, 0]) * d[0]
                            + (s[..., c + 1] - b[..., i, 1]) * d[1])
        on = swing & (past > self.OVERSHOOT_MARGIN)
        return np.where(on, past - self.OVERSHOOT_MARGIN, 0.0), on

    def _stance_mask(self, time: np.ndarray) -> np.ndarray:
        """(..., nfeet): the support feet in their planned stance at ``time`` (...) on a
        map with a swing plan (the stance and hold rows are on there), else none."""
        if self.swing_plan is None:
            return np.zeros((*np.shape(time), len(self.robot.feet)), bool)
        return (self.swing_targets(time) <= 0.0) & self.support_mask()

    def _stance_rows(self, r: np.ndarray, on: np.ndarray, anchor: tuple) -> None:
        """The stance and hold rows of ``r`` (f_z and f_xy so far): each foot in its planned
        stance held at its stance point a(t) (:meth:`SwingPlan.anchor`: where it stands,
        then the foothold it lands on), ρ over the map there; 0 elsewhere (``on``,
        ``anchor``: :meth:`_stance_mask` and the anchor (xy, ground) at the knots' times,
        :meth:`_time_terms`). A foot in planned stance has no other cost of its own: without
        these the planner stepped it where it liked, onto the height field's riser cells the
        world has not."""
        rows = self.rows
        if "stance" not in rows and "hold" not in rows:
            return
        xy, z = anchor
        if "stance" in rows:
            height = r[..., rows["stance"]] - self.foot_height - z
            r[..., rows["stance"]] = np.where(on, height, 0.0)
        if "hold" in rows:
            hold = r[..., rows["hold"]]
            where = hold.reshape(*hold.shape[:-1], -1, 2) - xy
            r[..., rows["hold"]] = np.where(on[..., None], where, 0.0).reshape(hold.shape)

    def residual_jacobian(self, sensordata: np.ndarray, time: np.ndarray) -> np.ndarray:
        time = np.asarray(time)
        shape = np.broadcast_shapes(np.shape(sensordata)[:-1], time.shape)
        J = np.broadcast_to(self.G, (*shape, *self.G.shape)).copy()
        if self.map_ground is not None:
            self._map_terms(np.broadcast_to(sensordata, (*shape, self.G.shape[1])), None, J)
        at = self._time_terms(time)
        gait = self.rows.get("gait")
        if gait is not None:
            swing = at["step"] > 0
            J[..., gait, :] *= swing[..., None]
            if self.foothold_plan is not None:
                stance = np.zeros_like(J[..., gait, :])
                self._add_foothold_jacobian(np.broadcast_to(time, shape), stance)
                J[..., gait, :] += np.where(swing[..., None], 0.0, stance)
        if "overshoot" in self.rows:
            rows = self.rows["overshoot"]
            J[..., rows, :] = 0.0
            on = self._overshoot_rows(np.broadcast_to(sensordata, (*shape, self.G.shape[1])),
                                      time, at["step"], at["landing"])[1]
            d = self._travel_direction
            for i, foot in enumerate(self.robot.feet):
                c = self.sensor(f"{foot}_pos").start
                J[..., rows.start + i, c] = np.where(on[..., i], d[0], 0.0)
                J[..., rows.start + i, c + 1] = np.where(on[..., i], d[1], 0.0)
        if "path" in self.rows:
            on = np.repeat(np.isfinite(at["path"][..., 0]), 2, axis=-1)
            J[..., self.rows["path"], :] *= on[..., None]
        if "stance" in self.rows or "hold" in self.rows:
            on = at["stance"]
            if "stance" in self.rows:
                J[..., self.rows["stance"], :] *= on[..., None]
            if "hold" in self.rows:
                J[..., self.rows["hold"], :] *= np.repeat(on, 2, axis=-1)[..., None]
        if "support" in self.rows:
            rows = self.rows["support"]
            J[..., rows, :] = 0.0
            jac = self._support(np.broadcast_to(sensordata, (*shape, self.G.shape[1])),
                                at["support"])[1]
            J[..., rows, _block(self.sensor("com_pos"), 2)] = jac
        return J

    def _support(self, s: np.ndarray, edges: tuple | None) -> tuple[np.ndarray, np.ndarray]:
        """The support rows (..., 2) and their derivative in the centre of mass's xy
        (..., 2, 2) at sensordata s (...) for the support polygons' ``edges`` at the knots
        (zero without a swing plan): :mod:`mpc.tasks.support`."""
        shape = np.shape(s)[:-1]
        if edges is None:
            return np.zeros((*shape, 2)), np.zeros((*shape, 2, 2))
        return support_residual(s[..., _block(self.sensor("com_pos"), 2)], *edges)

    def _foothold_rows(self, s: np.ndarray, on: np.ndarray | None) -> np.ndarray | float:
        """The gait rows (..., nfeet) of the feet in their next stance whose foothold was moved
        (:meth:`plan_footholds`): d · (f − f*); 0 elsewhere, and 0 without a foothold plan.
        ``on``: :meth:`_foothold_knots` at the knots' times."""
        plan = self.foothold_plan
        if plan is None:
            return 0.0
        out = np.zeros((*np.shape(s)[:-1], len(self.robot.feet)))
        for i, foot in enumerate(self.robot.feet):
            c = self.sensor(f"{foot}_pos").start
            out[..., i] = ((s[..., c] - plan.target[i, 0]) * plan.direction[0]
                           + (s[..., c + 1] - plan.target[i, 1]) * plan.direction[1])
        return np.where(on, out, 0.0)

    def _add_foothold_jacobian(self, time: np.ndarray, J: np.ndarray) -> None:
        """Add d to the x, y columns of each foot's gait row where :meth:`_foothold_rows` is
        not 0 (``J``: the gait rows' block, (..., nfeet, ns))."""
        on = self._foothold_knots(time)
        d = self.foothold_plan.direction
        for i, foot in enumerate(self.robot.feet):
            c = self.sensor(f"{foot}_pos").start
            J[..., i, c] += np.where(on[..., i], d[0], 0.0)
            J[..., i, c + 1] += np.where(on[..., i], d[1], 0.0)

    def _foothold_knots(self, time: np.ndarray) -> np.ndarray:
        """(..., nfeet): whether a foot is in its next stance at ``time`` (...) with a moved
        foothold."""
        plan = self.foothold_plan
        t = np.asarray(time)[..., None]
        return plan.moved & (t >= plan.touchdown) & (t < plan.liftoff)

    def plan_footholds(self, time: float, qpos: np.ndarray, qvel: np.ndarray) -> None:
        """On a map, once per plan: each foot's swings within :attr:`FOOTHOLD_LOOKAHEAD`
        cycles of the gait's schedule, each landing on its predicted foothold (the foot's home
        position under the base, moved by the base's velocity to the touchdown and by half the
        stance's travel beyond it: Raibert's heuristic; down a step, where the map under the
        hip at touchdown lies more than :data:`~mpc.tasks.map_swing.DROP` below the ground the
        foot lifts off, under the hip: a Go2 foot landing ahead of its hip past a nosing had
        its calf on the nosing), moved off the map's edges along the
        travel where the edge map says it is not flat (``map_edge`` > 0,
        :meth:`MapGround.safe_foothold`; the first stance's in :attr:`foothold_plan`) or where it
        would land on a foot standing ahead of it (the next touchdown's: the feet that stand
        where they are until then), and the
        ground each swing passes over (:attr:`swing_plan`, :mod:`mpc.tasks.map_swing`): from
        where the foot lifts off (where it stands now, or stood when its current swing began)
        along its path to the foothold."""
        mg = self.map_ground
        if mg is None or self._home_feet is None:
            self.foothold_plan = self.swing_plan = None
            return
        period = 1.0 / self.timing[1]
        grid = period / 100
        times = time + np.arange(0.0, self.FOOTHOLD_LOOKAHEAD * period, grid)
        swing = self.swing_targets(times) > 0.0
        feet = self.feet(qpos, qvel)[0][:, 0:2]
        if self._stance_xy is None:
            self._stance_xy = feet.copy()
            self._committed = np.full_like(feet, np.nan)
        self._stance_xy[~swing[0]] = feet[~swing[0]]
        self._committed[~swing[0]] = np.nan  # a foot that stands commits at its next swing
        v = (self.travel_velocity() if self.travel_speed > 0.0 and not self.velocity_mode
             else np.asarray(qvel[0:2], dtype=float))
        yaw = base_yaw(qpos)
        turn = np.array([[np.cos(yaw), -np.sin(yaw)], [np.sin(yaw), np.cos(yaw)]])
        direction = self._travel(v, turn[:, 0])
        self._travel_direction = direction
        nfeet, most = len(self.robot.feet), self.SWINGS_PLANNED
        plan = FootholdPlan(np.full(nfeet, np.inf), np.full(nfeet, np.inf), np.zeros((nfeet, 2)),
                            np.zeros(nfeet, bool), direction)
        stood = self._stance_xy.copy()
        swings = SwingPlan(*(np.full((nfeet, most), np.nan) for _ in range(5)), slack=grid,
                           land_xy=np.full((nfeet, most, 2), np.nan), stood_xy=stood,
                           stood=mg.map.height(stood[:, 0], stood[:, 1]) + mg.shift,
                           lift_xy=np.full((nfeet, most, 2), np.nan), rise=self.map_rise)
        spacing = mg.map.resolution / 4
        for i in range(nfeet):
            ups = np.flatnonzero(~swing[:-1, i] & swing[1:, i]) + 1
            downs = np.flatnonzero(swing[:-1, i] & ~swing[1:, i]) + 1
            start, path = self._stance_xy[i], [self._stance_xy[i]]
            if swing[0, i]:  # in a swing now: it began before this plan
                ups = np.r_[0, ups]
                path.append(feet[i])
            for k, up in enumerate(ups[:most]):
                later = downs[downs > up]
                if len(later) == 0:
                    break
                down = later[0]
                after = ups[ups > down]
                stance = (times[after[0]] if len(after) else times[-1]) - times[down]
                lifted = float(mg.map.height(*start))  # the ground the swing leaves
                hip = qpos[0:2] + turn @ self._home_feet[i] + v * (times[down] - time)
                # Raibert's lead (half the stance's travel), but not down a step: there a foot
                # ahead of its hip has its calf sloping back over the nosing, and on it
                lead = stance / 2 if mg.map.height(*hip) > lifted - DROP else 0.0
                aim = hip + v * lead
                target = None
                if mg.edge_map is not None:
                    # the feet that stand where they are now until this touchdown (those
                    # lifting at its instant too: a swing leaves the ground slowly)
                    occupied = (self._stance_xy[[j for j in range(nfeet) if j != i
                                                 and not swing[:down, j].any()]]
                                if k == 0 else None)
                    target = mg.safe_foothold(aim, direction, occupied)
                    lower = mg.within_climb(aim if target is None else target, direction,
                                            lifted)
                    target = target if lower is None else lower
                if k == 0 and swing[0, i]:  # a foothold moved in this swing stays chosen
                    if np.isfinite(self._committed[i, 0]):
                        target = self._committed[i]
                    elif target is not None:
                        self._committed[i] = target
                land = aim if target is None else target
                if k == 0:
                    plan.touchdown[i] = times[down]
                    plan.liftoff[i] = times[after[0]] if len(after) else np.inf
                    if target is not None:
                        plan.target[i], plan.moved[i] = target, True
                h0, h1 = lifted + mg.shift, float(mg.map.height(*land)) + mg.shift
                over = path_points(np.array([*path, land]), spacing)
                top = max(h0, h1, mg.highest_along(over) + mg.shift)
                swings.liftoff[i, k] = -np.inf if up == 0 else times[up]
                swings.touchdown[i, k] = times[down]
                swings.start[i, k], swings.top[i, k], swings.land[i, k] = h0, top, h1
                swings.land_xy[i, k] = land
                swings.lift_xy[i, k] = start
                start, path = land, [land]
        self.foothold_plan = plan if mg.edge_map is not None else None
        self.swing_plan = swings

    @staticmethod
    def _travel(v: np.ndarray, heading: np.ndarray) -> np.ndarray:
        """The direction footholds are moved along (off an edge, back within a climb): the
        base's heading, turned back when the base walks backwards. Not the velocity's
        direction (as before 2026-11-27), which is noisy when the base slows at a riser: with
        the true state the Go2's feet were moved along a travel 40-70° off its heading, one
        37 cm sideways onto the third tread's corner (y −0.5 m), and it fell."""
        return heading if float(v @ heading) >= 0.0 else -heading

    def swing_ground(self, time: np.ndarray) -> np.ndarray | float:
        """The ground B (..., nfeet) each swinging foot is lifted over at times (...)
        (:mod:`mpc.tasks.map_swing`); 0 without a swing plan (off a map)."""
        if self.swing_plan is None:
            return 0.0
        phase = swing_phase(self.clock.phase(time), np.array(self.gait.offsets),
                            self.timing[0])
        return self.swing_plan.ground(time, phase)

    def _map_terms(self, s: np.ndarray, r: np.ndarray | None, J: np.ndarray | None) -> None:
        """The map's part of the height row (:mod:`mpc.tasks.map_ground`): subtract
        H_b(p) − mean_S H_b(f) (the body map under the base less its mean under the support
        feet) from ``r``, or add its derivative to ``J``. (The gait rows' ground, B(t) of
        :meth:`swing_ground`, depends on time alone.)"""
        mg, rows = self.map_ground, self.rows
        if "height" in rows:
            feet = self.support_feet
            cols = [self.sensor("base_pos"),
                    *(self.sensor(f"{self.robot.feet[i]}_pos") for i in feet)]
            scales = [1.0, *(-1.0 / len(feet) for _ in feet)]
            apply = mg.subtract_all if J is None else mg.differentiate_all
            apply(mg.body_map, r if J is None else J, s, rows["height"].start, cols, scales)

    def update(self, time: float, qpos: np.ndarray, qvel: np.ndarray) -> None:
        """Once per plan: the velocity reference and gait timing (velocity mode), the gait
        clock's cadence, the stages (goal mode: made at the first call; each that is done
        gives way to the next) and the travel reference (``travel_speed``), then the ground
        and the footholds (:meth:`update_ground`)."""
        if self.velocity_mode:
            self.reference.advance(time, qpos, self._command)
            self.timing = self.speed_gait.timing(self.gait, self._command)
        self.clock.set_cadence(self.timing[1], time)
        if self.velocity_mode:
            self.update_ground(time, qpos, qvel)
            return
        self.advance_stages(time, qpos)
        if self.travel_speed > 0.0:
            self._advance_travel(time, qpos)
            self._hold_travel(qpos, qvel)
        self.update_ground(time, qpos, qvel)  # after the travel: the footholds read it


def add_frame_sensor(spec: mujoco.MjSpec, name: str, kind: str, site: str) -> None:
    """Add sensor ``name``, the position or an axis (``kind``: a key of
    :data:`FRAME_SENSORS`) of ``site``, unless the model has a sensor of that name already."""
    if name not in [s.name for s in spec.sensors]:
        spec.add_sensor(name=name, type=FRAME_SENSORS[kind], objtype=mujoco.mjtObj.mjOBJ_SITE,
                        objname=site)


def _same_key(a: tuple, b: tuple) -> bool:
    """Keys of :meth:`LeggedTask._time_terms`: the plans the same objects, the rest equal."""
    return (a[0] == b[0] and a[1] is b[1] and a[2] is b[2] and a[3] == b[3]
            and a[4] == b[4])


def _spread(value, lead: tuple[int, ...]):
    """A time term computed for one row of times (T, ...) broadcast to times of shape
    ``lead`` (..., T); a constant (no plan) as it is."""
    if isinstance(value, tuple):
        return tuple(_spread(v, lead) for v in value)
    if value is None or np.ndim(value) == 0:
        return value
    return np.broadcast_to(value, (*lead, *np.shape(value)[1:]))


def _block(columns: slice, width: int) -> slice:
    """The first ``width`` columns from the start of ``columns``."""
    return slice(columns.start, columns.start + width)

