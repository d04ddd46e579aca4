"""The quadratic norm of a residual term r (d rows; the parameter p is not used):

    n(r) = ½ rᵀr        n'(r) = r        n''(r) = I = F Fᵀ,  F = I.

Separable: n'' is diagonal, so each row is whitened on its own, J̃ⱼ = √w r_xⱼ (and likewise
for u), and a row whose Jacobians are zero adds nothing.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: n'' is diagonal: the Gauss-Newton kernel may drop rows whose Jacobians are zero.
SEPARABLE = True


@njit(inline="always")
def value(residual, k, a, e, p):
    """n(r) of r = residual[k, a:e]."""
    acc = 0.0
    for j in range(a, e):
        acc += residual[k, j] * residual[k, j]
    return 0.5 * acc


@njit(inline="always")
def gauss_newton_rows(residual, t, rows, m0, m, a, e, p, w, rx, ru, grad, Jx, Ju, g, F):
    """Of the term's kept rows q = m0 … m − 1 (residual row rows[q] at knot t, Jacobian rows
    rx[q], ru[q]) at weight w: grad[q] = w rⱼ, Jx[q] = √w rx[q], Ju[q] = √w ru[q]."""
    sw = np.sqrt(w)
    for q in range(m0, m):
        grad[q] = w * residual[t, rows[q]]
        for c in range(rx.shape[1]):
            Jx[q, c] = sw * rx[q, c]
        for c in range(ru.shape[1]):
            Ju[q, c] = sw * ru[q, c]
