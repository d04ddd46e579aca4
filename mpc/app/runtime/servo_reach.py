"""Joint targets kept within a position servo's reach, so that the motor damps as the model does.

The planning model's position actuators (A1, Go1, Go2) and a robot's motors turn a joint target
u into a torque differently once the torque limit τ̄ is reached. The model's actuator force is
clamped on its own and the joint damping d acts beside it:

    τ_model = clamp(k_p (u − q) − k_v q̇, ±τ̄) − d q̇

A motor's PD loop (the bridge commands K_p = k_p and K_d = d + k_v, the joint's damping being
the motor's: ``hardware.unitree.motor_map``) clamps the sum:

    τ_motor = clamp(K_p (u − q) − K_d q̇, ±τ̄)

Within the limit the two agree. A plan whose target lies far past the limit (a leg lifted as
fast as the motor allows) gets, in the model, τ̄ less the damping: the joint speeds up to
about τ̄ / d (12 rad/s for a Go2 hip) and no further. The motor gives τ̄ whatever the speed;
measured on the Go2's loopback up the stairs, a calf or hip went from 5 to 42 rad/s within
20-35 ms of its foot lifting, past the 40 rad/s trip, where the plan had it at 12
(docs/terrain.md, "A servo's reach"). A saturated actuator also has no feedback gain (the
model's force does not move with u there), so nothing in the law pulls the joint back.

Sent within the band where the model's force is not clamped,

    u ∈ [q + (−τ̄ + k_v q̇) / k_p,  q + (τ̄ + k_v q̇) / k_p]

the motor's torque is the model's clamped force less the damping, τ_motor = τ_model (as long as
that sum is itself within ±τ̄), with q and q̇ the state the command is computed for. At that
state the clamp moves nothing the model would feel: its force is the same for u and for the
clamped value. Not over the hold: the command is held for the feedback law's period while the
joint moves on, and a target at the band's edge then gives less than the plan's saturated
force, k_p q̇ T / 2 less on average over a period T. On a simulated robot that is the planning
model this cost the A1's velocity tracking (worst steady second 0.065 -> 0.092 m/s,
docs/velocity.md); widening the band by the travel over the hold, or half of it, was measured
worse on the stairs (docs/terrain.md, "A servo's reach"), so the band is the instant's.
"""

from __future__ import annotations

import mujoco
import numpy as np


class ServoReach:
    """The reach band of a model's force-limited position servos (module docstring)."""

    def __init__(self, model: mujoco.MjModel):
        servo = [i for i in range(model.nu) if _is_limited_servo(model, i)]
        joints = model.actuator_trnid[servo, 0]
        self.actuators = np.array(servo, dtype=int)
        self.qpos_adr = model.jnt_qposadr[joints]
        self.dof_adr = model.jnt_dofadr[joints]
        kp = model.actuator_gainprm[servo, 0]
        self.kv_over_kp = -model.actuator_biasprm[servo, 2] / kp
        self.lo = model.actuator_forcerange[servo, 0] / kp
        self.hi = model.actuator_forcerange[servo, 1] / kp
        self.ctrl_lo = model.actuator_ctrlrange[servo, 0]
        self.ctrl_hi = model.actuator_ctrlrange[servo, 1]
        self.ctrl_limited = model.actuator_ctrllimited[servo].astype(bool)
        #: Calls of :meth:`clamp` that moved a target (a run's summary reports them).
        self.kept = 0

    def clamp(self, qpos: np.ndarray, qvel: np.ndarray, ctrl: np.ndarray) -> None:
        """Clamp ``ctrl`` in place into the band at (qpos, qvel), then into the control range."""
        if not len(self.actuators):
            return
        q = qpos[self.qpos_adr] + self.kv_over_kp * qvel[self.dof_adr]
        u = np.clip(ctrl[self.actuators], q + self.lo, q + self.hi)
        # A joint past its range by more than the band would take the target out of the
        # control range; the control range wins (the plan never commands outside it).
        u = np.where(self.ctrl_limited, np.clip(u, self.ctrl_lo, self.ctrl_hi), u)
        if np.any(u != ctrl[self.actuators]):
            self.kept += 1
        ctrl[self.actuators] = u


def _is_limited_servo(model: mujoco.MjModel, i: int) -> bool:
    """A force-limited position servo on a hinge or slide joint: force = k_p u − k_p q − k_v q̇
    (gain fixed, bias affine with bias[1] = −gain[0]), with no activation."""
    # (the model's type arrays hold ints, which MuJoCo's enums do not compare equal to)
    if (int(model.actuator_trntype[i]) != int(mujoco.mjtTrn.mjTRN_JOINT)
            or int(model.actuator_dyntype[i]) != int(mujoco.mjtDyn.mjDYN_NONE)
            or int(model.actuator_gaintype[i]) != int(mujoco.mjtGain.mjGAIN_FIXED)
            or int(model.actuator_biastype[i]) != int(mujoco.mjtBias.mjBIAS_AFFINE)):
        return False
    kp = model.actuator_gainprm[i, 0]
    joint = model.actuator_trnid[i, 0]
    hinge_or_slide = int(model.jnt_type[joint]) in (int(mujoco.mjtJoint.mjJNT_HINGE),
                                                    int(mujoco.mjtJoint.mjJNT_SLIDE))
    return (kp > 0 and model.actuator_biasprm[i, 1] == -kp and hinge_or_slide
            and bool(model.actuator_forcelimited[i]) and model.actuator_gear[i, 0] == 1.0)
