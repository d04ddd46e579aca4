"""The smooth absolute value of each row of a residual term r (d rows, parameter p > 0): about
|rⱼ| beyond p, quadratic rⱼ²/(2p) near zero. With sⱼ = √(rⱼ² + p²):

    n(r) = Σⱼ sⱼ − p        n'ⱼ(r) = rⱼ / sⱼ        n''ⱼⱼ(r) = p² / sⱼ³ = Fⱼⱼ²,  Fⱼⱼ = p / sⱼ^{3/2}

(n'' diagonal). Separable: each row is whitened on its own, J̃ⱼ = √w Fⱼⱼ r_xⱼ (and likewise for
u), and a row whose Jacobians are zero adds nothing.
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
        acc += np.sqrt(residual[k, j] * residual[k, j] + p * p) - p
    return acc


@njit(inline="always")
def gauss_newton_rows(residual, t, rows, m0, m, a, e, p, w, rx, ru, grad, Jx, Ju, g, F):
    """Of the term's kept rows q = m0 … m − 1 (residual row rows[q] at knot t, Jacobian rows
    rx[q], ru[q]) at weight w: grad[q] = w rⱼ / sⱼ, Jx[q] = √w Fⱼⱼ rx[q], Ju[q] = √w Fⱼⱼ ru[q]."""
    sw = np.sqrt(w)
    for q in range(m0, m):
        r = residual[t, rows[q]]
        s = np.sqrt(r**2 + p * p)
        grad[q] = w * r / s
        f = sw * p / s**1.5
        for c in range(rx.shape[1]):
            Jx[q, c] = f * rx[q, c]
        for c in range(ru.shape[1]):
            Ju[q, c] = f * ru[q, c]
