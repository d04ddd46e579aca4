"""Dense linear algebra for small systems with many right-hand sides.

Matrices of a kinematic tree (M, M + JᵀHJ, M + h diag(d)) share the tree's sparsity: dofs on
different branches do not couple, and their Cholesky factors have no fill-in. The kernels are
dense but skip exact zeros in the row operations, which recovers most of that structure.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def dense_from_sparse(values, rownnz, rowadr, colind, out):
    """Symmetric dense matrix from MuJoCo's lower-triangular CSR (``mjData.M``)."""
    out[:, :] = 0.0
    for i in range(out.shape[0]):
        for a in range(rowadr[i], rowadr[i] + rownnz[i]):
            j = colind[a]
            out[i, j] = values[a]
            out[j, i] = values[a]


@njit(cache=True, nogil=True)
def cholesky(A, L):
    """Lower-triangular L with L Lᵀ = A (A symmetric positive definite); False if it is not."""
    n = A.shape[0]
    for j in range(n):
        for i in range(j):
            L[i, j] = 0.0
        s = A[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not s > 0.0:
            return False
        d = np.sqrt(s)
        L[j, j] = d
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                if L[j, k] != 0.0:
                    s -= L[i, k] * L[j, k]
            L[i, j] = s / d
    return True


@njit(cache=True, nogil=True)
def cholesky_solve(L, X):
    """X ← (L Lᵀ)⁻¹ X in place, X of shape (n, m); rows are updated whole (contiguous)."""
    n, m = X.shape
    for i in range(n):
        for k in range(i):
            lik = L[i, k]
            if lik != 0.0:
                for c in range(m):
                    X[i, c] -= lik * X[k, c]
        d = 1.0 / L[i, i]
        for c in range(m):
            X[i, c] *= d
    for i in range(n - 1, -1, -1):
        for k in range(i + 1, n):
            lki = L[k, i]
            if lki != 0.0:
                for c in range(m):
                    X[i, c] -= lki * X[k, c]
        d = 1.0 / L[i, i]
        for c in range(m):
            X[i, c] *= d
