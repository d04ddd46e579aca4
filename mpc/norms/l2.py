"""The smoothed Euclidean norm of a residual term r (d rows, parameter p > 0): about ‖r‖ beyond p,
quadratic ‖r‖²/(2p) near zero. With s = √(rᵀr + p²) and ĝ = r / s:

    n(r) = s − p        n'(r) = ĝ        n''(r) = (I − ĝ ĝᵀ) / s = F Fᵀ,
    F = (I − c ĝ ĝᵀ) / √s,  c = (1 − √(1 − ĝᵀĝ)) / ĝᵀĝ  (c → ½ as ĝ → 0),

for which (I − c ĝ ĝᵀ)² = I − ĝ ĝᵀ (ĝᵀĝ < 1). Not separable: F mixes the rows of the term,
J̃ = √w F r_x (F symmetric), so every row is kept, also one whose Jacobians are zero.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: n'' couples the rows: whitened as a whole term (gauss_newton_rows), every row kept.
SEPARABLE = False


@njit(inline="always")
def value(residual, k, a, e, p):
    """n(r) of r = residual[k, a:e]."""
    acc = 0.0
    for j in range(a, e):
        acc += residual[k, j] * residual[k, j]
    return np.sqrt(acc + p * p) - p


@njit(inline="always")
def gauss_newton_rows(residual, t, a, e, p, w, sw, rx, ru, m0, grad, Jx, Ju, g, F):
    """Of the term's rows, residual rows a … e − 1 at knot t, packed from m0 on (Jacobian rows
    rx[m0 + q], ru[m0 + q]), at weight w (sw = √w): grad = w ĝ, Jx = √w F rx, Ju = √w F ru, with
    the scratch g (d) for ĝ and F (d, d)."""
    d = e - a
    ss = 0.0
    for j in range(a, e):
        ss += residual[t, j] * residual[t, j]
    s = np.sqrt(ss + p * p)
    g2 = 0.0
    for q in range(d):
        g[q] = residual[t, a + q] / s
        g2 += g[q] * g[q]
        grad[m0 + q] = w * g[q]
    cf = (1.0 - np.sqrt(max(1.0 - g2, 0.0))) / g2 if g2 > 1e-12 else 0.5
    scale = sw / np.sqrt(s)
    for q in range(d):
        for o in range(d):
            F[q, o] = ((1.0 if q == o else 0.0) - cf * (g[q] * g[o])) * scale
    Jx[m0:m0 + d] = 0.0
    Ju[m0:m0 + d] = 0.0
    for q in range(d):
        for o in range(d):
            fqo = F[q, o]
            for c in range(rx.shape[1]):
                Jx[m0 + q, c] += fqo * rx[m0 + o, c]
            for c in range(ru.shape[1]):
                Ju[m0 + q, c] += fqo * ru[m0 + o, c]
