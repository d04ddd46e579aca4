"""Unit-quaternion algebra on numpy arrays, in MuJoCo's (w, x, y, z) order.

Every function broadcasts over leading dimensions, so the estimator can correct a whole history
of orientations at once. A quaternion q maps body-frame vectors to the world frame:
v_world = q v_body q*. A body-frame angular velocity w integrates as q(t + dt) = q(t) exp(w dt)
(as ``mju_quatIntegrate``); a world-frame rotation r acts on the left: exp(r) q.
"""

from __future__ import annotations

import math

import numpy as np

IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product a b."""
    aw, ax, ay, az = np.moveaxis(np.asarray(a, float), -1, 0)
    bw, bx, by, bz = np.moveaxis(np.asarray(b, float), -1, 0)
    return np.stack([aw * bw - ax * bx - ay * by - az * bz,
                     aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw], axis=-1)


def quat_conj(q: np.ndarray) -> np.ndarray:
    """Conjugate (the inverse of a unit quaternion)."""
    return np.asarray(q, float) * np.array([1.0, -1.0, -1.0, -1.0])


def quat_normalize(q: np.ndarray) -> np.ndarray:
    q = np.asarray(q, float)
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """q v q*: a body-frame vector expressed in the world frame."""
    q = np.asarray(q, float)
    w, u = q[..., :1], q[..., 1:]
    v = np.asarray(v, float)
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def quat_exp(rotvec: np.ndarray) -> np.ndarray:
    """Quaternion of the rotation by angle |r| about r / |r|."""
    r = np.asarray(rotvec, float)
    angle = np.linalg.norm(r, axis=-1, keepdims=True)
    half = 0.5 * angle
    # sin(half)/angle -> 1/2 as angle -> 0 (series to fourth order keeps full precision).
    small = angle < 1e-6
    scale = np.where(small, 0.5 - angle**2 / 48.0, np.sin(half) / np.where(small, 1.0, angle))
    return np.concatenate([np.cos(half), scale * r], axis=-1)


def quat_log(q: np.ndarray) -> np.ndarray:
    """Rotation vector of q (angle in [0, pi]; q and -q give the same result)."""
    q = np.asarray(q, float)
    q = np.where(q[..., :1] < 0.0, -q, q)
    u = q[..., 1:]
    s = np.linalg.norm(u, axis=-1, keepdims=True)
    angle = 2.0 * np.arctan2(s, q[..., :1])
    small = s < 1e-12
    return np.where(small, 2.0 * u, u * (angle / np.where(small, 1.0, s)))


def quat_angle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Angle (rad) of the rotation between orientations a and b."""
    return np.linalg.norm(quat_log(quat_mul(quat_conj(a), b)), axis=-1)


def euler_zyx(q) -> tuple[float, float, float]:
    """Roll, pitch and yaw (rad, ZYX Euler angles) of one quaternion, normalized first. Scalar
    arithmetic, not broadcast: it runs on every robot state the bridge receives."""
    w, x, y, z = (float(v) for v in q)
    inv = 1.0 / math.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w * inv, x * inv, y * inv, z * inv
    return (math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y)),
            math.asin(max(-1.0, min(1.0, 2 * (w * y - z * x)))),
            math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z)))
