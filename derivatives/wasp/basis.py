"""Directions of the JVPs and the per-block JVP budget.

The inputs of one MuJoCo step are packed in the column layout of ``mjd_transitionFD``'s
[A B]: (dq, dv, dact, du), sizes (nv, nv, na, nu). WASP splits them into these four blocks and
gives each block b of size n an orthonormal basis Q_b (n x n) whose columns q_j are the
directions of its JVPs. The bases are shared by every knot.

Two bases: the coordinate axes (Q = I, the backend's default: column j of the estimate is the
last forward difference along input j) and the paper's seeded random orthonormal bases (dq and
dv, both of size nv, share one). With a dense basis every column of the estimate D̂ = F̂ Qᵀ mixes
all n cached JVPs, so whatever part of the Jacobian changed since a JVP was measured (in a
legged robot: the stance legs' and the base's columns when a foot touches down) shows up as
error in every column; with the axes it stays in the columns that changed. Both have the same
Frobenius error (Q is orthonormal); what differs is where it lands, and the planner's feedback
gains need the unchanged columns (say, a swing leg's) right.
"""

from __future__ import annotations

import math

import numpy as np

#: Block indices in the packed layout, in column order.
QPOS, QVEL, ACT, CTRL = 0, 1, 2, 3
BLOCKS = ("qpos", "qvel", "act", "ctrl")


def block_offsets(nv: int, na: int, nu: int) -> np.ndarray:
    """Start column of each block and the end: [0, nv, 2nv, 2nv+na, 2nv+na+nu]."""
    return np.cumsum([0, nv, nv, na, nu]).astype(np.int64)


def random_orthonormal(n: int, rng: np.random.Generator) -> np.ndarray:
    """Q of a QR factorization of a standard normal n x n matrix, signs fixed by diag(R) > 0.

    Fixing the signs makes Q Haar-distributed (and the QR's sign convention irrelevant), so
    the directions are dense: each JVP moves every input of its block.
    """
    if n == 0:
        return np.zeros((0, 0))
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    return q * np.where(np.diag(r) < 0, -1.0, 1.0)


def packed_directions(nv: int, na: int, nu: int, seed: int, axes: bool = False) -> np.ndarray:
    """Block-diagonal Q (N x N, N = 2nv + na + nu), stored transposed: row c is direction c.

    Row c holds the direction of packed column c restricted to its block (zeros elsewhere), so
    a kernel reads a direction as one contiguous row slice. ``axes`` gives the identity, the
    coordinate directions of plain finite differences.
    """
    offsets = block_offsets(nv, na, nu)
    size = int(offsets[-1])
    if axes:
        return np.eye(size)
    rng = np.random.default_rng(seed)
    state = random_orthonormal(nv, rng)
    blocks = (state, state, random_orthonormal(na, rng), random_orthonormal(nu, rng))
    directions = np.zeros((size, size))
    for lo, hi, q in zip(offsets[:-1], offsets[1:], blocks, strict=True):
        directions[lo:hi, lo:hi] = q.T
    return directions


def min_jvps(n: int, frac: float) -> int:
    """p_min = max(1, floor(frac n)) JVPs before the test may stop a block (0 if n = 0)."""
    if n == 0:
        return 0
    return min(n, max(1, math.floor(frac * n)))
