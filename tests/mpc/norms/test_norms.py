"""The norms: each oracle's derivatives against finite differences, and the table, the compiled
norms and the oracles covering the same norms (a norm added to one and not the others fails)."""

from types import SimpleNamespace

import numpy as np
import pytest
from norm_oracles import ORACLES, gauss_newton_reference

from mpc import norms
from mpc.norms import dispatch
from mpc.norms.term_costs import term_costs
from mpc.planner.cost import gauss_newton
from mpc.tasks.task_base import CostTerm, term_table


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
    oracle = ORACLES[norm]
    grad = lambda x: oracle.gradient(x, p)  # noqa: E731
    np.testing.assert_allclose(oracle.gradient(r, p), fd_gradient(lambda x: oracle.value(x, p), r),
                               rtol=1e-6, atol=1e-8)
    H_fd = np.stack([fd_gradient(lambda x, i=i: grad(x)[i], r) for i in range(len(r))])
    np.testing.assert_allclose(oracle.hessian(r, p), H_fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("norm", norms.NORMS)
def test_norms_are_zero_at_zero_and_positive_elsewhere(norm):
    assert ORACLES[norm].value(np.zeros(3), 0.1) == 0.0
    assert ORACLES[norm].value(np.array([0.2, -0.1, 0.3]), 0.1) > 0.0


def test_batched_evaluation_matches_single():
    rng = np.random.default_rng(3)
    r = rng.standard_normal((4, 7, 3))
    for oracle in ORACLES.values():
        for f in (oracle.value, oracle.gradient, oracle.hessian):
            single = np.array([[f(r[i, j], 0.2) for j in range(7)] for i in range(4)])
            np.testing.assert_allclose(f(r, 0.2), single)


def test_the_table_and_the_oracles_name_the_same_norms():
    assert set(ORACLES) == set(norms.NORMS)


@pytest.mark.parametrize("norm", norms.NORMS)
def test_each_norm_module_has_the_compiled_interface_inlined(norm):
    """What the kernels call: a flag, the value and the Gauss-Newton rows (one at a time for a
    separable norm, the whole term for a coupled one), as numba functions that numba inlines."""
    module = norms.NORMS[norm]
    assert isinstance(module.SEPARABLE, bool)
    rows = module.gauss_newton_row if module.SEPARABLE else module.gauss_newton_rows
    for f in (module.value, rows):
        assert f.targetoptions.get("inline") == "always", f"{norm}.{f.__name__}"


@pytest.mark.parametrize("norm", norms.NORMS)
def test_separable_means_a_diagonal_hessian(norm):
    """The Gauss-Newton kernel drops a separable norm's rows without Jacobian: right only when
    n'' is diagonal."""
    H = ORACLES[norm].hessian(np.array([0.3, -0.2, 0.5]), 0.1)
    diagonal = bool(np.all(H[~np.eye(3, dtype=bool)] == 0.0))
    assert norms.NORMS[norm].SEPARABLE is diagonal
    assert dispatch.SEPARABLE[norms.CODES[norm]] == diagonal


@pytest.mark.parametrize("norm", norms.NORMS)
def test_both_kernels_select_each_norm_by_its_code(norm, rng):
    """A term of this norm through the stage-cost kernel equals the norm module's own compiled
    value and the oracle's, and through the Gauss-Newton kernel the oracle's derivatives."""
    term = CostTerm("x", 4, norm, 0.2, 1.5)
    r = 0.5 * rng.standard_normal((3, 4))
    starts, dims, codes, params, weights = term_table([term])
    out = np.empty((3, 1))
    term_costs(r, starts, dims, codes, params, weights, out)
    own = [norms.NORMS[norm].value(r, k, 0, 4, 0.2) for k in range(3)]
    np.testing.assert_array_equal(out[:, 0], 1.5 * np.array(own))
    np.testing.assert_allclose(out[:, 0], 1.5 * ORACLES[norm].value(r, 0.2), rtol=1e-14)
    task = SimpleNamespace(terms=[term], term_slices=[slice(0, 4)])
    Rs, C, D = (rng.standard_normal(s) for s in ((3, 4, 5), (3, 5, 6), (3, 5, 2)))
    a = gauss_newton(task, r, Rs, C, D)
    b = gauss_newton_reference(task, r, Rs @ C, Rs @ D)
    for k in ("lx", "lu", "lxx", "luu", "lux"):
        np.testing.assert_allclose(getattr(a, k), getattr(b, k), rtol=1e-12, atol=1e-14)
