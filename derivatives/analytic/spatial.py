"""Spatial-vector algebra in MuJoCo's conventions, as small numba kernels.

Spatial vectors are 6-vectors ordered (angular, linear) and expressed in world axes about the
centre of mass of the kinematic tree they belong to (``subtree_com[body_rootid]``), exactly as
``cdof``, ``cvel``, ``cdof_dot`` and ``cinert`` in ``mjData``. A body inertia is stored as
MuJoCo's 10 numbers (Ixx, Iyy, Izz, Ixy, Ixz, Iyz, m cx, m cy, m cz, m) about that point, i.e.

    I = [[Î, [h]ₓ], [[h]ₓᵀ, m 1]],   h = m c.

Motion cross product (twist a acting on twist b) and force cross product (twist a acting on
wrench f):

    a ×ₘ b = (a_w × b_w,  a_w × b_v + a_v × b_w),
    a ×* f = (a_w × f_τ + a_v × f_f,  a_w × f_f).

Under a rigid motion with twist s, a twist x carried by the motion changes by s ×ₘ x, a wrench
by s ×* f and an inertia by s ×* I − I (s ×ₘ ·).
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True)
def cross_motion(out, a, b):
    """out = a ×ₘ b."""
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]
    out[3] = a[1] * b[5] - a[2] * b[4] + a[4] * b[2] - a[5] * b[1]
    out[4] = a[2] * b[3] - a[0] * b[5] + a[5] * b[0] - a[3] * b[2]
    out[5] = a[0] * b[4] - a[1] * b[3] + a[3] * b[1] - a[4] * b[0]


@njit(cache=True, nogil=True)
def add_cross_force(out, a, f):
    """out += a ×* f."""
    out[0] += a[1] * f[2] - a[2] * f[1] + a[4] * f[5] - a[5] * f[4]
    out[1] += a[2] * f[0] - a[0] * f[2] + a[5] * f[3] - a[3] * f[5]
    out[2] += a[0] * f[1] - a[1] * f[0] + a[3] * f[4] - a[4] * f[3]
    out[3] += a[1] * f[5] - a[2] * f[4]
    out[4] += a[2] * f[3] - a[0] * f[5]
    out[5] += a[0] * f[4] - a[1] * f[3]


@njit(cache=True, nogil=True)
def inert_mul(out, i, v):
    """out = I v for a 10-number inertia I (``mju_mulInertVec``)."""
    out[0] = i[0] * v[0] + i[3] * v[1] + i[4] * v[2] - i[8] * v[4] + i[7] * v[5]
    out[1] = i[3] * v[0] + i[1] * v[1] + i[5] * v[2] + i[8] * v[3] - i[6] * v[5]
    out[2] = i[4] * v[0] + i[5] * v[1] + i[2] * v[2] - i[7] * v[3] + i[6] * v[4]
    out[3] = i[8] * v[1] - i[7] * v[2] + i[9] * v[3]
    out[4] = i[6] * v[2] - i[8] * v[0] + i[9] * v[4]
    out[5] = i[7] * v[0] - i[6] * v[1] + i[9] * v[5]


@njit(cache=True, nogil=True)
def add_inert_mul(out, i, v):
    """out += I v."""
    out[0] += i[0] * v[0] + i[3] * v[1] + i[4] * v[2] - i[8] * v[4] + i[7] * v[5]
    out[1] += i[3] * v[0] + i[1] * v[1] + i[5] * v[2] + i[8] * v[3] - i[6] * v[5]
    out[2] += i[4] * v[0] + i[5] * v[1] + i[2] * v[2] - i[7] * v[3] + i[6] * v[4]
    out[3] += i[8] * v[1] - i[7] * v[2] + i[9] * v[3]
    out[4] += i[6] * v[2] - i[8] * v[0] + i[9] * v[4]
    out[5] += i[7] * v[0] - i[6] * v[1] + i[9] * v[5]


@njit(cache=True, nogil=True)
def dot6(a, b):
    """a · b of two 6-vectors."""
    return (a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
            + a[3] * b[3] + a[4] * b[4] + a[5] * b[5])


@njit(cache=True, nogil=True)
def point_velocity(out, twist, point, center):
    """out = twist_v + twist_w × (point − center): velocity of a point carried by the twist."""
    rx = point[0] - center[0]
    ry = point[1] - center[1]
    rz = point[2] - center[2]
    out[0] = twist[3] + twist[1] * rz - twist[2] * ry
    out[1] = twist[4] + twist[2] * rx - twist[0] * rz
    out[2] = twist[5] + twist[0] * ry - twist[1] * rx


@njit(cache=True, nogil=True)
def cross3(out, a, b):
    """out = a × b."""
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]
