"""Evaluation of a time-varying linear feedback policy.

At time τ between knots i and i+1 (weight w), with nominal x*, u*, feedforward k and gain K
interpolated linearly (quaternions by nlerp), the action is

    u(τ, x) = clamp(u*(τ) + α k(τ) + s K(τ) (x ⊖ x*(τ)),  ctrl_lo, ctrl_hi)

where ⊖ is the tangent-space difference (:mod:`mpc.planner.kernels.tangent`), α scales the
feedforward improvement (line search) and s the feedback (warm start). Before the first knot the
first knot is held, after the last knot the last one.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mpc.planner.kernels.tangent import interpolate_pos, state_difference


@njit(cache=True, nogil=True, error_model="numpy")
def find_segment(times, t):
    """Segment index i and weight w in [0, 1] with t ≈ (1 - w) times[i] + w times[i + 1]."""
    n = times.shape[0]
    if n == 1 or t <= times[0]:
        return 0, 0.0
    if t >= times[n - 1]:
        return n - 2, 1.0
    lo = 0
    hi = n - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if times[mid] <= t:
            lo = mid
        else:
            hi = mid
    return lo, (t - times[lo]) / (times[lo + 1] - times[lo])


@njit(cache=True, nogil=True, error_model="numpy")
def policy_action(jnt_type, jnt_qposadr, jnt_dofadr, ctrl_lo, ctrl_hi,
                  times, qpos_ref, qvel_ref, act_ref, ctrl_ref, feedforward, gains,
                  t, qpos, qvel, act, ff_scale, fb_scale, out_ctrl):
    """Write u(t, x) into ``out_ctrl``; returns False if the result is not finite."""
    i, w = find_segment(times, t)
    j = i + 1 if times.shape[0] > 1 else i
    nv = qvel.shape[0]
    na = act.shape[0]
    nu = out_ctrl.shape[0]
    nx = 2 * nv + na
    q_star = np.empty(qpos.shape[0])
    interpolate_pos(jnt_type, jnt_qposadr, qpos_ref[i], qpos_ref[j], w, q_star)
    v_star = (1.0 - w) * qvel_ref[i] + w * qvel_ref[j]
    a_star = (1.0 - w) * act_ref[i] + w * act_ref[j]
    dx = np.empty(nx)
    state_difference(jnt_type, jnt_qposadr, jnt_dofadr, qpos, qvel, act, q_star, v_star, a_star,
                     dx)
    finite = True
    for r in range(nu):
        u = (1.0 - w) * ctrl_ref[i, r] + w * ctrl_ref[j, r]
        u += ff_scale * ((1.0 - w) * feedforward[i, r] + w * feedforward[j, r])
        if fb_scale != 0.0:
            acc = 0.0
            for c in range(nx):
                acc += ((1.0 - w) * gains[i, r, c] + w * gains[j, r, c]) * dx[c]
            u += fb_scale * acc
        if not np.isfinite(u):
            finite = False
        out_ctrl[r] = min(max(u, ctrl_lo[r]), ctrl_hi[r])
    return finite
