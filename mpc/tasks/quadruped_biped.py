"""A quadruped on two legs: rear up onto the hind legs (foot stand) or tip onto the front legs
(hand stand) from the quadruped pose, and hold the posture by trotting in place on them.

MJPC's biped mode of its quadruped task, on the sensors of :class:`QuadrupedFlat` plus the base
x-axis x. With s = +1 for a foot stand and −1 for a hand stand, S the support pair (hind or
front feet) and the other pair lifted:

    upright   x − s e_z                                                   smooth_abs
    height    p_z − mean_S(f_z) − h                                       smooth_abs
    position  p_xy − g_xy                                                 l2
    gait      support feet in swing: f_z − (ρ + step(t)); otherwise 0     smooth_abs
    balance   c_xy + ċ_xy √(2h/g) − mean_S(f_xy)                          l2
    effort    σ τ                                                         quadratic
    posture   γ ⊙ (q − q_home), lifted legs' hip and knee gains × 0.03     quadratic
    heading   −s z_xy − (cos ψ, sin ψ)                                    smooth_abs

In the two-leg posture the base z-axis z is horizontal and −s z_xy points where the robot
faced on four legs, so the heading term keeps it from turning about the vertical. The lifted
legs' loose posture gains let them hang instead of fighting the rotation. All terms are affine
in the sensors, r = G(t) s + c(t), as in :mod:`mpc.tasks.quadruped`.
"""

from __future__ import annotations

import math
from typing import ClassVar, Literal

import mujoco
import numpy as np

from mpc.tasks.quadruped import DEFAULT_PARAMS, DEFAULT_WEIGHTS, NORMS, QuadrupedFlat
from mpc.tasks.task_base import base_axes
from robots.info import RobotInfo

#: Posture gain factor of the lifted legs' hip and knee joints.
LIFTED_POSTURE_FACTOR = 0.03


class QuadrupedBiped(QuadrupedFlat):
    name = "quadruped_biped"
    description = "quadruped on its hind legs (foot stand) or front legs (hand stand)"
    default_weights: ClassVar[dict[str, float]] = {**DEFAULT_WEIGHTS, "heading": 1.0}
    default_params: ClassVar[dict[str, float]] = {**DEFAULT_PARAMS, "heading": 0.1}
    norms: ClassVar[dict[str, str]] = {**NORMS, "heading": "smooth_abs"}

    #: Bounds of the options, read by mpc.app.schema.check_kwargs (see mpc/app/schema.py).
    RANGES: ClassVar[dict[str, dict[str, float]]] = {
        **{k: v for k, v in QuadrupedFlat.RANGES.items()
           if k in ("goal", "height", "foot_height", "effort_scale", "weights")},
        "heading": {"min": -math.tau, "max": math.tau},
    }

    def __init__(self, robot: RobotInfo, support: Literal["hind", "front"] = "hind",
                 goal=(0.0, 0.0), height: float = 0.5, heading: float = 0.0,
                 foot_height: float | None = None, effort_scale: float = 0.02,
                 weights: dict | None = None):
        if support not in ("hind", "front"):
            raise ValueError(f"support must be 'hind' or 'front', got {support!r}")
        self.support = support
        self.heading = float(heading)
        super().__init__(robot, gait="trot", goal=goal, height=height, foot_height=foot_height,
                         effort_scale=effort_scale, weights=weights)
        self._support_mask = np.zeros(len(robot.feet))
        self._support_mask[list(self.support_feet)] = 1.0

    @property
    def sign(self) -> float:
        """+1 on the hind legs (head up), −1 on the front legs (head down)."""
        return 1.0 if self.support == "hind" else -1.0

    def _term_dims(self, nu: int) -> dict[str, int]:
        return {**super()._term_dims(nu), "heading": 2}

    @property
    def support_feet(self) -> tuple[int, ...]:
        prefix = "R" if self.support == "hind" else "F"
        return tuple(i for i, f in enumerate(self.robot.feet) if f.startswith(prefix))

    def posture_gains(self, model: mujoco.MjModel) -> np.ndarray:
        gains = super().posture_gains(model).copy()
        lifted = "F" if self.support == "hind" else "R"
        for a in range(model.nu):
            joint = model.joint(model.actuator_trnid[a, 0]).name
            # Unitree names: <leg>_hip_joint is the abduction, thigh and calf the hip and knee.
            if joint.startswith(lifted) and not joint.endswith("_hip_joint"):
                gains[a] *= LIFTED_POSTURE_FACTOR
        return gains

    # --- model -----------------------------------------------------------------------------
    def add_sensors(self, spec: mujoco.MjSpec) -> None:
        super().add_sensors(spec)
        spec.add_sensor(name="base_xaxis", type=mujoco.mjtSensor.mjSENS_FRAMEXAXIS,
                        objtype=mujoco.mjtObj.mjOBJ_SITE, objname="imu")

    def _build_affine_map(self, model: mujoco.MjModel) -> None:
        super()._build_affine_map(model)
        sl = dict(zip([t.name for t in self.terms], self.term_slices, strict=True))
        r = sl["upright"]
        self._G[r] = 0.0
        self._G[r, self.sensor("base_xaxis")] = np.eye(3)
        self._c[r] = (0.0, 0.0, -self.sign)
        r = sl["heading"].start
        z = self.sensor("base_zaxis")
        self._G[r : r + 2, z.start : z.start + 2] = -self.sign * np.eye(2)
        self._c[r : r + 2] = -np.cos(self.heading), -np.sin(self.heading)

    # --- safety ----------------------------------------------------------------------------
    def fall_reason(self, qpos: np.ndarray) -> str | None:
        """Fallen: base below the robot's fall height, or the body tilted more than the robot's
        fall tilt from every posture on the way up, i.e. from every up axis cos θ z + sin θ s x
        with θ ∈ [0, 90°] (four legs at θ = 0, two legs at 90°). With a = z·e_z and
        b = s x·e_z the highest of them has vertical component √(a² + b²) when a, b ≥ 0,
        else max(a, b)."""
        if qpos[2] < self.robot.fall_height:
            return f"base height {qpos[2]:.3f} m < {self.robot.fall_height} m"
        axes = base_axes(qpos)
        a, b = axes[2, 2], self.sign * axes[2, 0]
        best = np.hypot(a, b) if a >= 0 and b >= 0 else max(a, b)
        angle = float(np.arccos(np.clip(best, -1.0, 1.0)))
        if angle > self.robot.fall_tilt:
            return f"tilt {np.degrees(angle):.0f} deg from the four- and two-leg postures"
        return None

    # --- residual --------------------------------------------------------------------------
    def _swing_targets(self, time: np.ndarray) -> np.ndarray:
        return super()._swing_targets(time) * self._support_mask
