"""The analytic provider as the planner uses it: registry, data untouched, horizon form equal to
knot-by-knot linearization over any number of threads, and a planner iteration that evaluates
no finite difference at all."""

from __future__ import annotations

import analytic_verify as verify
import mujoco
import numpy as np
import pytest

import derivatives
from common.handover import new_progress
from common.trajectory import ModelLayout
from derivatives.analytic import AnalyticProvider
from derivatives.provider_base import Linearization
from mpc.app.assembly import home_ctrl
from mpc.planner.ilqr import ILQR, ILQRSettings
from mpc.planner.policy import Policy
from mpc.planner.rollout import RolloutPool


def test_registry_builds_the_analytic_backend(a1_task):
    _, model = a1_task
    provider = derivatives.make_provider("analytic", model, threads=1)
    assert isinstance(provider, AnalyticProvider) and provider.name == "analytic"
    assert "analytic" in derivatives.BACKENDS


def test_transition_leaves_data_unchanged(a1_task):
    _, model = a1_task
    d = verify.reference_state(model, "sliding")
    d.time = 1.25
    size = mujoco.mj_stateSize(model, mujoco.mjtState.mjSTATE_INTEGRATION)
    before = np.zeros(size)
    mujoco.mj_getState(model, d, before, mujoco.mjtState.mjSTATE_INTEGRATION)
    warmstart, qacc = d.qacc_warmstart.copy(), d.qacc.copy()
    sensordata = d.sensordata.copy()
    provider = derivatives.make_provider("analytic", model, threads=1)
    provider.transition(d)
    after = np.zeros(size)
    mujoco.mj_getState(model, d, after, mujoco.mjtState.mjSTATE_INTEGRATION)
    np.testing.assert_array_equal(before, after)
    np.testing.assert_array_equal(warmstart, d.qacc_warmstart)
    np.testing.assert_array_equal(qacc, d.qacc)
    np.testing.assert_array_equal(sensordata, d.sensordata)


def rolled_out(task, model, horizon: int = 12):
    """A trajectory from the planner's own rollout kernel (warm starts included)."""
    layout = ModelLayout.of(model)
    pool = RolloutPool(model, horizon, 1)
    d = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, d, 0)
    d.qvel[:] = 0.3 * np.random.default_rng(0).standard_normal(model.nv)
    policy = Policy.hold(layout, 0.0, d.qpos, d.qvel, d.act, home_ctrl(model, "home"))
    batch = pool.run(0.0, d.qpos, d.qvel, d.act, model.opt.timestep, policy, [0.0], [0.0])
    pool.close()
    return batch.trajectory(0).copy()


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_horizon_equals_knot_by_knot(a1_task, threads):
    task, model = a1_task
    trajectory = rolled_out(task, model)
    knots = [0, 1, 2, 5, 8, 10, 11]
    provider = derivatives.make_provider("analytic", model, threads=threads)
    out = Linearization.allocate(model, trajectory.horizon)
    before = derivatives.fd_evaluations()
    provider.horizon(trajectory, knots, out)
    assert derivatives.fd_evaluations() == before and provider.last_simulations == 0
    reference = derivatives.make_provider("analytic", model, threads=1)
    d = mujoco.MjData(model)
    nx = 2 * model.nv
    for t in range(trajectory.horizon):
        if t not in knots:
            assert not out.A[t].any()
            continue
        d.time = trajectory.time[t]
        d.qpos[:], d.qvel[:], d.ctrl[:] = trajectory.qpos[t], trajectory.qvel[t], trajectory.ctrl[t]
        d.qacc_warmstart[:] = trajectory.warmstart[t]
        A, B = np.zeros((nx, nx)), np.zeros((nx, model.nu))
        C, D = np.zeros((model.nsensordata, nx)), np.zeros((model.nsensordata, model.nu))
        reference.linearize(d, A, B, C, D)
        np.testing.assert_array_equal(out.A[t], A)
        np.testing.assert_array_equal(out.B[t], B)
        np.testing.assert_array_equal(out.C[t], C)
        np.testing.assert_array_equal(out.D[t], D)
    provider.close()


