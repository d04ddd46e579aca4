"""The Gauss-Newton kernel on sparse Jacobians (its row-by-row products) against numpy.

The dense case (every product through BLAS) is checked in tests/mpc/planner/test_cost.py.
"""

from itertools import pairwise
from types import SimpleNamespace

import numpy as np
import pytest
from norm_oracles import gauss_newton_reference

from mpc.norms.gauss_newton import _spans, _sparse_gram, _sparse_product
from mpc.planner.cost import gauss_newton


def sparse(rng, shape, density):
    """Random entries, each nonzero with probability ``density``."""
    return rng.standard_normal(shape) * (rng.random(shape) < density)


def sparse_problem(rng, T=7, ns=14, nx=24, nu=4):
    """Terms of every norm over 16 residual rows and a zero-weight term, shaped like the robots'
    Jacobians: each row reads one or two sensors (rows 5 and 11 none: row 5 in an l2 term, row
    11 in a quadratic one) and each sensor depends on a window of three coordinates. Sensors
    0 … ns/2 − 1 see the first half of x, the others the second half, and a row (and the l2
    term, whose F mixes its rows) reads from one half only: every row of J̃_x spans at most
    nx/2 columns, and every row of J̃_u at most two, so the kernel takes its row-by-row products
    (SPARSE_RATIO = 4)."""
    terms = [SimpleNamespace(dim=3, norm="smooth_abs", param=0.05, weight=0.7),
             SimpleNamespace(dim=3, norm="l2", param=0.1, weight=1.3),
             SimpleNamespace(dim=2, norm="quadratic", param=0.0, weight=0.0),
             SimpleNamespace(dim=4, norm="quadratic", param=0.0, weight=0.4),
             SimpleNamespace(dim=4, norm="quadratic", param=0.0, weight=0.2)]
    starts = np.cumsum([0] + [t.dim for t in terms])
    task = SimpleNamespace(terms=terms,
                           term_slices=[slice(a, b) for a, b in pairwise(starts)])
    nr = starts[-1]
    half = ns // 2
    C = np.zeros((T, ns, nx))
    D = np.zeros((T, ns, nu))
    for k in range(ns):
        o = rng.integers(0, nx // 2 - 2) + (nx // 2 if k >= half else 0)
        C[:, k, o:o + 3] = rng.standard_normal((T, 3))
        if k % 3 == 0:
            D[:, k, rng.integers(0, 2)] = rng.standard_normal(T)
    Rs = np.zeros((T, nr, ns))
    for j in range(nr):
        if j in (5, 11):
            continue
        side = 0 if 3 <= j < 6 else j % 2  # the l2 term (rows 3 … 5) reads one half
        reads = side * half + rng.choice(half, size=1 + j % 2, replace=False)
        Rs[:, j, reads] = rng.uniform(0.5, 2.0, (T, reads.size))
    r = 0.2 * rng.standard_normal((T, nr))
    return task, r, Rs, C, D


@pytest.mark.parametrize("seed", range(4))
def test_sparse_jacobians_equal_the_numpy_reference(seed):
    rng = np.random.default_rng(seed)
    task, r, Rs, C, D = sparse_problem(rng)
    a = gauss_newton(task, r, Rs, C, D)
    b = gauss_newton_reference(task, r, Rs @ C, Rs @ D)
    for k in ("lx", "lu", "lxx", "luu", "lux"):
        scale = np.abs(getattr(b, k)).max()
        np.testing.assert_allclose(getattr(a, k), getattr(b, k), rtol=1e-10, atol=1e-13 * scale)
    np.testing.assert_array_equal(a.lxx, a.lxx.transpose(0, 2, 1))


def test_a_non_finite_residual_poisons_the_gradient_even_without_a_jacobian():
    """Rows that read no sensor are skipped, but not when their residual is NaN: ℓ_x must stay
    non-finite, as the dense product 0 · NaN makes it, for the planner to discard the step."""
    task, r, Rs, C, D = sparse_problem(np.random.default_rng(9))
    r[2, 11] = np.nan
    a = gauss_newton(task, r, Rs, C, D)
    assert np.isnan(a.lx[2]).all()
    assert np.isfinite(np.delete(a.lx, 2, axis=0)).all()


def test_no_contributing_rows_give_zeros():
    task, r, Rs, C, D = sparse_problem(np.random.default_rng(3))
    for term in task.terms:
        term.weight = 0.0
    a = gauss_newton(task, r, Rs, C, D)
    for k in ("lx", "lu", "lxx", "luu", "lux"):
        np.testing.assert_array_equal(getattr(a, k), 0.0)


@pytest.mark.parametrize("density", [0.0, 0.1, 0.5, 1.0])
def test_row_by_row_products_equal_numpy(density):
    rng = np.random.default_rng(int(10 * density))
    m = 9
    Jx = sparse(rng, (m + 2, 7), density)  # two rows beyond m that must be ignored
    Ju = sparse(rng, (m + 2, 3), density)
    lo_x, hi_x, lo_u, hi_u = (np.empty(m + 2, dtype=np.int64) for _ in range(4))
    work = _spans(Jx, m, lo_x, hi_x)
    _spans(Ju, m, lo_u, hi_u)
    for j in range(m):
        nz = np.flatnonzero(Jx[j])
        span = (nz[0], nz[-1] + 1) if nz.size else (0, 0)
        assert (lo_x[j], hi_x[j]) == span or (nz.size == 0 and lo_x[j] == hi_x[j])
    assert work == sum((hi_x[:m] - lo_x[:m]) ** 2)
    out = np.full((7, 7), np.nan)
    _sparse_gram(Jx, m, lo_x, hi_x, out)
    np.testing.assert_allclose(out, Jx[:m].T @ Jx[:m], rtol=1e-14, atol=1e-14)
    out = np.full((3, 7), np.nan)
    _sparse_product(Ju, lo_u, hi_u, Jx, lo_x, hi_x, m, out)
    np.testing.assert_allclose(out, Ju[:m].T @ Jx[:m], rtol=1e-14, atol=1e-14)
