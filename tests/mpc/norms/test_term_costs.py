"""The compiled term costs against the numpy norm oracles."""

import numpy as np
import pytest
from norm_oracles import ORACLES

from mpc import norms
from mpc.tasks.task_base import CostTerm, Task


class _Terms(Task):
    """Just the cost terms of a task (the rest of the interface is not used here)."""

    name = description = "terms"
    add_sensors = residual = residual_jacobian = None

    def __init__(self, terms):
        self.terms = list(terms)
        self._term_key = None


TERMS = [CostTerm("a", 3, "quadratic", 0.0, 2.0), CostTerm("b", 2, "l2", 0.05, 0.5),
         CostTerm("c", 4, "smooth_abs", 0.1, 3.0), CostTerm("d", 1, "l2", 0.3, 0.0),
         CostTerm("e", 2, "smooth_abs", 0.02, 1.5)]


@pytest.mark.parametrize("shape", [(12,), (7, 12), (3, 5, 12)])
def test_term_costs_match_the_numpy_norms(rng, shape):
    task = _Terms(TERMS)
    r = rng.normal(size=shape)
    expected = np.stack([t.weight * ORACLES[t.norm].value(r[..., s], t.param)
                         for t, s in zip(task.terms, task.term_slices, strict=True)], axis=-1)
    got = task.term_costs(r)
    assert got.shape == (*shape[:-1], len(TERMS))
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(task.cost(r), expected.sum(axis=-1), rtol=1e-13)


@pytest.mark.parametrize("norm", norms.NORMS)
def test_a_term_of_each_norm_matches_its_oracle(norm, rng):
    """Every norm of the table, alone and after a term of each other norm (its code reached
    wherever it stands)."""
    others = [CostTerm(n, 2, n, 0.1, 1.0) for n in norms.NORMS if n != norm]
    task = _Terms([*others, CostTerm("x", 3, norm, 0.07, 2.5)])
    r = rng.normal(size=(6, task.nresidual))
    np.testing.assert_allclose(task.term_costs(r)[:, -1],
                               2.5 * ORACLES[norm].value(r[:, -3:], 0.07), rtol=1e-13)


def test_changed_terms_take_effect(rng):
    task = _Terms(TERMS)
    r = rng.normal(size=12)
    before = task.cost(r)
    task.terms[0] = CostTerm("a", 3, "quadratic", 0.0, 4.0)
    assert task.cost(r) == pytest.approx(before + 2.0 * 0.5 * np.sum(r[:3] ** 2), rel=1e-13)


def test_a_residual_of_the_wrong_width_is_refused(rng):
    with pytest.raises(ValueError, match="12"):
        _Terms(TERMS).term_costs(rng.normal(size=(4, 9)))
