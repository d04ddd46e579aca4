"""Policy evaluation: time interpolation, tangent-space feedback, clamping."""

import mujoco
import numpy as np

from common.trajectory import ModelLayout
from mpc.planner.kernels.policy import find_segment
from mpc.planner.policy import Policy


def test_find_segment_interior_and_ends():
    times = np.array([0.0, 0.1, 0.2, 0.3])
    assert find_segment(times, -1.0) == (0, 0.0)
    assert find_segment(times, 5.0) == (2, 1.0)
    i, w = find_segment(times, 0.25)
    assert i == 2 and abs(w - 0.5) < 1e-12
    i, w = find_segment(times, 0.1)
    assert i == 1 and abs(w) < 1e-12


def make_policy(model, rng, n=4):
    lay = ModelLayout.of(model)
    d = mujoco.MjData(model)
    qpos = np.zeros((n, model.nq))
    for k in range(n):
        mujoco.mj_integratePos(model, d.qpos, 0.1 * rng.standard_normal(model.nv), 1.0)
        qpos[k] = d.qpos
    return lay, Policy.build(
        lay, np.arange(n) * 0.1, qpos, rng.standard_normal((n, model.nv)),
        np.zeros((n, 0)), 0.5 * rng.uniform(-1, 1, (n, model.nu)),
        gains=rng.standard_normal((n, model.nu, lay.nx)))


def test_action_at_a_knot_is_nominal_plus_gain_times_tangent_error(floating_model, rng):
    lay, pol = make_policy(floating_model, rng)
    k = 2
    q = pol.qpos[k].copy()
    mujoco.mj_integratePos(floating_model, q, 0.05 * rng.standard_normal(floating_model.nv), 1.0)
    v = pol.qvel[k] + 0.1
    dq = np.zeros(floating_model.nv)
    mujoco.mj_differentiatePos(floating_model, dq, 1.0, pol.qpos[k], q)
    dx = np.concatenate([dq, v - pol.qvel[k]])
    expected = np.clip(pol.ctrl[k] + pol.gains[k] @ dx, lay.ctrl_lo, lay.ctrl_hi)
    u, finite = pol.action(pol.times[k], q, v, np.zeros(0))
    assert finite
    np.testing.assert_allclose(u, expected, atol=1e-12)


def test_action_between_knots_interpolates_linearly_at_the_nominal(floating_model, rng):
    lay, pol = make_policy(floating_model, rng)
    t = 0.5 * (pol.times[1] + pol.times[2])
    q = np.zeros(floating_model.nq)
    from mpc.planner.kernels.tangent import interpolate_pos

    interpolate_pos(lay.jnt_type, lay.jnt_qposadr, pol.qpos[1], pol.qpos[2], 0.5, q)
    v = 0.5 * (pol.qvel[1] + pol.qvel[2])
    u, _ = pol.action(t, q, v, np.zeros(0))
    expected = np.clip(0.5 * (pol.ctrl[1] + pol.ctrl[2]), lay.ctrl_lo, lay.ctrl_hi)
    np.testing.assert_allclose(u, expected, atol=1e-12)


def test_action_is_clamped_to_ctrlrange(floating_model, rng):
    lay, pol = make_policy(floating_model, rng)
    u, finite = pol.action(0.0, pol.qpos[0], pol.qvel[0] + 1e3, np.zeros(0))
    assert finite
    assert np.all(u >= lay.ctrl_lo) and np.all(u <= lay.ctrl_hi)


def test_non_finite_state_is_reported(floating_model, rng):
    _, pol = make_policy(floating_model, rng)
    v = pol.qvel[0].copy()
    v[0] = np.nan
    _, finite = pol.action(0.0, pol.qpos[0], v, np.zeros(0))
    assert not finite


def test_published_policy_is_immutable(floating_model, rng):
    _, pol = make_policy(floating_model, rng)
    try:
        pol.ctrl[0, 0] = 1.0
    except ValueError:
        return
    raise AssertionError("policy arrays must be read-only")
