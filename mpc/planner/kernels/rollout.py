"""Closed-loop rollout of a policy through ``mj_step``, compiled, GIL released.

One call simulates T knots of the planning model from x0 at t0 with step dt:

    for i in 0..T-1:   record x_i;  u_i = policy(t0 + i dt, x_i);
                       i < T-1: mj_step (sensors at x_i, then x_{i+1});  last: mj_forward
                       record sensordata(x_i, u_i) and the solver warm start qacc(x_i)

Each recorded knot is published to ``progress`` (:mod:`common.handover`), so derivative
kernels on other threads can linearize it while the rollout goes on; a rollout that fails
publishes STOPPED.

A rollout fails (status 1) when the state stops being finite, a speed exceeds ``max_speed`` or
MuJoCo raised a warning (it resets the data after a bad acceleration, which would otherwise
pass for a plausible state). ``mj_*`` are libmujoco function addresses
(:mod:`common.libmujoco`); the arrays ``d_*`` are numpy views of the MjData whose address is
``d_ptr``; ``d_warnings`` is the view of its warning counters.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from common.handover import STOPPED, publish
from common.libmujoco import STATE_TIME, call_void
from mpc.planner.kernels.policy import policy_action

OK = 0
DIVERGED = 1


@njit(cache=True, nogil=True)
def _diverged(d_qpos, d_qvel, max_speed):
    """A speed beyond ``max_speed`` (or not a number) or a non-finite position."""
    for k in range(d_qvel.shape[0]):
        if not (abs(d_qvel[k]) <= max_speed):
            return True
    for k in range(d_qpos.shape[0]):  # noqa: SIM110 (a loop, not a generator: numba)
        if not np.isfinite(d_qpos[k]):
            return True
    return False


@njit(cache=True, nogil=True)
def rollout(mj_step, mj_forward, mj_set_state,
            m_ptr, d_ptr, d_qpos, d_qvel, d_act, d_ctrl, d_sensordata, d_warmstart, d_warnings,
            jnt_type, jnt_qposadr, jnt_dofadr, ctrl_lo, ctrl_hi, max_speed,
            t0, qpos0, qvel0, act0, dt,
            times, qpos_ref, qvel_ref, act_ref, ctrl_ref, feedforward, gains, ff_scale, fb_scale,
            out_time, out_qpos, out_qvel, out_act, out_ctrl, out_sensordata, out_warmstart,
            progress):
    clock = np.empty(1)
    clock[0] = t0
    call_void(mj_set_state, m_ptr, d_ptr, clock.ctypes.data, np.int32(STATE_TIME))
    d_qpos[:] = qpos0
    d_qvel[:] = qvel0
    d_act[:] = act0
    d_warmstart[:] = 0.0
    horizon = out_time.shape[0]
    warnings = d_warnings.sum()
    status = OK
    for i in range(horizon):
        t = t0 + i * dt
        out_time[i] = t
        out_qpos[i] = d_qpos
        out_qvel[i] = d_qvel
        out_act[i] = d_act
        finite = policy_action(jnt_type, jnt_qposadr, jnt_dofadr, ctrl_lo, ctrl_hi,
                               times, qpos_ref, qvel_ref, act_ref, ctrl_ref, feedforward, gains,
                               t, d_qpos, d_qvel, d_act, ff_scale, fb_scale, out_ctrl[i])
        if not finite:
            status = DIVERGED
            break
        d_ctrl[:] = out_ctrl[i]
        if i < horizon - 1:
            call_void(mj_step, m_ptr, d_ptr)
        else:
            call_void(mj_forward, m_ptr, d_ptr)
        out_sensordata[i] = d_sensordata
        out_warmstart[i] = d_warmstart
        if d_warnings.sum() != warnings:
            status = DIVERGED
            break
        publish(progress, i + 1)
        if i < horizon - 1 and _diverged(d_qpos, d_qvel, max_speed):
            status = DIVERGED
            break
    if status != OK:
        publish(progress, STOPPED)
    return status
