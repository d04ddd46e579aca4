"""Spatial-vector algebra in MuJoCo's conventions, as small numba functions on tuples.

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

Why tuples: the kernels' inner loops are chains of these 6-vector operations. As functions on
tuples, inlined into the caller (``inline="always"``), their operands stay in registers; the
same operations on small scratch arrays went through memory and a call each, and cost about
twice as much. :func:`row6` and :func:`store6` move vectors between tables and tuples. The
kernels compile with ``fastmath={"contract"}`` (:data:`FASTMATH`): multiply-adds become fused
multiply-adds, which changes results only by rounding and never reorders sums.
"""

from __future__ import annotations

from numba import njit

#: numba fastmath flags of every analytic kernel: fused multiply-add only (no reassociation, no
#: assumptions about infinities or NaN: the kernels test results for finiteness). A set, as
#: numba wants it; never modified.
FASTMATH = {"contract"}


@njit(inline="always")
def row6(x, i):
    """Row i of an (n, 6) table as a tuple."""
    return (x[i, 0], x[i, 1], x[i, 2], x[i, 3], x[i, 4], x[i, 5])


@njit(inline="always")
def row3(x, i):
    """Row i of an (n, ≥3) table, its first three entries, as a tuple."""
    return (x[i, 0], x[i, 1], x[i, 2])


@njit(inline="always")
def store6(out, i, v):
    """Row i of ``out`` = v."""
    out[i, 0] = v[0]
    out[i, 1] = v[1]
    out[i, 2] = v[2]
    out[i, 3] = v[3]
    out[i, 4] = v[4]
    out[i, 5] = v[5]


@njit(inline="always")
def add6(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4], a[5] + b[5])


@njit(inline="always")
def sub6(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3], a[4] - b[4], a[5] - b[5])


@njit(inline="always")
def axpy6(y, alpha, x):
    """y + α x."""
    return (y[0] + alpha * x[0], y[1] + alpha * x[1], y[2] + alpha * x[2],
            y[3] + alpha * x[3], y[4] + alpha * x[4], y[5] + alpha * x[5])


@njit(inline="always")
def dot_row6(x, i, b):
    """x[i] · b for a row of an (n, 6) table."""
    return (x[i, 0] * b[0] + x[i, 1] * b[1] + x[i, 2] * b[2]
            + x[i, 3] * b[3] + x[i, 4] * b[4] + x[i, 5] * b[5])


@njit(inline="always")
def cross_motion(a, b):
    """a ×ₘ b."""
    return (a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
            a[1] * b[5] - a[2] * b[4] + a[4] * b[2] - a[5] * b[1],
            a[2] * b[3] - a[0] * b[5] + a[5] * b[0] - a[3] * b[2],
            a[0] * b[4] - a[1] * b[3] + a[3] * b[1] - a[4] * b[0])


@njit(inline="always")
def cross_force(a, f):
    """a ×* f."""
    return (a[1] * f[2] - a[2] * f[1] + a[4] * f[5] - a[5] * f[4],
            a[2] * f[0] - a[0] * f[2] + a[5] * f[3] - a[3] * f[5],
            a[0] * f[1] - a[1] * f[0] + a[3] * f[4] - a[4] * f[3],
            a[1] * f[5] - a[2] * f[4],
            a[2] * f[3] - a[0] * f[5],
            a[0] * f[4] - a[1] * f[3])


@njit(inline="always")
def inert_mul(x, i, v):
    """I v for the 10-number inertia in row i of ``x`` (``mju_mulInertVec``)."""
    return (x[i, 0] * v[0] + x[i, 3] * v[1] + x[i, 4] * v[2] - x[i, 8] * v[4] + x[i, 7] * v[5],
            x[i, 3] * v[0] + x[i, 1] * v[1] + x[i, 5] * v[2] + x[i, 8] * v[3] - x[i, 6] * v[5],
            x[i, 4] * v[0] + x[i, 5] * v[1] + x[i, 2] * v[2] - x[i, 7] * v[3] + x[i, 6] * v[4],
            x[i, 8] * v[1] - x[i, 7] * v[2] + x[i, 9] * v[3],
            x[i, 6] * v[2] - x[i, 8] * v[0] + x[i, 9] * v[4],
            x[i, 7] * v[0] - x[i, 6] * v[1] + x[i, 9] * v[5])


@njit(inline="always")
def dot3(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(inline="always")
def cross3(a, b):
    """a × b."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@njit(inline="always")
def point_velocity(twist, r):
    """twist_v + twist_w × r: velocity of the point at offset r from the twist's reference."""
    return (twist[3] + twist[1] * r[2] - twist[2] * r[1],
            twist[4] + twist[2] * r[0] - twist[0] * r[2],
            twist[5] + twist[0] * r[1] - twist[1] * r[0])


@njit(inline="always")
def sub3(a, b):
    """a − b."""
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit(inline="always")
def axpy3(y, alpha, x):
    """y + alpha x."""
    return (y[0] + alpha * x[0], y[1] + alpha * x[1], y[2] + alpha * x[2])


@njit(inline="always")
def mat_vec3(mat, x):
    """mat x for a row-major 3 × 3 ``mat`` of 9 numbers (``geom_xmat``): a vector of a geom's
    frame in world axes."""
    return (mat[0] * x[0] + mat[1] * x[1] + mat[2] * x[2],
            mat[3] * x[0] + mat[4] * x[1] + mat[5] * x[2],
            mat[6] * x[0] + mat[7] * x[1] + mat[8] * x[2])


@njit(inline="always")
def mat_t_vec3(mat, x):
    """matᵀ x (``mju_mulMatTVec3``): a world vector in a geom's axes."""
    return (mat[0] * x[0] + mat[3] * x[1] + mat[6] * x[2],
            mat[1] * x[0] + mat[4] * x[1] + mat[7] * x[2],
            mat[2] * x[0] + mat[5] * x[1] + mat[8] * x[2])
