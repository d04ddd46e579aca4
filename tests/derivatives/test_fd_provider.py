"""The fd provider: mjd_transitionFD with position columns on the nominal's side of a contact
switch; it counts its evaluations and leaves data unchanged."""

import itertools

import mujoco
import numpy as np
import pytest

import derivatives
from common.trajectory import Trajectory
from derivatives.provider_base import Linearization
from tests.conftest import trotting_data


def mjd_transition(model, d, eps, centered):
    nx = 2 * model.nv + model.na
    A, B = np.zeros((nx, nx)), np.zeros((nx, model.nu))
    C, D = np.zeros((model.nsensordata, nx)), np.zeros((model.nsensordata, model.nu))
    mujoco.mjd_transitionFD(model, d, eps, centered, A, B, C, D)
    return A, B, C, D


@pytest.mark.parametrize("centered", [False, True])
def test_transition_is_mjd_transition_fd_with_one_sided_position_columns(a1_task, rng,
                                                                         centered):
    """Velocity, activation and control columns are mjd_transitionFD's (forward or centered);
    each position column is its one-sided difference of +ε or −ε with the smaller largest
    entry in A, C's column from the same side; data is left as it was."""
    _, model = a1_task
    d = trotting_data(model, rng)
    provider = derivatives.make_provider("fd", model, eps=1e-6, centered=centered)
    before = (d.qpos.copy(), d.qvel.copy(), d.ctrl.copy(), d.qacc_warmstart.copy(), d.time)
    count = derivatives.fd_evaluations()
    nx = 2 * model.nv + model.na
    A, B = np.zeros((nx, nx)), np.zeros((nx, model.nu))
    C, D = np.zeros((model.nsensordata, nx)), np.zeros((model.nsensordata, model.nu))
    provider.linearize(d, A, B, C, D)
    A_ref, B_ref, C_ref, D_ref = mjd_transition(model, d, 1e-6, centered)
    fwd = mjd_transition(model, d, 1e-6, False)
    back = mjd_transition(model, d, -1e-6, False)
    nv = model.nv
    np.testing.assert_array_equal(A[:, nv:], A_ref[:, nv:])
    np.testing.assert_array_equal(C[:, nv:], C_ref[:, nv:])
    np.testing.assert_array_equal(B, B_ref)
    np.testing.assert_array_equal(D, D_ref)
    for j in range(nv):
        side = fwd if np.abs(fwd[0][:, j]).max() <= np.abs(back[0][:, j]).max() else back
        np.testing.assert_allclose(A[:, j], side[0][:, j], rtol=0, atol=1e-9)
        np.testing.assert_allclose(C[:, j], side[2][:, j], rtol=0, atol=1e-9)
    n = 2 * model.nv + model.na + model.nu
    other_side = 1 + 2 * model.nv + model.na
    assert provider.simulations_per_knot == 1 + (2 * n if centered else n) + other_side
    assert derivatives.fd_evaluations() - count == provider.simulations_per_knot
    after = (d.qpos, d.qvel, d.ctrl, d.qacc_warmstart, d.time)
    for x, y in zip(before, after, strict=False):
        np.testing.assert_array_equal(x, y)


BALL = """
<mujoco>
  <option timestep="0.01"/>
  <worldbody>
    <geom type="plane" size="1 1 .1"/>
    <body pos="0 0 .1">
      <freejoint/>
      <geom type="sphere" size=".1" mass="1"/>
    </body>
  </worldbody>
  <sensor><framepos objtype="body" objname="world"/><subtreelinvel body="world"/></sensor>
</mujoco>"""


@pytest.mark.parametrize("centered", [False, True])
@pytest.mark.parametrize("gap", [-0.5e-6, 0.5e-6])
def test_a_perturbation_across_a_contact_switch_does_not_enter_the_jacobian(centered, gap):
    """A ball coming down at 0.3 m/s, its distance to the floor ``gap``: 0.5 µm in contact or
    0.5 µm above. Raising it by ε = 1 µm ends the contact, lowering it starts one: that side's
    difference is a secant across the jump of the contact force (~10⁵ where ∂v_z/∂z is −23 in
    contact and 0 in flight). The provider's A and C are the derivatives of the nominal's side,
    which the analytic backend (an independent oracle: the closed form at the contact set the
    state has) gives."""
    model = mujoco.MjModel.from_xml_string(BALL)
    d = mujoco.MjData(model)
    d.qpos[2] = 0.1 + gap
    d.qvel[2] = -0.3
    mujoco.mj_forward(model, d)
    assert d.ncon == (1 if gap < 0 else 0)
    fd = derivatives.make_provider("fd", model, eps=1e-6, centered=centered)
    nx = 2 * model.nv
    A, B = np.zeros((nx, nx)), np.zeros((nx, model.nu))
    C, D = np.zeros((model.nsensordata, nx)), np.zeros((model.nsensordata, model.nu))
    fd.linearize(d, A, B, C, D)
    exact = [np.zeros_like(x) for x in (A, B, C, D)]
    derivatives.make_provider("analytic", model, threads=1).linearize(d, *exact)
    vz, z = model.nv + 2, 2
    crossing = mjd_transition(model, d, 1e-6 if gap < 0 else -1e-6, False)[0]
    assert abs(crossing[vz, z]) > 1e5  # the side across the switch
    assert exact[0][vz, z] == (pytest.approx(-22.5, rel=0.01) if gap < 0 else 0.0)
    # within 1 % of the largest entry (fd against the closed form: 0.2 % at [v_z, z])
    np.testing.assert_allclose(A, exact[0], rtol=0, atol=0.01 * np.abs(exact[0]).max())
    np.testing.assert_allclose(C, exact[2], rtol=0, atol=0.01 * np.abs(exact[2]).max())


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
