"""The quadratic norm of a residual term r (d rows; the parameter p is not used):

    n(r) = ½ rᵀr        n'(r) = r        n''(r) = I = F Fᵀ,  F = I.

Separable: n'' is diagonal, so each row is whitened on its own, J̃ⱼ = √w r_xⱼ (and likewise
for u), and a row whose Jacobians are zero adds nothing.
"""

from __future__ import annotations

from numba import njit

#: n'' is diagonal: whitened row by row (gauss_newton_row); rows without Jacobian are dropped.
SEPARABLE = True


@njit(inline="always")
def value(residual, k, a, e, p):
    """n(r) of r = residual[k, a:e]."""
    acc = 0.0
    for j in range(a, e):
        acc += residual[k, j] * residual[k, j]
    return 0.5 * acc


@njit(inline="always")
def gauss_newton_row(r, p, w, sw):
    """Of one row r of the term at weight w (sw = √w): the gradient row w rⱼ and the whitening
    factor √w Fⱼⱼ = √w, by which the kernel scales the row's Jacobians."""
    return w * r, sw
