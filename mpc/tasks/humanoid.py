"""Humanoid balance and stepping on flat ground (H1, legs only): stand, step in place, walk to a
goal.

Sensors (on the pelvis site ``imu``, the two foot sites, the pelvis subtree): pelvis position
p, pelvis z- and x-axes z_p, x_p, foot positions f_L, f_R and foot z-axes z_L, z_R (feet ordered
left, right; a foot site sits midway between its heel and toe sphere centres), subtree centre
of mass c and its velocity ċ, actuator forces τ and actuated joint angles q.

Residual terms:

    height        p_z − mean(f_z) − h                                      smooth_abs
    upright       z_p − e_z                                                smooth_abs
    feet_upright  (z_L)_xy, (z_R)_xy  (soles flat)                          smooth_abs
    heading       (x_p)_xy − (cos ψ, sin ψ)                                smooth_abs
    position      p_xy − g_xy                                              l2
    gait          per foot in swing: f_z − (ρ + step(t)), else 0           smooth_abs
    balance       b − Π(b),  b = c_xy + T ċ_xy  (capture point)            l2
    effort        σ τ                                                      quadratic
    posture       q − q_home                                               quadratic
    velocity      (v_x − ĉ_x, v_y − ĉ_y, ω_z − ĉ_ω)   (velocity mode)     quadratic

with h the pelvis height over the feet, ψ the heading, g the goal, ρ the foot radius, step(t)
the gait's lift target (:mod:`mpc.tasks.gait`), T = √(z_c/g₀) the time constant of the linear
inverted pendulum of CoM height z_c, σ an effort scale, and Π the projection onto the segment
between the feet shortened by a margin μ at each end:

    m = (f_L + f_R)/2,  d = f_R − f_L,  ℓ = |d|,  a = d/ℓ,  L = max(ℓ/2 − μ, 0)   (all xy)
    Π(b) = m + clamp((b − m)·a, −L, L) a.

So the capture point may move freely across the stance width but must stay on the line through
the feet (a two-sphere foot is a line contact and resists almost no roll). All terms but balance
are affine in the sensors, r = G(t) s + c(t); balance is nonlinear in the foot positions and its
exact Jacobian is derived in :func:`segment_residual`.

Before ``goal_time`` the goal is the pelvis position at the first plan (step or stand in place);
from then on the goal (or the list of waypoints) of the configuration.

In velocity mode (as in :mod:`mpc.tasks.quadruped`) the task tracks a commanded body-frame twist
ĉ: v is the pelvis velocity in its own frame (velocimeter), ω_z its yaw rate (gyro); position
and heading follow the reference g(t), θ(t) integrated from the command
(:mod:`mpc.tasks.velocity`) instead of the goal and ψ; the gait timing adapts to the commanded
speed (:class:`mpc.tasks.gait.SpeedGait`).
"""

from __future__ import annotations

import math
from typing import ClassVar

import mujoco
import numpy as np

from mpc.tasks.gait import BIPED_GAITS, Gait, GaitClock, SpeedGait, step_height
from mpc.tasks.quadruped import MODES, _as_waypoints
from mpc.tasks.task_base import CostTerm, Task
from mpc.tasks.velocity import VELOCITY_MODE_RANGES, VelocityMode, VelocityReference
from robots.info import RobotInfo

GRAVITY = 9.81

DEFAULT_WEIGHTS = {
    "height": 5.0, "upright": 4.0, "feet_upright": 1.0, "heading": 1.0, "position": 3.0,
    "gait": 10.0, "balance": 5.0, "effort": 0.1, "posture": 0.5, "velocity": 0.5,
}
DEFAULT_PARAMS = {
    "height": 0.05, "upright": 0.05, "feet_upright": 0.05, "heading": 0.1, "position": 0.1,
    "gait": 0.02, "balance": 0.05, "effort": 0.0, "posture": 0.0, "velocity": 0.0,
}
NORMS = {
    "height": "smooth_abs", "upright": "smooth_abs", "feet_upright": "smooth_abs",
    "heading": "smooth_abs", "position": "l2", "gait": "smooth_abs", "balance": "l2",
    "effort": "quadratic", "posture": "quadratic", "velocity": "quadratic",
}


