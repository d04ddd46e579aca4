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
in the sensors, r = G(t) s + c(t), as in :mod:`mpc.tasks.quadruped`: the heading term is the
legged base's with −s z as the forward axis, the upright term its own.
"""

from __future__ import annotations

import math
from typing import ClassVar

import mujoco
import numpy as np

from mpc.tasks.gait import QUADRUPED_GAITS, Gait
from mpc.tasks.legged import add_frame_sensor
from mpc.tasks.quadruped import QuadrupedFlat
from mpc.tasks.task_base import CostTerm, base_axes
from robots.info import RobotInfo

#: Posture gain factor of the lifted legs' hip and knee joints.
LIFTED_POSTURE_FACTOR = 0.03


class QuadrupedBiped(QuadrupedFlat):
    name = "quadruped_biped"
    description = "quadruped on its hind legs (foot stand) or front legs (hand stand)"
    #: The support pair trots in place; there is no velocity mode (the base's yaw, read from
    #: its x-axis, is undefined with that axis vertical).
    GAITS: ClassVar[dict[str, Gait]] = {"trot": QUADRUPED_GAITS["trot"]}
    MODES = ("goal",)

    #: Bounds of its own options (the others: :class:`mpc.tasks.legged.LeggedTask`).
    RANGES: ClassVar[dict[str, dict[str, float]]] = {
        "heading": {"min": -math.tau, "max": math.tau},
    }

    def __init__(self, robot: RobotInfo, support: str = "hind", height: float = 0.5,
                 heading: float = 0.0, **options):
        """``support``: ``hind`` (foot stand) or ``front`` (hand stand); ``heading`` ψ (rad):
        where the robot faces; the other options: those of
        :class:`mpc.tasks.legged.LeggedTask`."""
        if support not in ("hind", "front"):
            raise ValueError(f"support must be 'hind' or 'front', got {support!r}")
        self.support = support
        super().__init__(robot, height=height, **options)
        self.heading = float(heading)
        self._support_mask = self.support_mask().astype(float)

    @property
    def sign(self) -> float:
        """+1 on the hind legs (head up), −1 on the front legs (head down)."""
        return 1.0 if self.support == "hind" else -1.0

    def declare_terms(self) -> list[CostTerm]:
        return [*super().declare_terms(),
                CostTerm("heading", 2, "smooth_abs", param=0.1, weight=1.0)]

    @property
    def support_feet(self) -> tuple[int, ...]:
        prefix = "R" if self.support == "hind" else "F"
        return tuple(i for i, f in enumerate(self.robot.feet) if f.startswith(prefix))

    def heading_axis(self) -> tuple[str, float]:
        """−s z: where the robot faced on four legs."""
        return "base_zaxis", -self.sign

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
        add_frame_sensor(spec, "base_xaxis", "xaxis", "imu")

    def affine_upright(self, model: mujoco.MjModel, G: np.ndarray, c: np.ndarray) -> None:
        """x − s e_z."""
        G[:, self.sensor("base_xaxis")] = np.eye(3)
        c[:] = (0.0, 0.0, -self.sign)

    # --- safety ----------------------------------------------------------------------------
    def fall_reason(self, qpos: np.ndarray) -> str | None:
        """Fallen: base below the robot's fall height over the ground, or the body tilted more
        than the robot's fall tilt from every posture on the way up, i.e. from every up axis
        cos θ z + sin θ s x with θ ∈ [0, 90°] (four legs at θ = 0, two legs at 90°). With
        a = z·e_z and b = s x·e_z the highest of them has vertical component √(a² + b²) when
        a, b ≥ 0,
        else max(a, b)."""
        height = self.ground.above(qpos[0:3])
        if height < self.robot.fall_height:
            return f"base height {height:.3f} m over the ground < {self.robot.fall_height} m"
        axes = base_axes(qpos)
        a, b = axes[2, 2], self.sign * axes[2, 0]
        best = np.hypot(a, b) if a >= 0 and b >= 0 else max(a, b)
        angle = float(np.arccos(np.clip(best, -1.0, 1.0)))
        if angle > self.robot.fall_tilt:
            return f"tilt {np.degrees(angle):.0f} deg from the four- and two-leg postures"
        return None

    # --- residual --------------------------------------------------------------------------
    def swing_targets(self, time: np.ndarray) -> np.ndarray:
        return super().swing_targets(time) * self._support_mask
