"""Box-constrained QP against brute force over active sets."""

import itertools

import numpy as np
import pytest

from mpc.planner.kernels.boxqp import NOT_PD, boxqp


def brute_force(H, g, lo, hi):
    """Minimum over every assignment of each variable to lower, upper or free (KKT solve)."""
    n = len(g)
    best, best_x = np.inf, None
    for pattern in itertools.product((0, 1, 2), repeat=n):
        x = np.zeros(n)
        fixed = np.array([p != 2 for p in pattern])
        for i, p in enumerate(pattern):
            if p == 0:
                x[i] = lo[i]
            elif p == 1:
                x[i] = hi[i]
        free = ~fixed
        if free.any():
            rhs = -(g[free] + H[np.ix_(free, fixed)] @ x[fixed])
            x[free] = np.linalg.solve(H[np.ix_(free, free)], rhs)
        if np.any(x < lo - 1e-12) or np.any(x > hi + 1e-12):
            continue
        v = g @ x + 0.5 * x @ H @ x
        if v < best:
            best, best_x = v, x
    return best_x, best


@pytest.mark.parametrize("seed", range(12))
def test_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = 4
    M = rng.standard_normal((n, n))
    H = M @ M.T + 0.1 * np.eye(n)
    g = 3 * rng.standard_normal(n)
    lo = -rng.uniform(0.1, 1.0, n)
    hi = rng.uniform(0.1, 1.0, n)
    x = np.zeros(n)
    free = np.zeros(n, dtype=np.bool_)
    L = np.zeros((n, n))
    status, nfree = boxqp(H, g, lo, hi, np.zeros(n), x, free, L)
    assert status > 0
    expected, value = brute_force(H, g, lo, hi)
    np.testing.assert_allclose(x, expected, atol=1e-7)
    assert abs(g @ x + 0.5 * x @ H @ x - value) < 1e-9
    # the free set is where the solution is strictly inside the box
    inside = (x > lo + 1e-9) & (x < hi - 1e-9)
    assert np.all(free[inside])
    assert nfree == free.sum()


def test_unconstrained_optimum_inside_box_is_newton_step():
    H = np.array([[2.0, 0.5], [0.5, 1.0]])
    g = np.array([0.1, -0.2])
    x = np.zeros(2)
    free = np.zeros(2, dtype=np.bool_)
    L = np.zeros((2, 2))
    boxqp(H, g, -np.ones(2) * 10, np.ones(2) * 10, np.zeros(2), x, free, L)
    np.testing.assert_allclose(x, -np.linalg.solve(H, g), atol=1e-10)
    assert free.all()
    np.testing.assert_allclose(L @ L.T, H, atol=1e-12)


def test_indefinite_hessian_is_reported():
    H = np.array([[1.0, 0.0], [0.0, -1.0]])
    x = np.zeros(2)
    status, _ = boxqp(H, np.ones(2), -np.ones(2), np.ones(2), np.zeros(2), x,
                      np.zeros(2, dtype=np.bool_), np.zeros((2, 2)))
    assert status == NOT_PD
