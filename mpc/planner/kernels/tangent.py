"""Tangent-space arithmetic on MuJoCo configurations.

``qpos`` lives on a manifold (free and ball joints carry unit quaternions); velocities and state
errors live in its tangent space of size nv. The conventions are MuJoCo's
(``mj_differentiatePos`` / ``mj_integratePos``): a free joint's tangent is
[translation in the world frame, rotation vector in the body frame], so for quaternions

    q2 ⊖ q1 = log(q1⁻¹ ⊗ q2)   (rotation vector, angle wrapped to [-π, π]).

Joint types follow ``mjtJoint``: 0 free, 1 ball, 2 slide, 3 hinge.
"""

from __future__ import annotations

import numpy as np
from numba import njit

FREE, BALL, SLIDE, HINGE = 0, 1, 2, 3


@njit(cache=True, nogil=True, error_model="numpy")
def quat_log_diff(q2, q1, out):
    """Rotation vector of q1⁻¹ ⊗ q2, the angle wrapped to [-π, π] (``mju_subQuat(q2, q1)``)."""
    # q1⁻¹ ⊗ q2 with q1⁻¹ = conj(q1) for unit quaternions.
    w = q1[0] * q2[0] + q1[1] * q2[1] + q1[2] * q2[2] + q1[3] * q2[3]
    x = q1[0] * q2[1] - q1[1] * q2[0] - q1[2] * q2[3] + q1[3] * q2[2]
    y = q1[0] * q2[2] + q1[1] * q2[3] - q1[2] * q2[0] - q1[3] * q2[1]
    z = q1[0] * q2[3] - q1[1] * q2[2] + q1[2] * q2[1] - q1[3] * q2[0]
    s = np.sqrt(x * x + y * y + z * z)
    if s < 1e-14:
        # small-angle limit: 2 atan2(s, w) / s -> 2 / w
        scale = 2.0 / w if w != 0.0 else 0.0
    else:
        angle = 2.0 * np.arctan2(s, w)
        if angle > np.pi:
            angle -= 2.0 * np.pi
        scale = angle / s
    out[0] = x * scale
    out[1] = y * scale
    out[2] = z * scale


@njit(cache=True, nogil=True, error_model="numpy")
def differentiate_pos(jnt_type, jnt_qposadr, jnt_dofadr, qpos2, qpos1, out):
    """out (nv) = qpos2 ⊖ qpos1, as ``mj_differentiatePos(m, out, 1, qpos1, qpos2)``."""
    for j in range(jnt_type.shape[0]):
        pa = jnt_qposadr[j]
        va = jnt_dofadr[j]
        t = jnt_type[j]
        if t == FREE:
            for i in range(3):
                out[va + i] = qpos2[pa + i] - qpos1[pa + i]
            quat_log_diff(qpos2[pa + 3 : pa + 7], qpos1[pa + 3 : pa + 7], out[va + 3 : va + 6])
        elif t == BALL:
            quat_log_diff(qpos2[pa : pa + 4], qpos1[pa : pa + 4], out[va : va + 3])
        else:
            out[va] = qpos2[pa] - qpos1[pa]


@njit(cache=True, nogil=True, error_model="numpy")
def interpolate_pos(jnt_type, jnt_qposadr, qpos1, qpos2, w, out):
    """out = (1 - w) qpos1 + w qpos2 with quaternions renormalized (nlerp, shortest arc)."""
    for i in range(qpos1.shape[0]):
        out[i] = (1.0 - w) * qpos1[i] + w * qpos2[i]
    for j in range(jnt_type.shape[0]):
        t = jnt_type[j]
        if t in (FREE, BALL):
            pa = jnt_qposadr[j] + (3 if t == FREE else 0)
            dot = 0.0
            for i in range(4):
                dot += qpos1[pa + i] * qpos2[pa + i]
            sign = 1.0 if dot >= 0.0 else -1.0
            n = 0.0
            for i in range(4):
                out[pa + i] = (1.0 - w) * qpos1[pa + i] + sign * w * qpos2[pa + i]
                n += out[pa + i] ** 2
            n = np.sqrt(n)
            for i in range(4):
                out[pa + i] /= n


@njit(cache=True, nogil=True, error_model="numpy")
def state_difference(jnt_type, jnt_qposadr, jnt_dofadr, qpos, qvel, act, qpos_ref, qvel_ref,
                     act_ref, out):
    """out (2nv + na) = x ⊖ x_ref in the layout of ``mjd_transitionFD``: (dq, dv, dact)."""
    nv = qvel.shape[0]
    differentiate_pos(jnt_type, jnt_qposadr, jnt_dofadr, qpos, qpos_ref, out[:nv])
    for i in range(nv):
        out[nv + i] = qvel[i] - qvel_ref[i]
    for i in range(act.shape[0]):
        out[2 * nv + i] = act[i] - act_ref[i]