def test_planner_derivative_path_evaluates_no_finite_difference(a1_task):
    """A few planner iterations on the A1 task with the analytic backend: zero finite
    differences (the process-wide counter does not move), and the plans improve."""
    task, model = a1_task
    provider = derivatives.make_provider("analytic", model)
    planner = ILQR(task, model, provider, ILQRSettings(threads=1), home_ctrl(model, "home"))
    d = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, d, 0)
    planner.reset(0.0, d.qpos, d.qvel, d.act)
    before = derivatives.fd_evaluations()
    costs = []
    for _ in range(4):
        stats = planner.iterate(0.0, d.qpos, d.qvel, d.act)
        assert stats.status == "ok"
        assert stats.simulations == 0
        costs.append(stats.cost)
    assert derivatives.fd_evaluations() == before
    assert np.all(np.isfinite(planner.linearization.A))
    assert costs[-1] < costs[0]
    planner.close()


@pytest.mark.parametrize("impratio", [None, 1.0])
def test_analytic_matches_forward_differences_along_a_rollout(a1_task, impratio):
    """Along a planner rollout (default solver tolerance) the closed form agrees with forward
    mjd_transitionFD to the latter's own accuracy, on the A1's own friction impedance ratio
    (100) and on the quadruped configs' planning value (1)."""
    task, model = a1_task
    if impratio is not None:
        model = task.planning_model(0.01, impratio=impratio)
        assert model.opt.impratio == impratio
    trajectory = rolled_out(task, model)
    knots = list(range(trajectory.horizon))
    analytic = Linearization.allocate(model, trajectory.horizon)
    fd = Linearization.allocate(model, trajectory.horizon)
    derivatives.make_provider("analytic", model, threads=1).horizon(trajectory, knots, analytic)
    derivatives.make_provider("fd", model).horizon(trajectory, knots, fd)
    for t in knots:
        assert verify.relative_error(analytic.B[t], fd.B[t]) < 1e-2
        assert verify.relative_error(analytic.C[t], fd.C[t]) < 1e-4


def _streamed(model, horizon, knots, threads, max_speed=1e3):
    """The planner's pipeline: the provider's threads linearize the knots while the rollout
    kernel records them. Returns (trajectory copy, linearization, provider, status)."""
    layout = ModelLayout.of(model)
    pool = RolloutPool(model, horizon, 1, max_speed=max_speed)
    d = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, d, 0)
    d.qvel[:] = 0.3 * np.random.default_rng(0).standard_normal(model.nv)
    policy = Policy.hold(layout, 0.0, d.qpos, d.qvel, d.act, home_ctrl(model, "home"))
    provider = derivatives.make_provider("analytic", model, threads=threads)
    out = Linearization.allocate(model, horizon)
    progress = new_progress()
    finish = provider.stream(pool.batch.trajectory(0), knots, out, progress)
    batch = pool.run(0.0, d.qpos, d.qvel, d.act, model.opt.timestep, policy, [0.0], [0.0],
                     progress)
    finish()
    pool.close()
    return batch.trajectory(0).copy(), out, provider, int(batch.status[0])


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_streamed_horizon_equals_the_horizon_of_the_finished_trajectory(a1_task, threads):
    _, model = a1_task
    knots = [0, 3, 6, 9, 12, 15, 18, 19]
    trajectory, streamed, provider, status = _streamed(model, 20, knots, threads)
    assert status == 0 and provider.last_simulations == 0
    reference = Linearization.allocate(model, 20)
    derivatives.make_provider("analytic", model, threads=1).horizon(trajectory, knots,
                                                                     reference)
    for name in ("A", "B", "C", "D"):
        np.testing.assert_array_equal(getattr(streamed, name), getattr(reference, name))
    assert streamed.A[knots].any(axis=(1, 2)).all()
    provider.close()


def test_a_diverging_rollout_ends_the_stream_without_finite_differences(a1_task):
    _, model = a1_task
    before = derivatives.fd_evaluations()
    _, out, provider, status = _streamed(model, 20, [0, 3, 6, 18, 19], threads=2,
                                         max_speed=1e-9)
    assert status != 0
    assert derivatives.fd_evaluations() == before and provider.last_simulations == 0
    assert not out.A[6:].any()  # nothing past the divergence passes for a linearization
    provider.close()
