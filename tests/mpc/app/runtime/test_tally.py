"""Tally: exact statistics while it holds every value, bounded memory and a small rank error
once it does not."""

from __future__ import annotations

import numpy as np
import pytest

from mpc.app.runtime.tally import Tally


def test_exact_while_every_value_is_kept():
    values = np.random.default_rng(1).lognormal(size=5000)
    t = Tally(capacity=5000)
    for v in values:
        t.add(v)
    assert t.median() == np.median(values)
    assert t.quantile(0.95) == np.percentile(values, 95)
    assert t.mean() == pytest.approx(values.mean(), rel=1e-12)
    assert t.max() == values.max() and len(t) == 5000


def test_empty_is_none():
    t = Tally()
    assert t.median() is None and t.quantile(0.95) is None and t.mean() is None
    assert t.max() is None and len(t) == 0


@pytest.mark.parametrize("period", [10, 16, 37])
def test_a_long_stream_keeps_capacity_values_and_its_quantiles_stay_close(period):
    """A sawtooth as the policy age of a lockstep run is (its period a power of two, which
    would alias a sampling by stride), a hundred times the capacity."""
    n, capacity = 200_000, 2000
    values = (np.arange(n) % period) + np.random.default_rng(2).uniform(0, 1e-3, n)
    t = Tally(capacity=capacity)
    for v in values:
        t.add(v)
    assert t.kept == capacity and t._sample.size == capacity
    assert t.max() == values.max() and t.mean() == pytest.approx(values.mean(), rel=1e-9)
    ordered = np.sort(values)
    for q in (0.5, 0.95):
        rank = np.searchsorted(ordered, t.quantile(q)) / n  # where the estimate falls
        assert abs(rank - q) < 4 / np.sqrt(capacity), (q, rank)


def test_a_tally_keeps_at_least_one_value():
    with pytest.raises(ValueError):
        Tally(capacity=0)
