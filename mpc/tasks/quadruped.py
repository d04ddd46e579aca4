"""Quadruped locomotion on flat ground: walk to a goal (or a list of waypoints) with a gait.

Sensors (on the robot's base site ``imu``, its feet and its base subtree):
base position p, base z-axis z, foot positions f₁..f₄ (order FL, RL, FR, RR), subtree centre of
mass c and its velocity ċ, actuator forces τ and actuated joint angles q.

Residual terms (MJPC's quadruped terms, position on the base instead of a head point):

    upright   z − e_z                                           smooth_abs
    height    p_z − mean(f_z) − h                                smooth_abs
    position  p_xy − g_xy                                        l2
    gait      per foot in swing: f_z − (ρ + step(t)), else 0     smooth_abs
    balance   c_xy + ċ_xy √(2h/g) − mean(f_xy)  (capture point)  l2
    effort    σ τ                                                quadratic
    posture   γ ⊙ (q − q_home)                                   quadratic
    velocity  (v_x − ĉ_x, v_y − ĉ_y, ω_z − ĉ_ω)  (velocity mode)  quadratic
    yaw       x_xy − (cos θ(t), sin θ(t))         (velocity mode)  smooth_abs

with h the standing height over the feet, ρ the height a foot site rests at when its foot
carries the standing robot, g the goal, step(t) the gait's lift target (:mod:`mpc.tasks.gait`),
σ an effort scale and γ per-joint posture gains. Height and balance use the mean over the
support feet (all four here; subclasses such as :mod:`mpc.tasks.quadruped_biped` choose fewer,
and other posture gains). The residual is affine in the sensors, r = G(t) s + c(t), so
∂r/∂s = G(t) is exact; only the gait rows of G depend on time (zero in stance).

ρ is the planning model's, measured by letting the robot stand
(:func:`robots.statics.resting_site_heights`), not the foot sphere's radius: the feet's soft
contacts sink 13-17 mm under the robot's weight. With the radius as ρ every foot was asked to
be that far off the ground from the first instant of its swing window, so where the trot's two
windows meet all four feet had to leave the ground together: the robot hopped twice a stride,
and with a real robot's delays in the loop the hops grew into stumbles.

Modes: ``goal`` seeks the goal (or the waypoints). ``velocity`` tracks a commanded body-frame
twist ĉ = (ĉ_x, ĉ_y, ĉ_ω) (:mod:`mpc.app.commands`, set each plan by :meth:`set_command`): v is the
base's linear velocity in its own frame (a velocimeter on ``imu``) and ω_z its yaw rate (a
gyro); the position term and the yaw term (x the base's x-axis) follow the reference pose integrated
from the command, g(t) and θ(t) of :mod:`mpc.tasks.velocity`; at zero command that is a fixed
pose, which holds the robot in place. The velocity term alone makes the planner chase the
trot's own within-stride sway of velocity and yaw rate (it fell trotting in place at weight
2); the integrated reference tracks the command on average and corrects drift, so the
velocity term keeps a small weight. The gait's timing follows
the commanded speed (:class:`mpc.tasks.gait.SpeedGait`): standing at zero command.
"""

from __future__ import annotations

from typing import ClassVar

import mujoco
import numpy as np

from mpc.tasks.gait import QUADRUPED_GAITS, GaitClock, SpeedGait, step_height
from mpc.tasks.task_base import CostTerm, Task
from mpc.tasks.velocity import VELOCITY_MODE_RANGES, VelocityMode, VelocityReference
from robots.info import RobotInfo
from robots.statics import resting_site_heights

GRAVITY = 9.81

DEFAULT_WEIGHTS = {
    "upright": 1.0, "height": 1.0, "position": 0.2, "gait": 2.0,
    "balance": 0.2, "effort": 0.03, "posture": 0.02, "velocity": 0.1,
    "yaw": 1.0,
}
DEFAULT_PARAMS = {
    "upright": 0.05, "height": 0.04, "position": 0.1, "gait": 0.03,
    "balance": 0.1, "effort": 0.0, "posture": 0.0, "velocity": 0.0,
    "yaw": 0.1,
}
NORMS = {
    "upright": "smooth_abs", "height": "smooth_abs", "position": "l2", "gait": "smooth_abs",
    "balance": "l2", "effort": "quadratic", "posture": "quadratic", "velocity": "quadratic",
    "yaw": "smooth_abs",
}
MODES = ("goal", "velocity")
#: Terms of velocity mode only.
VELOCITY_TERMS = ("velocity", "yaw")
# Posture gain per joint of a leg: abduction, hip, knee.
POSTURE_GAINS = (2.0, 1.0, 1.0)


