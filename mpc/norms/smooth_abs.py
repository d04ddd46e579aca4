"""The smooth absolute value of each row of a residual term r (d rows, parameter p > 0): about
|rⱼ| beyond p, quadratic rⱼ²/(2p) near zero. With sⱼ = √(rⱼ² + p²):

    n(r) = Σⱼ sⱼ − p        n'ⱼ(r) = rⱼ / sⱼ        n''ⱼⱼ(r) = p² / sⱼ³ = Fⱼⱼ²,  Fⱼⱼ = p / sⱼ^{3/2}

(n'' diagonal). Separable: each row is whitened on its own, J̃ⱼ = √w Fⱼⱼ r_xⱼ (and likewise for
u), and a row whose Jacobians are zero adds nothing.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: n'' is diagonal: whitened row by row (gauss_newton_row); rows without Jacobian are dropped.
SEPARABLE = True


@njit(inline="always")
def value(residual, k, a, e, p):
    """n(r) of r = residual[k, a:e]."""
    acc = 0.0
    for j in range(a, e):
        acc += np.sqrt(residual[k, j] * residual[k, j] + p * p) - p
    return acc


@njit(inline="always")
def gauss_newton_row(r, p, w, sw):
    """Of one row r of the term at weight w (sw = √w): the gradient row w r / s and the
    whitening factor √w F = √w p / s^{3/2}, by which the kernel scales the row's Jacobians."""
    s = np.sqrt(r**2 + p * p)
    return w * r / s, sw * p / s**1.5