class HumanoidFlat(VelocityMode, Task):
    name = "humanoid_flat"
    description = "humanoid: stand, step in place and walk to a goal on flat ground"

    #: Bounds of the options, read by mpc.app.schema.check_kwargs (see mpc/app/schema.py).
    RANGES: ClassVar[dict[str, dict[str, float]]] = {
        "goal": {"min": -1000.0, "max": 1000.0},
        "goal_time": {"min": 0.0, "max": 86400.0},
        "height": {"gt": 0.0, "max": 3.0},
        "heading": {"min": -math.tau, "max": math.tau},
        "duty": {"min": 0.5, "max": 1.0},
        "cadence": {"gt": 0.0, "max": 10.0},
        "step_height": {"min": 0.0, "max": 0.5},
        "balance_margin": {"min": 0.0, "max": 0.5},
        "effort_scale": {"gt": 0.0, "max": 100.0},
        "waypoint_tolerance": {"gt": 0.0, "max": 10.0},
        "weights": {"min": 0.0, "max": 1e6},
        **VELOCITY_MODE_RANGES,
    }

    def __init__(self, robot: RobotInfo, gait: str = "stand", goal: list = (0.0, 0.0),
                 goal_time: float = 0.0, height: float = 1.01, heading: float = 0.0,
                 duty: float | None = None, cadence: float | None = None,
                 step_height: float | None = None, balance_margin: float = 0.05,
                 effort_scale: float = 0.01, waypoint_tolerance: float = 0.15,
                 weights: dict | None = None, mode: str = "goal", lead: float = 0.2,
                 cadence_gain: float = 1.0, max_cadence: float = 2.0, lift_gain: float = 0.0,
                 max_lift: float = 0.1, hip_radius: float = 0.1, stand_speed: float = 0.05):
        """``mode``, ``lead`` and ``cadence_gain`` … ``stand_speed``: velocity mode, as in
        :class:`mpc.tasks.quadruped.QuadrupedFlat`."""
        super().__init__(robot)
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; choose from {', '.join(MODES)}")
        self.mode = mode
        if len(robot.feet) != 2:
            raise ValueError(f"{self.name} needs a robot with two feet, {robot.name} has "
                             f"{len(robot.feet)}")
        if gait not in BIPED_GAITS:
            raise ValueError(f"unknown gait {gait!r}; choose from {', '.join(BIPED_GAITS)}")
        base = BIPED_GAITS[gait]
        self.gait = Gait(base.name, base.offsets,
                         base.duty if duty is None else float(duty),
                         base.cadence if cadence is None else float(cadence),
                         base.amplitude if step_height is None else float(step_height))
        if not 0.5 <= self.gait.duty <= 1.0:
            raise ValueError(f"duty must be in [0.5, 1] (a foot always on the ground), "
                             f"got {self.gait.duty}")
        self.height = float(height)
        self.foot_radius = float(robot.foot_radius)
        self.heading = float(heading)
        self.goal_time = float(goal_time)
        self.balance_margin = float(balance_margin)
        self.effort_scale = float(effort_scale)
        self.waypoint_tolerance = float(waypoint_tolerance)
        self.waypoints = _as_waypoints(goal)
        self.waypoint_index = 0
        self.start_xy: np.ndarray | None = None
        self.active = self.goal_time <= 0.0
        self.clock = GaitClock(self.gait.cadence)
        #: Gait timing in force (duty, cadence, lift): the gait's, or speed-adapted.
        self.timing = (self.gait.duty, self.gait.cadence, self.gait.amplitude)
        self.speed_gait = SpeedGait(cadence_gain, max_cadence, lift_gain, max_lift,
                                    stand_speed, hip_radius)
        self.reference = VelocityReference(lead)
        self._command = np.zeros(3)
        unknown = set(weights or {}) - set(DEFAULT_WEIGHTS)
        if unknown:
            raise ValueError(f"unknown cost term(s) {', '.join(sorted(unknown))} in weights; "
                             f"terms: {', '.join(DEFAULT_WEIGHTS)}")
        w = dict(DEFAULT_WEIGHTS)
        w.update(weights or {})
        nu = len(robot.motor_joints) - len(robot.locked_joints)
        dims = {"height": 1, "upright": 3, "feet_upright": 4, "heading": 2, "position": 2,
                "gait": 2, "balance": 2, "effort": nu, "posture": nu, "velocity": 3}
        self.terms = [CostTerm(k, dims[k], NORMS[k], DEFAULT_PARAMS[k], float(w[k]))
                      for k in DEFAULT_WEIGHTS if k != "velocity" or self.velocity_mode]

    # --- model -----------------------------------------------------------------------------
    def add_sensors(self, spec: mujoco.MjSpec) -> None:
        site, body = mujoco.mjtObj.mjOBJ_SITE, mujoco.mjtObj.mjOBJ_BODY
        S = mujoco.mjtSensor
        spec.add_sensor(name="base_pos", type=S.mjSENS_FRAMEPOS, objtype=site, objname="imu")
        spec.add_sensor(name="base_zaxis", type=S.mjSENS_FRAMEZAXIS, objtype=site, objname="imu")
        spec.add_sensor(name="base_xaxis", type=S.mjSENS_FRAMEXAXIS, objtype=site, objname="imu")
        for foot in self.robot.feet:
            spec.add_sensor(name=f"{foot}_pos", type=S.mjSENS_FRAMEPOS, objtype=site,
                            objname=foot)
            spec.add_sensor(name=f"{foot}_zaxis", type=S.mjSENS_FRAMEZAXIS, objtype=site,
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

    def bind(self, model: mujoco.MjModel) -> None:
        super().bind(model)
        key = model.key(self.robot.home_key)
        self.home_angles = key.qpos[model.jnt_qposadr[model.actuator_trnid[:, 0]]].copy()
        data = mujoco.MjData(model)
        mujoco.mj_resetDataKeyframe(model, data, key.id)
        mujoco.mj_forward(model, data)
        com_height = data.subtree_com[model.body(self.robot.base_body).id][2]
        self.balance_time = float(np.sqrt(com_height / GRAVITY))
        self._build_affine_map(model)

    def _build_affine_map(self, model: mujoco.MjModel) -> None:
        """G (nr, ns) and the constant part of c (nr) of the affine terms, r = G(t) s + c(t)."""
        nr, ns, nu = self.nresidual, model.nsensordata, model.nu
        G = np.zeros((nr, ns))
        c = np.zeros(nr)
        sl = dict(zip([t.name for t in self.terms], self.term_slices, strict=False))
        base = self.sensor("base_pos")
        feet = [self.sensor(f"{f}_pos") for f in self.robot.feet]
        r = sl["height"].start
        G[r, base.start + 2] = 1.0
        for f in feet:
            G[r, f.start + 2] -= 0.5
        c[r] = -self.height
        r = sl["upright"].start
        G[r : r + 3, self.sensor("base_zaxis")] = np.eye(3)
        c[r + 2] = -1.0
        r = sl["feet_upright"].start
        for i, foot in enumerate(self.robot.feet):
            z = self.sensor(f"{foot}_zaxis")
            G[r + 2 * i : r + 2 * i + 2, z.start : z.start + 2] = np.eye(2)
        r = sl["heading"].start
        x = self.sensor("base_xaxis")
        G[r : r + 2, x.start : x.start + 2] = np.eye(2)
        c[r : r + 2] = -np.cos(self.heading), -np.sin(self.heading)
        r = sl["position"].start
        G[r : r + 2, base.start : base.start + 2] = np.eye(2)
        r = sl["gait"].start
        for i, f in enumerate(feet):
            G[r + i, f.start + 2] = 1.0
        r = sl["effort"].start
        first = self.sensor(f"{mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, 0)}_force")
        G[r : r + nu, first.start : first.start + nu] = self.effort_scale * np.eye(nu)
        r = sl["posture"].start
        first = self.sensor(f"{mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, 0)}_angle")
        G[r : r + nu, first.start : first.start + nu] = np.eye(nu)
        c[r : r + nu] = -self.home_angles
        if self.velocity_mode:  # heading target and command subtracted at evaluation
            c[sl["heading"]] = 0.0
            r = sl["velocity"].start
            lin, ang = self.sensor("base_linvel"), self.sensor("base_angvel")
            G[r : r + 2, lin.start : lin.start + 2] = np.eye(2)
            G[r + 2, ang.start + 2] = 1.0
        self._G, self._c = G, c
        self._rows = sl

    # --- residual --------------------------------------------------------------------------
    def _swing_targets(self, time: np.ndarray) -> np.ndarray:
        duty, _, lift = self.timing
        return step_height(self.clock.phase(time), np.array(self.gait.offsets), duty, lift)

    def planned_stance(self, time: float) -> np.ndarray:
        """Feet without a swing target at ``time``."""
        return self._swing_targets(np.asarray(time)) <= 0.0

    def _balance_inputs(self, sensordata: np.ndarray):
        com, vel = sensordata[..., self.sensor("com_pos")], sensordata[..., self.sensor("com_vel")]
        left, right = (sensordata[..., self.sensor(f"{f}_pos")] for f in self.robot.feet)
        capture = com[..., :2] + self.balance_time * vel[..., :2]
        return capture, left[..., :2], right[..., :2]

    def residual(self, sensordata: np.ndarray, time: np.ndarray) -> np.ndarray:
        rows = self._rows
        r = sensordata @ self._G.T + self._c
        if self.velocity_mode:
            r[..., rows["position"]] -= self.reference.position(time)
            heading = self.reference.heading(time)
            r[..., rows["heading"]] -= np.stack((np.cos(heading), np.sin(heading)), axis=-1)
            r[..., rows["velocity"]] -= self._command
        else:
            r[..., rows["position"]] -= self.goal
        step = self._swing_targets(time)
        gait = r[..., rows["gait"]]
        r[..., rows["gait"]] = np.where(step > 0, gait - self.foot_radius - step, 0.0)
        r[..., rows["balance"]] = segment_residual(*self._balance_inputs(sensordata),
                                                   self.balance_margin)[0]
        return r

    def residual_jacobian(self, sensordata: np.ndarray, time: np.ndarray) -> np.ndarray:
        time = np.asarray(time)
        rows = self._rows
        J = np.broadcast_to(self._G, (*sensordata.shape[:-1], *self._G.shape)).copy()
        swing = self._swing_targets(time) > 0
        J[..., rows["gait"], :] *= swing[..., None]
        _, dp, dl, dr = segment_residual(*self._balance_inputs(sensordata), self.balance_margin)
        b = rows["balance"]
        com, vel = self.sensor("com_pos"), self.sensor("com_vel")
        left, right = (self.sensor(f"{f}_pos") for f in self.robot.feet)
        J[..., b, com.start : com.start + 2] = dp
        J[..., b, vel.start : vel.start + 2] = self.balance_time * dp
        J[..., b, left.start : left.start + 2] = dl
        J[..., b, right.start : right.start + 2] = dr
        return J

    # --- task state ------------------------------------------------------------------------
    @property
    def goal(self) -> np.ndarray | None:
        if self.velocity_mode:
            return None
        if not self.active and self.start_xy is not None:
            return self.start_xy
        return self.waypoints[self.waypoint_index]

    def set_goal(self, xy) -> None:
        if self.velocity_mode:
            raise NotImplementedError("velocity mode has no goal")
        self.active = True
        self.waypoints[self.waypoint_index] = np.asarray(xy, dtype=float)[:2]

    def update(self, time: float, qpos: np.ndarray, qvel: np.ndarray) -> None:
        if self.start_xy is None:
            self.start_xy = np.array(qpos[:2], dtype=float)
        if not self.active and time >= self.goal_time:
            self.active = True
        if self.velocity_mode:
            self.reference.advance(time, qpos, self._command)
            self.timing = self.speed_gait.timing(self.gait, self._command)
        self.clock.set_cadence(self.timing[1], time)
        last = len(self.waypoints) - 1
        if (self.active and self.waypoint_index < last
                and np.linalg.norm(qpos[:2] - self.goal) < self.waypoint_tolerance):
            self.waypoint_index += 1


def segment_residual(point: np.ndarray, left: np.ndarray, right: np.ndarray, margin: float):
    """b − Π(b) for points b (..., 2) and the segment between feet f_L, f_R (..., 2), shortened
    by ``margin`` at each end, with its Jacobians (..., 2, 2) with respect to b, f_L and f_R.

    With m, d, ℓ, a, L as in the module docstring, P = I − a aᵀ and t = (b − m)·a:
    inside (|t| < L), r = P (b − m) and ∂r/∂b = P, ∂r/∂m = −P,
    ∂r/∂d = −(a (b − m)ᵀ P + t P)/ℓ; clamped (t = ±L), r = b − m ∓ L a and ∂r/∂b = I,
    ∂r/∂m = −I, ∂r/∂d = ∓(a aᵀ/2 + L P/ℓ) (the a aᵀ/2 from ∂L/∂d = aᵀ/2, absent when L = 0).
    Then ∂/∂f_L = ½ ∂/∂m − ∂/∂d and ∂/∂f_R = ½ ∂/∂m + ∂/∂d.
    """
    eye = np.eye(2)
    mid = 0.5 * (left + right)
    d = right - left
    length = np.maximum(np.linalg.norm(d, axis=-1), 1e-9)
    a = d / length[..., None]
    half = 0.5 * length - margin
    L = np.maximum(half, 0.0)
    rel = point - mid
    t = np.sum(rel * a, axis=-1)
    clamped = np.abs(t) >= L
    side = np.sign(t)
    tc = np.clip(t, -L, L)
    r = rel - tc[..., None] * a
    P = eye - a[..., :, None] * a[..., None, :]
    outer_a = a[..., :, None] * a[..., None, :]
    inside_dd = -(a[..., :, None] * (rel[..., None, :] @ P)[..., 0, :][..., None, :]
                  + t[..., None, None] * P) / length[..., None, None]
    dL = np.where(half > 0, 0.5, 0.0)[..., None, None] * outer_a
    clamped_dd = -side[..., None, None] * (dL + L[..., None, None] * P / length[..., None, None])
    c = clamped[..., None, None]
    dp = np.where(c, eye, P)
    dm = -dp
    dd = np.where(c, clamped_dd, inside_dd)
    return r, dp, 0.5 * dm - dd, 0.5 * dm + dd
