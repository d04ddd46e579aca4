"""The fd provider equals mjd_transitionFD, counts its evaluations and leaves data unchanged."""

import itertools

import mujoco
import numpy as np
import pytest

import derivatives
from common.trajectory import Trajectory
from derivatives.provider_base import Linearization
from tests.conftest import trotting_data


@pytest.mark.parametrize("centered", [False, True])
def test_transition_equals_mjd_transition_fd(a1_task, rng, centered):
    _, model = a1_task
    d = trotting_data(model, rng)
    provider = derivatives.make_provider("fd", model, eps=1e-6, centered=centered)
    before = (d.qpos.copy(), d.qvel.copy(), d.ctrl.copy(), d.qacc_warmstart.copy(), d.time)
    count = derivatives.fd_evaluations()
    A, B = provider.transition(d)
    nx = 2 * model.nv + model.na
    A_ref, B_ref = np.zeros((nx, nx)), np.zeros((nx, model.nu))
    mujoco.mjd_transitionFD(model, d, 1e-6, centered, A_ref, B_ref, None, None)
    np.testing.assert_array_equal(A, A_ref)
    np.testing.assert_array_equal(B, B_ref)
    n = 2 * model.nv + model.na + model.nu
    assert derivatives.fd_evaluations() - count == 1 + (2 * n if centered else n)
    after = (d.qpos, d.qvel, d.ctrl, d.qacc_warmstart, d.time)
    for x, y in zip(before, after, strict=False):
        np.testing.assert_array_equal(x, y)


def test_horizon_over_threads_equals_knot_by_knot(a1_task, rng):
    _, model = a1_task
    T = 6
    traj = Trajectory(np.zeros(T), np.zeros((T, model.nq)), np.zeros((T, model.nv)),
                      np.zeros((T, model.na)), np.zeros((T, model.nu)),
                      np.zeros((T, model.nsensordata)), np.zeros((T, model.nv)))
    d = trotting_data(model, rng)
    for t in range(T):
        traj.time[t] = d.time
        traj.qpos[t], traj.qvel[t], traj.ctrl[t] = d.qpos, d.qvel, d.ctrl
        mujoco.mj_step(model, d)
    out = Linearization.allocate(model, T)
    provider = derivatives.make_provider("fd", model, threads=2)
    provider.horizon(traj, range(T), out)
    single = derivatives.make_provider("fd", model)
    one = mujoco.MjData(model)
    for t in range(T):
        one.time, one.qpos[:], one.qvel[:], one.ctrl[:] = (traj.time[t], traj.qpos[t],
                                                           traj.qvel[t], traj.ctrl[t])
        A, B, C, D = (np.zeros_like(out.A[t]), np.zeros_like(out.B[t]),
                      np.zeros_like(out.C[t]), np.zeros_like(out.D[t]))
        single.linearize(one, A, B, C, D)
        np.testing.assert_array_equal(out.A[t], A)
        np.testing.assert_array_equal(out.C[t], C)
        np.testing.assert_array_equal(out.D[t], D)
    provider.close()


def test_interpolation_fills_skipped_knots_linearly(a1_task):
    _, model = a1_task
    lin = Linearization.allocate(model, 5)
    lin.A[0], lin.A[4] = 1.0, 3.0
    lin.interpolate([0, 4])
    np.testing.assert_allclose(lin.A[:, 0, 0], [1.0, 1.5, 2.0, 2.5, 3.0])


def test_unknown_backend_names_the_choices(a1_task):
    _, model = a1_task
    with pytest.raises(ValueError, match=r"available: .*fd"):
        derivatives.make_provider("magic", model)


@pytest.mark.parametrize("bad", [dict(eps=0.0), dict(threads=0)])
def test_bad_options_are_rejected(a1_task, bad):
    _, model = a1_task
    with pytest.raises(ValueError):
        derivatives.make_provider("fd", model, **bad)


def test_interpolation_matches_numpy_between_uneven_knots(a1_task, rng):
    _, model = a1_task
    lin = Linearization.allocate(model, 12)
    knots = [0, 3, 4, 9, 10, 11]
    arrays = (lin.A, lin.B, lin.C, lin.D)
    for a in arrays:
        a[knots] = rng.normal(size=(len(knots), *a.shape[1:]))
    expected = [a.copy() for a in arrays]
    for lo, hi in itertools.pairwise(knots):
        for t in range(lo + 1, hi):
            w = (t - lo) / (hi - lo)
            for e in expected:
                e[t] = (1 - w) * e[lo] + w * e[hi]
    lin.interpolate(knots)
    for a, e in zip(arrays, expected, strict=True):
        np.testing.assert_allclose(a, e, rtol=1e-14, atol=1e-14)
