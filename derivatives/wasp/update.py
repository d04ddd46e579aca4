"""The WASP estimate update and the test that decides when a block has seen enough JVPs.

For one input block with orthonormal directions Q = [q_1 … q_n] (n x n), the cache holds
F̂ (m x n), column j the last measured JVP f_j ≈ J q_j, and the estimate D̂ of the Jacobian J
(m x n). A fresh JVP f along q_j gives the paper's least-squares problem on the "web of affine
spaces" {D : D q_i = f̂_i}: stay as close as possible to every cached observation while
passing exactly through the fresh one,

    D̂⁺ = argmin_D  Σ_i ‖D q_i − f̂_i‖² = ‖D Q − F̂‖²_F   subject to   D q_j = f.

Its KKT system [2QQᵀ, q_j; q_jᵀ, 0] [Dᵀ; λᵀ] = [2Q F̂ᵀ; fᵀ] has, for QQᵀ = I, the closed form
λᵀ/2 = F̂[:, j]ᵀ − fᵀ and

    D̂⁺ = F̂ Qᵀ + (f − F̂[:, j]) q_jᵀ,

that is: replace column j of F̂ by f and keep D̂ = F̂ Qᵀ, a rank-one update in O(mn).
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Below this norm a JVP counts as zero (a forward difference of 1e-6 cannot resolve less).
ZERO_NORM = 1e-10


@njit(cache=True, nogil=True, error_model="numpy")
def replace_column(F, D, directions, col, lo, hi, f):
    """Column ``col`` of F (m x N) becomes f and D (m x N) gets (f − F_old[:, col]) q_colᵀ.

    ``directions[col, lo:hi]`` is q_col restricted to its block [lo, hi); D changes only there.
    """
    for r in range(F.shape[0]):
        delta = f[r] - F[r, col]
        for k in range(lo, hi):
            D[r, k] += delta * directions[col, k]
        F[r, col] = f[r]


@njit(cache=True, nogil=True, error_model="numpy")
def agrees(a, b, tol):
    """Whether the cached prediction a and the fresh JVP b agree within ``tol``:

        |1 − cos∠(a, b)| ≤ tol   and   |‖a‖ − ‖b‖| / max(‖a‖, ‖b‖) ≤ tol.

    A vector below :data:`ZERO_NORM` has no direction, so the test fails when only one of
    them is that small. When both are, the cache predicted the zero JVP that was measured: that
    counts as agreement, otherwise a block without effect (an actuator with zero gain, an input
    no output depends on) would be swept in full at every call.
    """
    aa = 0.0
    bb = 0.0
    ab = 0.0
    for i in range(a.shape[0]):
        aa += a[i] * a[i]
        bb += b[i] * b[i]
        ab += a[i] * b[i]
    na = np.sqrt(aa)
    nb = np.sqrt(bb)
    if na < ZERO_NORM and nb < ZERO_NORM:
        return True
    if na < ZERO_NORM or nb < ZERO_NORM:
        return False
    cos = ab / (na * nb)
    return abs(1.0 - cos) <= tol and abs(na - nb) / max(na, nb) <= tol
