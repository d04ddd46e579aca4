"""Planner iterations: progress on the A1 task and the discard-on-NaN guarantee."""

import threading

import mujoco
import numpy as np
import pytest

import derivatives
from derivatives.fd import FDProvider
from derivatives.provider_base import Linearization
from mpc.app.assembly import home_ctrl
from mpc.planner.ilqr import ILQR, ILQRSettings, Regularization, derivative_knots


def a1_planner(task, model, provider=None, **settings):
    provider = provider or derivatives.make_provider("fd", model)
    s = ILQRSettings(**{"threads": 1, **settings})
    planner = ILQR(task, model, provider, s, home_ctrl(model, "home"))
    d = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, d, 0)
    planner.reset(0.0, d.qpos, d.qvel, d.act)
    return planner, d


def test_iterations_lower_the_cost_of_the_plan(a1_task):
    task, model = a1_task
    planner, d = a1_planner(task, model)
    costs = []
    for _ in range(4):
        stats = planner.iterate(0.0, d.qpos, d.qvel, d.act)
        assert stats.status == "ok"
        costs.append(stats.cost)
        assert stats.cost <= stats.cost_nominal + 1e-12
    assert costs[-1] < costs[0]
    assert set(stats.timings) >= {"nominal", "derivatives", "cost_derivatives", "backward",
                                  "linesearch", "total"}


class NaNProvider(FDProvider):
    """fd, but every Jacobian it returns is poisoned."""

    def horizon(self, trajectory, knots, out):
        super().horizon(trajectory, knots, out)
        out.A[len(knots) // 2, 3, 3] = np.nan


def test_nan_derivatives_discard_the_iteration_and_keep_the_policy(a1_task):
    task, model = a1_task
    planner, d = a1_planner(task, model, NaNProvider(model))
    before = planner.policy
    stats = planner.iterate(0.0, d.qpos, d.qvel, d.act)
    assert stats.status != "ok"
    assert planner.policy is before


def test_failed_rollouts_discard_the_iteration(a1_task):
    task, model = a1_task
    planner, d = a1_planner(task, model, max_speed=1e-9)  # every rollout "diverges"
    before = planner.policy
    stats = planner.iterate(0.0, d.qpos, d.qvel, d.act)
    assert stats.status == "nominal rollouts failed"
    assert planner.policy is before


@pytest.mark.parametrize("n", [1, 2, 3, 6])
def test_the_nominal_candidates_always_include_full_feedback(a1_task, n):
    """The previous policy rolled out without its feedback drifts off a plan held by four
    stance contacts; every candidate count must try full feedback (two once meant 0 and
    10⁻³: a Go1 standing on its fake motors shook its joints up to 38 rad/s)."""
    task, model = a1_task
    planner, _ = a1_planner(task, model, warmstart_candidates=n)
    assert len(planner._fb_scales) == n and planner._fb_scales[-1] == 1.0
    assert n == 1 or planner._fb_scales[0] == 0.0


@pytest.mark.parametrize("skip,expected", [(1, list(range(6))), (3, [0, 3, 4, 5]),
                                           (4, [0, 4, 5])])
def test_derivative_knots(skip, expected):
    assert derivative_knots(6, skip) == expected


def test_regularization_schedule_accelerates_and_is_clamped():
    reg = Regularization(1.0, 1e-6, 1e6, 2.0)
    reg.increase()
    reg.increase()
    assert reg.mu == pytest.approx(1.0 * 2 * 4)
    for _ in range(50):
        reg.increase()
    assert reg.mu == 1e6
    for _ in range(200):
        reg.decrease()
    assert reg.mu == 1e-6


def test_a_single_nominal_is_linearized_while_it_rolls_out(a1_task):
    """With one warm-start candidate the provider streams the nominal's knots: after the
    iteration the Jacobians are those of the finished nominal (horizon, then interpolation)."""
    task, model = a1_task
    provider = derivatives.make_provider("analytic", model, threads=2)
    planner, d = a1_planner(task, model, provider, warmstart_candidates=1, derivative_skip=3,
                            threads=2)
    for _ in range(3):
        assert planner.iterate(0.0, d.qpos, d.qvel, d.act).status == "ok"
    reference = Linearization.allocate(model, planner.T)
    derivatives.make_provider("analytic", model, threads=1).horizon(planner.nominal,
                                                                     planner.knots, reference)
    reference.interpolate(planner.knots)
    for name in ("A", "B", "C", "D"):
        np.testing.assert_array_equal(getattr(planner.linearization, name),
                                      getattr(reference, name))
    planner.close()


def test_a_failed_streamed_nominal_discards_the_iteration(a1_task):
    task, model = a1_task
    provider = derivatives.make_provider("analytic", model, threads=2)
    planner, d = a1_planner(task, model, provider, warmstart_candidates=1, max_speed=1e-9)
    before = planner.policy
    stats = planner.iterate(0.0, d.qpos, d.qvel, d.act)
    assert stats.status == "nominal rollouts failed"
    assert planner.policy is before
    planner.close()


def test_a_nominal_rollout_that_raises_releases_the_derivative_threads(a1_task, monkeypatch):
    """The provider's threads wait for the nominal's knots; if the rollout never starts they
    must be told, or they would wait (and hold the provider's executor) forever."""
    task, model = a1_task
    provider = derivatives.make_provider("analytic", model, threads=2)
    planner, d = a1_planner(task, model, provider, warmstart_candidates=1)

    def broken(*args, **kwargs):
        raise RuntimeError("rollout failed to start")

    monkeypatch.setattr(planner.pool, "run", broken)
    with pytest.raises(RuntimeError, match="failed to start"):
        planner.iterate(0.0, d.qpos, d.qvel, d.act)
    monkeypatch.undo()
    # the next iteration needs the provider's helper thread: with it still waiting, it hangs
    result = []
    worker = threading.Thread(target=lambda: result.append(
        planner.iterate(0.0, d.qpos, d.qvel, d.act).status), daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert result == ["ok"], "the planner hung on derivative threads still waiting for knots"
    planner.close()