class QuadrupedFlat(VelocityMode, Task):
    name = "quadruped_flat"
    description = "walk to a goal or through waypoints on flat ground with a chosen gait"
    #: Terms (in residual order) with their weights, norm parameters and norms.
    default_weights: ClassVar[dict[str, float]] = DEFAULT_WEIGHTS
    default_params: ClassVar[dict[str, float]] = DEFAULT_PARAMS
    norms: ClassVar[dict[str, str]] = NORMS

    #: Bounds of the options, read by mpc.app.schema.check_kwargs (see mpc/app/schema.py).
    RANGES: ClassVar[dict[str, dict[str, float]]] = {
        "goal": {"min": -1000.0, "max": 1000.0},  # m, also every waypoint's x and y
        "height": {"gt": 0.0, "max": 2.0},
        "foot_height": {"min": 0.0, "max": 0.2},
        "effort_scale": {"gt": 0.0, "max": 100.0},
        "waypoint_tolerance": {"gt": 0.0, "max": 10.0},
        "weights": {"min": 0.0, "max": 1e6},
        **VELOCITY_MODE_RANGES,
    }

    def __init__(self, robot: RobotInfo, gait: str = "trot", goal=(0.0, 0.0),
                 height: float = 0.25, foot_height: float | None = None,
                 effort_scale: float = 0.02, waypoint_tolerance: float = 0.15,
                 weights: dict | None = None, mode: str = "goal", lead: float = 0.2,
                 cadence_gain: float = 1.0, max_cadence: float = 3.5,
                 lift_gain: float = 0.03, max_lift: float = 0.08, hip_radius: float = 0.25,
                 stand_speed: float = 0.05):
        """``foot_height`` (ρ) defaults to the resting height of the feet in the planning
        model (set by :meth:`bind`).
        ``mode``: ``goal`` or ``velocity``; ``lead`` (m) bounds the velocity mode's position
        reference around the base; ``cadence_gain`` … ``stand_speed``: the speed-adapted gait
        timing of velocity mode (:class:`mpc.tasks.gait.SpeedGait`)."""
        super().__init__(robot)
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; choose from {', '.join(MODES)}")
        self.mode = mode
        if gait not in QUADRUPED_GAITS:
            raise ValueError(f"unknown gait {gait!r}; choose from {', '.join(QUADRUPED_GAITS)}")
        self.gait = QUADRUPED_GAITS[gait]
        self.height = float(height)
        self._given_foot_height = None if foot_height is None else float(foot_height)
        #: ρ (m): the gait targets' foot height on the ground, known once bound to a model.
        self.foot_height = self._given_foot_height
        self.effort_scale = float(effort_scale)
        self.waypoint_tolerance = float(waypoint_tolerance)
        self.waypoints = _as_waypoints(goal)
        self.waypoint_index = 0
        self.clock = GaitClock(self.gait.cadence)
        #: Gait timing in force (duty, cadence, lift): the gait's, or speed-adapted.
        self.timing = (self.gait.duty, self.gait.cadence, self.gait.amplitude)
        self.speed_gait = SpeedGait(cadence_gain, max_cadence, lift_gain, max_lift,
                                    stand_speed, hip_radius)
        self.reference = VelocityReference(lead)
        self._command = np.zeros(3)
        unknown = set(weights or {}) - set(self.default_weights)
        if unknown:
            raise ValueError(f"unknown cost term(s) {', '.join(sorted(unknown))} in weights; "
                             f"terms: {', '.join(self.default_weights)}")
        w = dict(self.default_weights)
        w.update(weights or {})
        dims = self._term_dims(len(robot.motor_joints))
        self.terms = [CostTerm(k, dims[k], self.norms[k], self.default_params[k], float(w[k]))
                      for k in self.default_weights
                      if k not in VELOCITY_TERMS or self.velocity_mode]

    def _term_dims(self, nu: int) -> dict[str, int]:
        return {"upright": 3, "height": 1, "position": 2, "gait": len(self.robot.feet),
                "balance": 2, "effort": nu, "posture": nu, "velocity": 3,
                "yaw": 2}

    @property
    def support_feet(self) -> tuple[int, ...]:
        """Indices (in ``robot.feet``) of the feet that carry the robot: height and balance
        are measured from their mean."""
        return tuple(range(len(self.robot.feet)))

    def posture_gains(self, model: mujoco.MjModel) -> np.ndarray:
        """Per-joint gains γ of the posture term, in ``model``'s actuator order (legs of
        abduction, hip, knee)."""
        return np.tile(POSTURE_GAINS, model.nu // 3 + 1)[: model.nu]

    # --- model -----------------------------------------------------------------------------
    def add_sensors(self, spec: mujoco.MjSpec) -> None:
        site, body = mujoco.mjtObj.mjOBJ_SITE, mujoco.mjtObj.mjOBJ_BODY
        S = mujoco.mjtSensor
        spec.add_sensor(name="base_pos", type=S.mjSENS_FRAMEPOS, objtype=site, objname="imu")
        spec.add_sensor(name="base_zaxis", type=S.mjSENS_FRAMEZAXIS, objtype=site, objname="imu")
        for foot in self.robot.feet:
            spec.add_sensor(name=f"{foot}_pos", type=S.mjSENS_FRAMEPOS, objtype=site,
                            objname=foot)
        base = self.robot.base_body
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
            spec.add_sensor(name="base_angvel", type=S.mjSENS_GYRO, objtype=site,
                            objname="imu")
            if "base_xaxis" not in [x.name for x in spec.sensors]:
                spec.add_sensor(name="base_xaxis", type=S.mjSENS_FRAMEXAXIS, objtype=site,
                                objname="imu")

    def bind(self, model: mujoco.MjModel) -> None:
        super().bind(model)
        key = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, self.robot.home_key)
        joint_qposadr = model.jnt_qposadr[model.actuator_trnid[:, 0]]
        self.home_angles = model.key_qpos[key, joint_qposadr].copy()
        if self._given_foot_height is None:
            self.foot_height = float(np.mean(
                resting_site_heights(model, self.robot.home_key, self.robot.feet)))
        self._build_affine_map(model)

    def _build_affine_map(self, model: mujoco.MjModel) -> None:
        """G (nr, ns) and the constant part of c (nr) of r = G(t) s + c(t)."""
        nr, ns, nu = self.nresidual, model.nsensordata, model.nu
        G = np.zeros((nr, ns))
        c = np.zeros(nr)
        sl = dict(zip([t.name for t in self.terms], self.term_slices, strict=False))
        base, zaxis = self.sensor("base_pos"), self.sensor("base_zaxis")
        feet = [self.sensor(f"{self.robot.feet[i]}_pos") for i in self.support_feet]
        nfeet = len(feet)
        # upright
        r = sl["upright"].start
        G[r : r + 3, zaxis] = np.eye(3)
        c[r + 2] = -1.0
        # height
        r = sl["height"].start
        G[r, base.start + 2] = 1.0
        for f in feet:
            G[r, f.start + 2] -= 1.0 / nfeet
        c[r] = -self.height
        # position (goal added at evaluation)
        r = sl["position"].start
        G[r : r + 2, base.start : base.start + 2] = np.eye(2)
        # gait (swing mask and step target applied at evaluation)
        r = sl["gait"].start
        for i, foot in enumerate(self.robot.feet):
            G[r + i, self.sensor(f"{foot}_pos").start + 2] = 1.0
        # balance
        r = sl["balance"].start
        fall_time = np.sqrt(2 * self.height / GRAVITY)
        com, comvel = self.sensor("com_pos"), self.sensor("com_vel")
        G[r : r + 2, com.start : com.start + 2] = np.eye(2)
        G[r : r + 2, comvel.start : comvel.start + 2] = fall_time * np.eye(2)
        for f in feet:
            G[r : r + 2, f.start : f.start + 2] -= np.eye(2) / nfeet
        # effort
        r = sl["effort"].start
        first = self.sensor(f"{mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, 0)}_force")
        G[r : r + nu, first.start : first.start + nu] = self.effort_scale * np.eye(nu)
        # posture
        r = sl["posture"].start
        first = self.sensor(f"{mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, 0)}_angle")
        gains = self.posture_gains(model)
        G[r : r + nu, first.start : first.start + nu] = np.diag(gains)
        c[r : r + nu] = -gains * self.home_angles
        # velocity (command subtracted at evaluation)
        if self.velocity_mode:
            r = sl["velocity"].start
            lin, ang = self.sensor("base_linvel"), self.sensor("base_angvel")
            G[r : r + 2, lin.start : lin.start + 2] = np.eye(2)
            G[r + 2, ang.start + 2] = 1.0
            self._velocity_rows = sl["velocity"]
            r = sl["yaw"].start
            x = self.sensor("base_xaxis")
            G[r : r + 2, x.start : x.start + 2] = np.eye(2)
            self._yaw_rows = sl["yaw"]
        self._G, self._c = G, c
        self._gait_rows = sl["gait"]
        self._position_rows = sl["position"]

    # --- residual --------------------------------------------------------------------------
    def _swing_targets(self, time: np.ndarray) -> np.ndarray:
        duty, _, lift = self.timing
        return step_height(self.clock.phase(time), np.array(self.gait.offsets), duty, lift)

    def position_target(self, time: np.ndarray) -> np.ndarray:
        """Target of the position term (..., 2) at times (...): the goal, or in velocity
        mode the reference g(t) integrated from the command."""
        if not self.velocity_mode:
            return self.goal
        return self.reference.position(time)

    def planned_stance(self, time: float) -> np.ndarray:
        """Feet without a swing target at ``time``."""
        return self._swing_targets(np.asarray(time)) <= 0.0

    def residual(self, sensordata: np.ndarray, time: np.ndarray) -> np.ndarray:
        r = sensordata @ self._G.T + self._c
        r[..., self._position_rows] -= self.position_target(time)
        if self.velocity_mode:
            r[..., self._velocity_rows] -= self._command
            heading = self.reference.heading(time)
            r[..., self._yaw_rows] -= np.stack((np.cos(heading), np.sin(heading)), axis=-1)
        step = self._swing_targets(time)
        gait = r[..., self._gait_rows]
        r[..., self._gait_rows] = np.where(step > 0, gait - self.foot_height - step, 0.0)
        return r

    def residual_jacobian(self, sensordata: np.ndarray, time: np.ndarray) -> np.ndarray:
        time = np.asarray(time)
        J = np.broadcast_to(self._G, (*time.shape, *self._G.shape)).copy()
        swing = self._swing_targets(time) > 0
        J[..., self._gait_rows, :] *= swing[..., None]
        return J

    # --- task state ------------------------------------------------------------------------
    @property
    def goal(self) -> np.ndarray | None:
        return None if self.velocity_mode else self.waypoints[self.waypoint_index]

    def set_goal(self, xy) -> None:
        if self.velocity_mode:
            raise NotImplementedError("velocity mode has no goal")
        self.waypoints[self.waypoint_index] = np.asarray(xy, dtype=float)[:2]

    def update(self, time: float, qpos: np.ndarray, qvel: np.ndarray) -> None:
        if self.velocity_mode:
            self.reference.advance(time, qpos, self._command)
            self.timing = self.speed_gait.timing(self.gait, self._command)
        self.clock.set_cadence(self.timing[1], time)
        last = len(self.waypoints) - 1
        if (self.waypoint_index < last
                and np.linalg.norm(qpos[:2] - self.goal) < self.waypoint_tolerance):
            self.waypoint_index += 1


def _as_waypoints(goal) -> np.ndarray:
    """A goal [x, y] or a list of waypoints [[x, y], ...] as an (n, 2) array."""
    a = np.asarray(goal, dtype=float)
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2 or a.shape[1] != 2 or a.shape[0] == 0:
        raise ValueError(f"goal must be [x, y] or a list of [x, y] waypoints, got {goal!r}")
    return a.copy()
