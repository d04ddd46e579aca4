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
    balance       b − Π(b),  b = c_xy + T (ċ_xy − v̂)  (capture point)     l2
    effort        σ τ                                                      quadratic
    posture       q − q_home                                               quadratic
    velocity      (v_x − ĉ_x, v_y − ĉ_y, ω_z − ĉ_ω)   (velocity mode)     quadratic

with h the pelvis height over the feet, ψ the heading, g the goal, ρ the foot radius, step(t)
the gait's lift target (:mod:`mpc.tasks.gait`), T = √(z_c/g₀) the time constant of the linear
inverted pendulum of CoM height z_c, v̂ the commanded walking velocity (world xy: the velocity
reference's, zero in goal mode), σ an effort scale, and Π the projection onto the segment
between the feet shortened by a margin μ at each end:

    m = (f_L + f_R)/2,  d = f_R − f_L,  ℓ = |d|,  a = d/ℓ,  L = max(ℓ/2 − μ, 0)   (all xy)
    Π(b) = m + clamp((b − m)·a, −L, L) a.

So the capture point may move freely across the stance width but must stay on the line through
the feet (a two-sphere foot is a line contact and resists almost no roll). Why v̂: walking
steadily at v, the pendulum's mean zero-moment point (the feet) is the CoM's mean, so the mean
capture point c + T ċ leads the feet by T v; measured from the feet as it is when standing, the
term brakes every walk by that lead (0.1 m at 0.3 m/s for the H1, which then walked at 0.21 m/s
against a 0.3 m/s command). Taken relative to the commanded walk, it costs what departs from
it; v̂ is constant over a plan, so the Jacobian is the standing one.

All terms but balance are affine in the sensors, r = G(t) s + c(t); balance is nonlinear in the
foot positions and its exact Jacobian is derived in :func:`segment_residual`. The affine terms
but feet_upright, the goals and stages (``hold_time``: step or stand in place at the start
position until then) and the velocity mode are the legged base's (:mod:`mpc.tasks.legged`).

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

from mpc.tasks.gait import BIPED_GAITS
from mpc.tasks.legged import GRAVITY, LeggedTask
from mpc.tasks.task_base import CostTerm
from robots.info import RobotInfo


class HumanoidFlat(LeggedTask):
    name = "humanoid_flat"
    description = "humanoid: stand, step in place and walk to a goal on flat ground"
    GAITS = BIPED_GAITS
    BASE_SENSORS = ("pos", "zaxis", "xaxis")
    FOOT_SENSORS = ("pos", "zaxis")
    GROUND_TERMS = ("upright", "feet_upright", "gait")

    #: Bounds of its own options and of those whose bounds differ from
    #: :class:`mpc.tasks.legged.LeggedTask`'s.
    RANGES: ClassVar[dict[str, dict[str, float]]] = {
        "height": {"gt": 0.0, "max": 3.0},
        "heading": {"min": -math.tau, "max": math.tau},
        "duty": {"min": 0.5, "max": 1.0},
        "balance_margin": {"min": 0.0, "max": 0.5},
    }

    def __init__(self, robot: RobotInfo, gait: str = "stand", height: float = 1.01,
                 heading: float = 0.0, balance_margin: float = 0.05,
                 effort_scale: float = 0.01, max_cadence: float = 2.0, lift_gain: float = 0.0,
                 max_lift: float = 0.1, hip_radius: float = 0.1, **options):
        """``heading`` ψ (rad): where the pelvis faces in goal mode; ``balance_margin`` μ (m);
        the other options: those of :class:`mpc.tasks.legged.LeggedTask`, some with other
        defaults here."""
        super().__init__(robot, gait=gait, height=height, effort_scale=effort_scale,
                         max_cadence=max_cadence, lift_gain=lift_gain, max_lift=max_lift,
                         hip_radius=hip_radius, **options)
        if self.gait.duty < 0.5:
            raise ValueError(f"duty must be in [0.5, 1] (a foot always on the ground), "
                             f"got {self.gait.duty}")
        self.heading = float(heading)
        self.balance_margin = float(balance_margin)

    def declare_terms(self) -> list[CostTerm]:
        nu = self.nu
        terms = [CostTerm("height", 1, "smooth_abs", param=0.05, weight=5.0),
                 CostTerm("upright", 3, "smooth_abs", param=0.05, weight=4.0),
                 CostTerm("feet_upright", 4, "smooth_abs", param=0.05, weight=1.0),
                 CostTerm("heading", 2, "smooth_abs", param=0.1, weight=1.0),
                 CostTerm("position", 2, "l2", param=0.1, weight=3.0),
                 CostTerm("gait", 2, "smooth_abs", param=0.02, weight=10.0),
                 CostTerm("balance", 2, "l2", param=0.05, weight=5.0),
                 CostTerm("effort", nu, "quadratic", param=0.0, weight=0.1),
                 CostTerm("posture", nu, "quadratic", param=0.0, weight=0.5)]
        if self.velocity_mode:
            terms.append(CostTerm("velocity", 3, "quadratic", param=0.0, weight=0.5))
        return terms

    # --- model -----------------------------------------------------------------------------
    def resting_foot_height(self, model: mujoco.MjModel) -> float:
        """ρ: the foot sphere radius (heel and toe spheres carry the foot)."""
        return float(self.robot.foot_radius)

    def bind(self, model: mujoco.MjModel) -> None:
        super().bind(model)
        key = model.key(self.robot.home_key)
        data = mujoco.MjData(model)
        mujoco.mj_resetDataKeyframe(model, data, key.id)
        mujoco.mj_forward(model, data)
        com_height = data.subtree_com[model.body(self.robot.base_body).id][2]
        #: T = √(z_c/g₀) of the capture point.
        self.balance_time = float(np.sqrt(com_height / GRAVITY))

    def affine_feet_upright(self, model: mujoco.MjModel, G: np.ndarray,
                            c: np.ndarray) -> None:
        """(z_L)_xy − n_xy, (z_R)_xy − n_xy: zero with the soles flat on the ground (n its
        normal)."""
        n = self.ground.normal
        for i, foot in enumerate(self.robot.feet):
            z = self.sensor(f"{foot}_zaxis")
            G[2 * i : 2 * i + 2, z.start : z.start + 2] = np.eye(2)
            c[2 * i : 2 * i + 2] = -n[:2]

    def affine_balance(self, model: mujoco.MjModel, G: np.ndarray, c: np.ndarray) -> None:
        """None: the balance residual is not affine (:meth:`residual`)."""

    # --- residual --------------------------------------------------------------------------
    def balance_velocity(self) -> np.ndarray:
        """v̂ (world xy, m/s): the velocity the capture point is taken relative to, the
        velocity reference's R(ψ)(ĉ_x, ĉ_y) in velocity mode, else zero."""
        return self.reference.velocity if self.velocity_mode else np.zeros(2)

    def _balance_inputs(self, sensordata: np.ndarray):
        com, vel = sensordata[..., self.sensor("com_pos")], sensordata[..., self.sensor("com_vel")]
        left, right = (sensordata[..., self.sensor(f"{f}_pos")] for f in self.robot.feet)
        capture = com[..., :2] + self.balance_time * (vel[..., :2] - self.balance_velocity())
        return capture, left[..., :2], right[..., :2]

    def residual(self, sensordata: np.ndarray, time: np.ndarray) -> np.ndarray:
        r = super().residual(sensordata, time)
        r[..., self.rows["balance"]] = segment_residual(*self._balance_inputs(sensordata),
                                                        self.balance_margin)[0]
        return r

    def residual_jacobian(self, sensordata: np.ndarray, time: np.ndarray) -> np.ndarray:
        J = super().residual_jacobian(sensordata, time)
        _, dp, dl, dr = segment_residual(*self._balance_inputs(sensordata), self.balance_margin)
        b = self.rows["balance"]
        com, vel = self.sensor("com_pos"), self.sensor("com_vel")
        left, right = (self.sensor(f"{f}_pos") for f in self.robot.feet)
        J[..., b, com.start : com.start + 2] = dp
        J[..., b, vel.start : vel.start + 2] = self.balance_time * dp
        J[..., b, left.start : left.start + 2] = dl
        J[..., b, right.start : right.start + 2] = dr
        return J


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
