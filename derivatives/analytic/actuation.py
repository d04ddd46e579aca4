"""Actuator forces and their derivatives (joint transmissions, no activation dynamics).

For actuator i on a hinge or slide dof with gear g, length l = g q, velocity l̇ = g v and control
u clamped to its range,

    force = (g₀ + g₁ l + g₂ l̇) u + b₀ + b₁ l + b₂ l̇      (gain fixed: g₁ = g₂ = 0),

clipped to the force range; qfrc_actuator = g force. Position servos are b₁ = −kp, b₂ = −kv,
motors have no bias. Derivatives are zero while the force is saturated (MuJoCo's own test,
force ≤ low or force ≥ high) and with respect to a control outside its range.

For ``implicitfast`` MuJoCo adds the unsaturated actuators' velocity gains to the integration
matrix: −g² (b₂ + g₂ u) with the raw control u (see :func:`implicit_damping`).
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True)
def actuator_derivatives(m, d, dforce_dlen, dforce_dvel, dforce_dctrl):
    """∂force/∂length, ∂force/∂velocity and ∂force/∂ctrl of each actuator.

    Ranges are ±inf where not limited; gain and bias parameters are (const, length, velocity).
    """
    actuator_gainprm = m.actuator_gainprm
    actuator_biasprm = m.actuator_biasprm
    ctrl_lo, ctrl_hi = m.ctrl_lo, m.ctrl_hi
    force_lo, force_hi = m.force_lo, m.force_hi
    ctrl = d.ctrl
    actuator_length = d.actuator_length
    actuator_velocity = d.actuator_velocity
    actuator_force = d.actuator_force
    for i in range(ctrl.shape[0]):
        f = actuator_force[i]
        if f <= force_lo[i] or f >= force_hi[i]:
            dforce_dlen[i] = 0.0
            dforce_dvel[i] = 0.0
            dforce_dctrl[i] = 0.0
            continue
        u = min(max(ctrl[i], ctrl_lo[i]), ctrl_hi[i])
        g = actuator_gainprm[i]
        b = actuator_biasprm[i]
        dforce_dlen[i] = g[1] * u + b[1]
        dforce_dvel[i] = g[2] * u + b[2]
        inside = ctrl_lo[i] <= ctrl[i] <= ctrl_hi[i]
        dforce_dctrl[i] = g[0] + g[1] * actuator_length[i] + g[2] * actuator_velocity[i]
        if not inside:
            dforce_dctrl[i] = 0.0


@njit(cache=True, nogil=True)
def implicit_damping(m, d, out):
    """out[dof] += −g² (b₂ + g₂ u): the actuators' share of −qDeriv in ``implicitfast``."""
    actuator_dof = m.actuator_dof
    actuator_gear = m.actuator_gear
    actuator_gainprm = m.actuator_gainprm
    actuator_biasprm = m.actuator_biasprm
    force_lo, force_hi = m.force_lo, m.force_hi
    ctrl = d.ctrl
    actuator_force = d.actuator_force
    for i in range(ctrl.shape[0]):
        f = actuator_force[i]
        if f <= force_lo[i] or f >= force_hi[i]:
            continue
        g = actuator_gear[i]
        out[actuator_dof[i]] -= g * g * (actuator_biasprm[i, 2] + actuator_gainprm[i, 2] * ctrl[i])
