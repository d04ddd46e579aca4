"""Each norm's first and second derivatives against central finite differences."""

import numpy as np
import pytest

from mpc import norms


def fd_gradient(f, r, h=1e-6):
    g = np.zeros_like(r)
    for i in range(len(r)):
        e = np.zeros_like(r)
        e[i] = h
        g[i] = (f(r + e) - f(r - e)) / (2 * h)
    return g


@pytest.mark.parametrize("norm", norms.NORMS)
@pytest.mark.parametrize("seed", range(4))
def test_derivatives_match_finite_differences(norm, seed):
    rng = np.random.default_rng(seed)
    r = rng.standard_normal(5) * (0.03 if seed % 2 else 1.0)  # near and far from the kink
    p = 0.05
    value = lambda x: norms.value(norm, x, p)  # noqa: E731
    grad = lambda x: norms.gradient(norm, x, p)  # noqa: E731
    np.testing.assert_allclose(norms.gradient(norm, r, p), fd_gradient(value, r),
                               rtol=1e-6, atol=1e-8)
    H_fd = np.stack([fd_gradient(lambda x, i=i: grad(x)[i], r) for i in range(len(r))])
    np.testing.assert_allclose(norms.hessian(norm, r, p), H_fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("norm", norms.NORMS)
def test_norms_are_zero_at_zero_and_positive_elsewhere(norm):
    assert norms.value(norm, np.zeros(3), 0.1) == 0.0
    assert norms.value(norm, np.array([0.2, -0.1, 0.3]), 0.1) > 0.0


def test_batched_evaluation_matches_single():
    rng = np.random.default_rng(3)
    r = rng.standard_normal((4, 7, 3))
    for norm in norms.NORMS:
        batch = norms.value(norm, r, 0.2)
        single = np.array([[norms.value(norm, r[i, j], 0.2) for j in range(7)]
                           for i in range(4)])
        np.testing.assert_allclose(batch, single)
