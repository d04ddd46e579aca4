"""Small dense linear algebra for the backward pass (Cholesky with a success flag)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def cholesky(H, L):
    """Lower-triangular L with L Lᵀ = H; returns False if H is not positive definite."""
    n = H.shape[0]
    for j in range(n):
        s = H[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not s > 0.0:
            return False
        L[j, j] = np.sqrt(s)
        for i in range(j + 1, n):
            s = H[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / L[j, j]
        for i in range(j):
            L[i, j] = 0.0
    return True


@njit(cache=True, nogil=True)
def cholesky_solve(L, B):
    """Solve (L Lᵀ) X = B in place of B (B of shape (n,) or (n, m), C-contiguous)."""
    n = L.shape[0]
    X = B.reshape(n, -1)
    m = X.shape[1]
    if m == 1:
        for i in range(n):
            s = X[i, 0]
            for k in range(i):
                s -= L[i, k] * X[k, 0]
            X[i, 0] = s / L[i, i]
        for i in range(n - 1, -1, -1):
            s = X[i, 0]
            for k in range(i + 1, n):
                s -= L[k, i] * X[k, 0]
            X[i, 0] = s / L[i, i]
        return
    # Several right-hand sides: substitute whole rows, so the innermost loop runs along a
    # contiguous row of X (vectorized; the row views let the compiler see that) rather than
    # down a strided column. Each entry sees the same operations in the same order as the
    # single-column loop above.
    for i in range(n):
        xi = X[i]
        for k in range(i):
            f = L[i, k]
            xk = X[k]
            for c in range(m):
                xi[c] -= f * xk[c]
        d = L[i, i]
        for c in range(m):
            xi[c] /= d
    for i in range(n - 1, -1, -1):
        xi = X[i]
        for k in range(i + 1, n):
            f = L[k, i]
            xk = X[k]
            for c in range(m):
                xi[c] -= f * xk[c]
        d = L[i, i]
        for c in range(m):
            xi[c] /= d
