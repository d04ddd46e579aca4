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
    heading   x_xy − (cos θ(t), sin θ(t))         (velocity mode)  smooth_abs

with h the standing height over the feet, ρ the height a foot site rests at when its foot
carries the standing robot, g the goal, step(t) the gait's lift target (:mod:`mpc.tasks.gait`),
σ an effort scale and γ per-joint posture gains. Height and balance use the mean over the
support feet (all four here; subclasses such as :mod:`mpc.tasks.quadruped_biped` choose fewer,
and other posture gains). The residual is affine in the sensors, r = G(t) s + c(t), so
∂r/∂s = G(t) is exact; only the gait rows of G depend on time (zero in stance). Every term is
built by the legged base (:mod:`mpc.tasks.legged`), which also holds the goals, the stages
and the velocity mode; this task declares its terms, weights and posture gains.

ρ is the planning model's, measured by letting the robot stand
(:func:`robots.statics.resting_site_heights`), not the foot sphere's radius: the feet's soft
contacts sink 13-17 mm under the robot's weight. With the radius as ρ every foot was asked to
be that far off the ground from the first instant of its swing window, so where the trot's two
windows meet all four feet had to leave the ground together: the robot hopped twice a stride,
and with a real robot's delays in the loop the hops grew into stumbles.

Modes: ``goal`` seeks the goal (or the waypoints). ``velocity`` tracks a commanded body-frame
twist ĉ = (ĉ_x, ĉ_y, ĉ_ω) (:mod:`mpc.app.commands`, set each plan by :meth:`set_command`): v is the
base's linear velocity in its own frame (a velocimeter on ``imu``) and ω_z its yaw rate (a
gyro); the position term and the heading term (x the base's x-axis) follow the reference pose
integrated from the command, g(t) and θ(t) of :mod:`mpc.tasks.velocity`; at zero command that
is a fixed pose, which holds the robot in place. The velocity term alone makes the planner
chase the trot's own within-stride sway of velocity and yaw rate (it fell trotting in place at
weight 2); the integrated reference tracks the command on average and corrects drift, so the
velocity term keeps a small weight. The gait's timing follows the commanded speed
(:class:`mpc.tasks.gait.SpeedGait`): standing at zero command.
"""

from __future__ import annotations

import mujoco
import numpy as np

from mpc.tasks.gait import QUADRUPED_GAITS
from mpc.tasks.legged import LeggedTask
from mpc.tasks.task_base import CostTerm

# Posture gain per joint of a leg: abduction, hip, knee.
POSTURE_GAINS = (2.0, 1.0, 1.0)


class QuadrupedFlat(LeggedTask):
    name = "quadruped_flat"
    description = "walk to a goal or through waypoints on flat ground with a chosen gait"
    GAITS = QUADRUPED_GAITS

    def declare_terms(self) -> list[CostTerm]:
        nu, nfeet = self.nu, len(self.robot.feet)
        terms = [CostTerm("upright", 3, "smooth_abs", param=0.05, weight=1.0),
                 CostTerm("height", 1, "smooth_abs", param=0.04, weight=1.0),
                 CostTerm("position", 2, "l2", param=0.1, weight=0.2),
                 CostTerm("gait", nfeet, "smooth_abs", param=0.03, weight=2.0),
                 *self.stance_terms(),
                 CostTerm("balance", 2, "l2", param=0.1, weight=0.2),
                 CostTerm("effort", nu, "quadratic", param=0.0, weight=0.03),
                 CostTerm("posture", nu, "quadratic", param=0.0, weight=0.02)]
        if self.velocity_mode:
            terms += [CostTerm("velocity", 3, "quadratic", param=0.0, weight=0.1),
                      CostTerm("heading", 2, "smooth_abs", param=0.1, weight=1.0)]
        return terms

    def posture_gains(self, model: mujoco.MjModel) -> np.ndarray:
        """Per-joint gains γ of the posture term, in ``model``'s actuator order (legs of
        abduction, hip, knee)."""
        return np.tile(POSTURE_GAINS, model.nu // 3 + 1)[: model.nu]
