"""Compiled WASP linearization of knots: forward-difference JVPs through MuJoCo, GIL released.

For each knot the kernel simulates the nominal step once and then, block by block in the
order ctrl, act, qvel, qpos (mjd_transitionFD's order), JVPs along the block's directions:

    f = [(x⁺ ⊖ x_next) / ε; (s⁺ − s) / ε],   x⁺, s⁺ = step(x_t ⊕ ε q_j, u_t)  (or u_t + ε q_j),

where ⊖ is ``mj_differentiatePos`` on qpos and a plain difference on (qvel, act), and s are the
sensors evaluated at x_t inside the step. Each f is one column of [A; C] (or [B; D]) in the
direction q_j: sensors ride along as extra outputs, so the residual Jacobians cost no extra
simulation. Blocks stop as described in :mod:`derivatives.wasp.update`, with the agreement
test applied to the next-state part and to the sensor part of f separately.

The steps go through ``mj_stepSkip`` (:mod:`derivatives.wasp.mujoco_c`), the routine
``mjd_transitionFD`` itself uses, with the same stage skipping (ctrl and act perturbations
reuse the position and velocity stages of the nominal step, qvel perturbations the position
stage) and the same restoring of time, state, ctrl and solver warm start before every step.
So with coordinate directions the JVPs are bit-identical to ``mjd_transitionFD``'s columns,
and a simulation costs what it costs there.

Controls: a dense direction moves every control, and MuJoCo clamps controls to their range, so
at a limit the step would see a different direction than q_j. The ctrl block therefore
differences around u' = clip(u, lo + ε, hi − ε) (one extra simulation, only at knots where
u' ≠ u): u' ± ε q_j stays in range because |q_j| ≤ 1 componentwise. At the upper limit this is
mjd_transitionFD's backward difference; elsewhere u' is at most ε from u.
"""

from __future__ import annotations

import mujoco
import numpy as np
from numba import njit

from common.libmujoco import call_void
from derivatives.wasp.basis import ACT, CTRL, QPOS, QVEL
from derivatives.wasp.update import agrees, replace_column

_STATE_TIME = int(mujoco.mjtState.mjSTATE_TIME)
_STAGE_NONE = int(mujoco.mjtStage.mjSTAGE_NONE)
_STAGE_POS = int(mujoco.mjtStage.mjSTAGE_POS)
_STAGE_VEL = int(mujoco.mjtStage.mjSTAGE_VEL)


@njit(cache=True, nogil=True)
def _step(mj, m_ptr, d_ptr, d_qpos, d_qvel, d_act, d_ctrl, d_warmstart, clock,
          time, qpos, qvel, act, ctrl, warmstart, skip):
    """Load (time, state, ctrl, warm start) into the data and take one mj_stepSkip."""
    step_skip, _, _, set_state = mj
    clock[0] = time
    call_void(set_state, m_ptr, d_ptr, clock.ctypes.data, np.int32(_STATE_TIME))
    d_qpos[:] = qpos
    d_qvel[:] = qvel
    d_act[:] = act
    d_ctrl[:] = ctrl
    d_warmstart[:] = warmstart
    call_void(step_skip, m_ptr, d_ptr, np.int32(skip), np.int32(0))


@njit(cache=True, nogil=True)
def _record(d_qpos, d_qvel, d_act, d_sensordata, out_qpos, out_rest, out_sensors):
    """Next qpos, next (qvel, act) and the sensors of the step just taken."""
    nv = d_qvel.shape[0]
    out_qpos[:] = d_qpos
    out_rest[:nv] = d_qvel
    out_rest[nv:] = d_act
    out_sensors[:] = d_sensordata


@njit(cache=True, nogil=True)
def _jvp(mj, m_ptr, positions_are_vectors, eps, base_qpos, base_rest, base_sensors,
         qpos, rest, sensors, f):
    """f = [(next ⊖ base) / ε; (sensors − base sensors) / ε], with mjd_transitionFD's arithmetic
    (ε⁻¹ (x₂ − x₁) elementwise; ``mj_differentiatePos`` when qpos has quaternions)."""
    nq = base_qpos.shape[0]
    nv = f.shape[0] - sensors.shape[0] - base_rest.shape[0]  # f = [dq (nv); dv, dact; ds]
    inv = 1.0 / eps
    if positions_are_vectors:
        for i in range(nq):
            f[i] = inv * (qpos[i] - base_qpos[i])
    else:
        call_void(mj[1], m_ptr, f.ctypes.data, eps, base_qpos.ctypes.data, qpos.ctypes.data)
    for i in range(base_rest.shape[0]):
        f[nv + i] = inv * (rest[i] - base_rest[i])
    off = nv + base_rest.shape[0]
    for i in range(sensors.shape[0]):
        f[off + i] = inv * (sensors[i] - base_sensors[i])


