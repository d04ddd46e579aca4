"""The delete-a-block jackknife: its algebra, and that the figures mpc-sysid reports cover the
truth of a perturbed fake robot (the statistical σ² (AᵀA)⁻¹ it reported before did not: the
errors were 3-5 of those)."""

from __future__ import annotations

import numpy as np
import pytest
from test_sysid_cli import DELAY, gantry_run, truth  # noqa: F401  (the module's fixture)

from mpc.app.sysid import uncertainty
from mpc.app.sysid.identify import identify


def test_the_jackknife_of_a_mean_is_its_standard_error():
    x = np.random.default_rng(0).normal(size=50)
    parts = uncertainty.blocks(len(x), k=50)  # delete-one
    means = np.array([[np.delete(x, p).mean()] for p in parts])
    assert uncertainty.jackknife_std(means)[0] == pytest.approx(x.std(ddof=1) / np.sqrt(50))


def test_leave_one_out_from_the_blocks_normal_equations_is_the_fit_without_the_block():
    rng = np.random.default_rng(1)
    A, b = rng.normal(size=(200, 3)), rng.normal(size=200)
    parts = uncertainty.blocks(200, k=7)
    theta, cost = uncertainty.leave_one_out(*uncertainty.normal_equations(A, b, parts))
    for k, p in enumerate(parts):
        keep = np.setdiff1d(np.arange(200), p)
        direct, *_ = np.linalg.lstsq(A[keep], b[keep], rcond=None)
        np.testing.assert_allclose(theta[k], direct, rtol=1e-10)
        assert cost[k] == pytest.approx(np.sum((A[keep] @ direct - b[keep]) ** 2))
    # for a linear fit the linearized jackknife is exact
    full, *_ = np.linalg.lstsq(A, b, rcond=None)
    np.testing.assert_allclose(uncertainty.linearized(A, A @ full - b, full, parts), theta,
                               rtol=1e-9, atol=1e-12)


def test_the_reported_uncertainty_covers_the_truth(gantry_run):  # noqa: F811
    """Three parameters in four within two reported standard deviations of the truth, none
    further than four, and the delay within two (the jackknife's spread from ten blocks is
    itself uncertain by about a third, hence the allowance; the statistical figures put the
    delay tens of theirs off, the jackknife's with the log's sampling under 2)."""
    ident = identify([gantry_run])
    z = []
    for fit in ident.actuators.joints:
        p = truth().joints[fit.joint]
        z += [abs(v - getattr(p, k)) / fit.std[k] for k, v in fit.values.items()]
    z = np.array(z)
    assert np.mean(z > 2) <= 0.25 and z.max() < 4, np.round(np.sort(z)[-8:], 1)
    assert abs(ident.delay - DELAY) < 2 * ident.actuators.delay_std