@njit(cache=True, nogil=True)
def linearize_knots(mj, m_ptr, d_ptr, d_qpos, d_qvel, d_act, d_ctrl, d_warmstart, d_sensordata,
                    knots, time, qpos, qvel, act, ctrl, warmstart, ctrl_lo, ctrl_hi, eps,
                    directions, offsets, p_min, full_first, tol, F, D, filled, pointer,
                    out_A, out_B, out_C, out_D, simulations):
    """WASP at each knot t in ``knots``: trajectory arrays, cache and outputs are indexed by t.

    ``mj`` is :data:`derivatives.wasp.mujoco_c.FUNCTIONS`; ``ctrl_lo``/``ctrl_hi`` bound the
    ctrl block's base point (range shrunk by ε, ±inf if unlimited); ``directions``,
    ``offsets``: see :mod:`derivatives.wasp.basis`; ``p_min``, ``tol`` per block; knots
    t < ``full_first`` take every JVP of every block (p_min = n there). Writes
    A, B, C, D = the blocks of D̂[t] and ``simulations[t]``.
    """
    nq = d_qpos.shape[0]
    nv = d_qvel.shape[0]
    na = d_act.shape[0]
    nu = d_ctrl.shape[0]
    ns = d_sensordata.shape[0]
    nx = 2 * nv + na
    vectors = nq == nv
    clock = np.empty(1)
    nominal_q, nominal_r, nominal_s = np.empty(nq), np.empty(nv + na), np.empty(ns)
    interior_q, interior_r, interior_s = np.empty(nq), np.empty(nv + na), np.empty(ns)
    next_q, next_r, next_s = np.empty(nq), np.empty(nv + na), np.empty(ns)
    x_q, x_v, x_a, x_u = np.empty(nq), np.empty(nv), np.empty(na), np.empty(nu)
    base_u = np.empty(nu)
    f = np.empty(nx + ns)
    for t in knots:
        count = 1
        _step(mj, m_ptr, d_ptr, d_qpos, d_qvel, d_act, d_ctrl, d_warmstart, clock, time[t], qpos[t],
              qvel[t], act[t], ctrl[t], warmstart[t], _STAGE_NONE)
        _record(d_qpos, d_qvel, d_act, d_sensordata, nominal_q, nominal_r, nominal_s)
        for block in (CTRL, ACT, QVEL, QPOS):
            lo = offsets[block]
            hi = offsets[block + 1]
            n = hi - lo
            if n == 0:
                continue
            b_q, b_r, b_s = nominal_q, nominal_r, nominal_s
            skip = _STAGE_NONE
            if block in (CTRL, ACT):
                skip = _STAGE_VEL
            elif block == QVEL:
                skip = _STAGE_POS
            if block == CTRL:
                shifted = False
                for i in range(nu):
                    base_u[i] = min(max(ctrl[t, i], ctrl_lo[i]), ctrl_hi[i])
                    shifted = shifted or base_u[i] != ctrl[t, i]
                if shifted:
                    _step(mj, m_ptr, d_ptr, d_qpos, d_qvel, d_act, d_ctrl, d_warmstart, clock,
                          time[t], qpos[t], qvel[t], act[t], base_u, warmstart[t], skip)
                    _record(d_qpos, d_qvel, d_act, d_sensordata, interior_q, interior_r,
                            interior_s)
                    b_q, b_r, b_s = interior_q, interior_r, interior_s
                    count += 1
            need = n if t < full_first else p_min[block]
            taken = 0
            while taken < n:  # p_max = n
                j = pointer[t, block]
                col = lo + j
                x_q[:] = qpos[t]
                x_v[:] = qvel[t]
                x_a[:] = act[t]
                x_u[:] = ctrl[t]
                if block == CTRL:
                    for i in range(nu):
                        x_u[i] = base_u[i] + eps * directions[col, lo + i]
                elif block == ACT:
                    for i in range(na):
                        x_a[i] += eps * directions[col, lo + i]
                elif block == QVEL:
                    for i in range(nv):
                        x_v[i] += eps * directions[col, lo + i]
                else:
                    call_void(mj[2], m_ptr, x_q.ctypes.data,
                              directions[col, lo:hi].ctypes.data, eps)
                _step(mj, m_ptr, d_ptr, d_qpos, d_qvel, d_act, d_ctrl, d_warmstart, clock, time[t],
                      x_q, x_v, x_a, x_u, warmstart[t], skip)
                _record(d_qpos, d_qvel, d_act, d_sensordata, next_q, next_r, next_s)
                _jvp(mj, m_ptr, vectors, eps, b_q, b_r, b_s, next_q, next_r, next_s, f)
                count += 1
                taken += 1
                # Next state and sensors are tested apart: neither's scale may hide the
                # other's change (A1: actuator-force rows of a ctrl JVP are ~5x its B part).
                passed = (taken >= need and filled[t, col]
                          and agrees(F[t, :nx, col], f[:nx], tol[block])
                          and agrees(F[t, nx:, col], f[nx:], tol[block]))
                replace_column(F[t], D[t], directions, col, lo, hi, f)
                filled[t, col] = True
                pointer[t, block] = (j + 1) % n
                if passed:
                    break
        out_A[t] = D[t, :nx, :nx]
        out_B[t] = D[t, :nx, nx:]
        out_C[t] = D[t, nx:, :nx]
        out_D[t] = D[t, nx:, nx:]
        simulations[t] = count
