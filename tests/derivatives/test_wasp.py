"""The wasp provider: finite differences where it must be, fewer simulations where the states vary
slowly, bounded always; caches that move with the horizon."""

import copy

import mujoco
import numpy as np
import pytest

import derivatives
from common.trajectory import Trajectory
from derivatives.provider_base import Linearization, load_knot
from derivatives.wasp.update import agrees, replace_column
from tests.conftest import floating_box_model, trotting_data

EPS = 1e-6


def fd_jacobians(model, data):
    """Forward-difference A, B, C, D of mjd_transitionFD."""
    nx, ns = 2 * model.nv + model.na, model.nsensordata
    A, B = np.zeros((nx, nx)), np.zeros((nx, model.nu))
    C, D = np.zeros((ns, nx)), np.zeros((ns, model.nu))
    mujoco.mjd_transitionFD(model, data, EPS, False, A, B, C, D)
    return A, B, C, D


def wasp_jacobians(provider, data):
    """A, B, C, D of one linearize call and the simulations it counted."""
    m = provider.model
    nx, ns = 2 * m.nv + m.na, m.nsensordata
    out = np.zeros((nx, nx)), np.zeros((nx, m.nu)), np.zeros((ns, nx)), np.zeros((ns, m.nu))
    before = derivatives.fd_evaluations()
    provider.linearize(data, *out)
    return out, derivatives.fd_evaluations() - before


def full_sweep(model):
    return 1 + 2 * model.nv + model.na + model.nu


def rollout(model, data, T):
    """T knots of the model's own dynamics from ``data`` (controls held)."""
    traj = Trajectory(np.zeros(T), np.zeros((T, model.nq)), np.zeros((T, model.nv)),
                      np.zeros((T, model.na)), np.zeros((T, model.nu)),
                      np.zeros((T, model.nsensordata)), np.zeros((T, model.nv)))
    d = mujoco.MjData(model)
    mujoco.mj_copyData(d, model, data)
    for t in range(T):
        traj.time[t] = d.time
        traj.qpos[t], traj.qvel[t], traj.ctrl[t] = d.qpos, d.qvel, d.ctrl
        traj.warmstart[t] = d.qacc_warmstart
        mujoco.mj_step(model, d)
        traj.sensordata[t] = d.sensordata
    return traj


def relative_error(A, B, A_ref, B_ref):
    """‖[A B] − [A_ref B_ref]‖_F / ‖[A_ref B_ref]‖_F."""
    ref = np.hstack([A_ref, B_ref])
    return np.linalg.norm(np.hstack([A, B]) - ref) / np.linalg.norm(ref)


# --- exactness -------------------------------------------------------------------------------
def test_full_fraction_with_coordinate_directions_is_transition_fd_bit_for_bit(a1_task, rng):
    _, model = a1_task
    d = trotting_data(model, rng)
    reference = fd_jacobians(model, d)
    provider = derivatives.make_provider("wasp", model, basis="axes", frac_x=1.0, frac_u=1.0,
                                         tol_x=0.0, tol_u=0.0, threads=1)
    for _ in range(2):  # frac = 1: the second call at the same state sweeps again
        out, sims = wasp_jacobians(provider, d)
        for got, want in zip(out, reference, strict=True):
            np.testing.assert_array_equal(got, want)
        assert sims == full_sweep(model) == 49


def test_full_fraction_with_random_directions_is_forward_fd_in_those_directions(a1_task, rng):
    _, model = a1_task
    d = trotting_data(model, rng)
    A_ref, B_ref, C_ref, D_ref = fd_jacobians(model, d)
    provider = derivatives.make_provider("wasp", model, frac_x=1.0, frac_u=1.0, tol_x=0.0,
                                         tol_u=0.0, threads=1)
    (A, B, C, D), sims = wasp_jacobians(provider, d)
    assert sims == full_sweep(model)
    # Same step, other directions: the difference is forward differencing's own error
    # (O(ε) curvature and the solver's 1e-8 tolerance over ε), far below a percent.
    for got, want in ((A, A_ref), (B, B_ref), (C, C_ref), (D, D_ref)):
        assert np.abs(got - want).max() <= 1e-3 * np.abs(want).max()
    # and nothing is approximated: the estimate is exactly the measured JVPs rotated back
    cache = provider.single
    np.testing.assert_allclose(cache.D[0], cache.F[0] @ provider.directions, rtol=0,
                               atol=1e-12 * np.abs(cache.F[0]).max())


def test_cold_start_is_a_full_forward_difference_sweep(a1_task, rng):
    _, model = a1_task
    d = trotting_data(model, rng)
    axes = derivatives.make_provider("wasp", model, basis="axes", threads=1)  # default fracs
    out, sims = wasp_jacobians(axes, d)
    assert sims == full_sweep(model)
    for got, want in zip(out, fd_jacobians(model, d), strict=True):
        np.testing.assert_array_equal(got, want)
    default = derivatives.make_provider("wasp", model, threads=1)
    full = derivatives.make_provider("wasp", model, frac_x=1.0, frac_u=1.0, threads=1)
    out, sims = wasp_jacobians(default, d)
    out_full, _ = wasp_jacobians(full, d)
    assert sims == full_sweep(model)
    for got, want in zip(out, out_full, strict=True):
        np.testing.assert_array_equal(got, want)


def test_control_at_its_limit_is_differenced_inside_the_range():
    model = floating_box_model()
    d = mujoco.MjData(model)
    mujoco.mj_forward(model, d)
    d.qvel[:] = np.linspace(-1.0, 1.0, model.nv)
    d.ctrl[:] = [0.3, model.actuator_ctrlrange[1, 1]]  # the motor at its upper limit
    _, B_ref, _, _ = fd_jacobians(model, d)  # mjd_transitionFD: backward difference there
    assert np.abs(B_ref[:, 1]).max() > 0
    for basis in ("axes", "random"):
        provider = derivatives.make_provider("wasp", model, basis=basis, frac_x=1.0,
                                             frac_u=1.0, threads=1)
        (_, B, _, _), sims = wasp_jacobians(provider, d)
        assert sims == full_sweep(model) + 1  # the base point moved ε inside: one more step
        np.testing.assert_allclose(B, B_ref, rtol=0, atol=1e-7 * np.abs(B_ref).max())


# --- the WASP update ---------------------------------------------------------------------------
def test_rank_one_update_keeps_the_estimate_equal_to_f_q_transpose(rng):
    m, lo, hi, N = 7, 2, 8, 9  # one block [2, 8) inside 9 packed columns
    directions = np.zeros((N, N))
    q, _ = np.linalg.qr(rng.standard_normal((hi - lo, hi - lo)))
    directions[lo:hi, lo:hi] = q.T  # row c = q_c
    F = np.zeros((m, N))
    D = np.zeros((m, N))
    for _ in range(2000):
        col = int(rng.integers(lo, hi))
        f = rng.standard_normal(m) * 10.0 ** rng.integers(-3, 4)
        replace_column(F, D, directions, col, lo, hi, f)
        np.testing.assert_array_equal(F[:, col], f)
    np.testing.assert_allclose(D, F @ directions, rtol=0, atol=1e-12 * np.abs(F).max())
    assert np.all(D[:, :lo] == 0) and np.all(D[:, hi:] == 0)


def test_estimate_stays_f_q_transpose_along_a_run_of_calls(a1_task, rng):
    _, model = a1_task
    d = trotting_data(model, rng)
    provider = derivatives.make_provider("wasp", model, threads=1)
    for _ in range(15):
        provider.transition(d)
        mujoco.mj_step(model, d)
    cache = provider.single
    np.testing.assert_allclose(cache.D[0], cache.F[0] @ provider.directions, rtol=0,
                               atol=1e-12 * np.abs(cache.F[0]).max())


@pytest.mark.parametrize(("a", "b", "tol", "expected"), [
    ([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], 0.0, True),
    ([1.0, 0.0], [0.9, 0.3], 0.1, True),           # 18 deg, 5 % longer
    ([1.0, 0.0], [0.0, 1.0], 0.5, False),          # orthogonal
    ([1.0, 0.0], [-1.0, 0.0], 0.5, False),         # opposite
    ([1.0, 0.0], [0.4, 0.0], 0.5, False),          # 60 % shorter
    ([1.0, 0.0], [0.6, 0.0], 0.5, True),           # 40 % shorter
    ([0.0, 0.0], [0.0, 0.0], 0.0, True),           # predicted zero, measured zero
    ([0.0, 0.0], [1e-3, 0.0], 0.5, False),         # predicted zero, measured something
    ([1e-3, 0.0], [0.0, 0.0], 0.5, False),
])
def test_agreement_test(a, b, tol, expected):
    assert agrees(np.array(a), np.array(b), tol) is expected


# --- what it saves, and what it costs in accuracy ---------------------------------------------
def test_slowly_varying_states_take_fewer_simulations_than_fd_within_stated_error(a1_task, rng):
    """A1 in the air (no contacts) with friction loss removed, so the dynamics are smooth,
    drifting in position, velocity and control: after the cold call every call stops at the
    first test (1 + Σ p_min = 18 simulations instead of 49) and [A B] stays within 0.2 % of
    forward FD (measured ≤ 0.06 %; the drift changes [A B] by ~0.05 % per call)."""
    _, planning = a1_task
    model = copy.copy(planning)
    model.dof_frictionloss[:] = 0.0
    d = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, d, 0)
    d.qpos[2] += 1.0
    q0, u0 = d.qpos.copy(), d.ctrl.copy()
    v0 = np.concatenate([np.zeros(6), np.where(np.arange(model.nu) % 2, 1.0, -1.0)])
    dq, dv, du = (x / np.linalg.norm(x) for x in (rng.standard_normal(model.nv),
                                                  rng.standard_normal(model.nv),
                                                  rng.standard_normal(model.nu)))
    provider = derivatives.make_provider("wasp", model, threads=1)
    warm = 1 + int(provider.p_min.sum())
    assert warm == 18
    errors, simulations = [], []
    for k in range(30):
        s = k / 30
        d.qpos[:] = q0
        mujoco.mj_integratePos(model, d.qpos, dq, 0.2 * s)
        d.qvel[:] = v0 + 4.0 * s * dv
        d.ctrl[:] = u0 + 0.3 * s * du
        (A, B, _, _), sims = wasp_jacobians(provider, d)
        A_ref, B_ref, _, _ = fd_jacobians(model, d)
        mujoco.mj_forward(model, d)
        assert d.ncon == 0
        errors.append(relative_error(A, B, A_ref, B_ref))
        simulations.append(sims)
    assert simulations[0] == full_sweep(model)
    assert simulations[1:] == [warm] * 29
    assert max(errors) < 2e-3


def test_zero_jvp_neither_loops_forever_nor_forces_a_sweep_every_call():
    """Actuators with zero gain: every ctrl JVP is exactly zero. The cold call sweeps the
    block once; later calls accept "predicted zero, measured zero" after p_min JVPs."""
    model = mujoco.MjModel.from_xml_string("""
<mujoco>
  <worldbody>
    <body pos="0 0 1">
      <freejoint/>
      <geom type="box" size=".1 .1 .1" mass="1"/>
      <body pos=".2 0 0">
        <joint name="hinge" axis="0 1 0"/>
        <geom type="capsule" size=".02" fromto="0 0 0 .2 0 0" mass=".2"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <general name="off" joint="hinge" gainprm="0" ctrlrange="-1 1"/>
    <general joint="hinge" gainprm="0" ctrlrange="-1 1"/>
    <general joint="hinge" gainprm="0" ctrlrange="-1 1"/>
    <general joint="hinge" gainprm="0" ctrlrange="-1 1"/>
  </actuator>
  <sensor><actuatorfrc actuator="off"/><jointpos joint="hinge"/></sensor>
</mujoco>""")
    d = mujoco.MjData(model)
    d.qvel[:] = np.linspace(-1.0, 1.0, model.nv)
    d.ctrl[:] = 0.2
    for tol in (0.5, 0.0):
        provider = derivatives.make_provider("wasp", model, frac_x=1.0, frac_u=0.25,
                                             tol_u=tol, threads=1)
        (_, B, _, D), sims = wasp_jacobians(provider, d)
        assert sims == full_sweep(model)
        assert np.all(B == 0) and np.all(D == 0)
        for _ in range(3):
            (_, B, _, D), sims = wasp_jacobians(provider, d)
            # state blocks: all 2 nv (frac_x = 1); ctrl: p_min = 1 of 4
            assert sims == 1 + 2 * model.nv + 1
            assert np.all(B == 0) and np.all(D == 0)


def test_state_and_sensor_parts_of_a_jvp_are_tested_apart():
    """Heavy body on slide joints with actuator-force sensors: a ctrl JVP is ~1e-5 next state
    and ~1 sensor. Pressing the y and z joints into their limits takes B's y and z columns
    nearly to zero while the sensors stay as they were; tested as one vector the sensors would
    hide that (the JVP's angle and norm move by less than 1e-5), tested apart the change is
    seen: the ctrl JVPs along y and z both fail the test, and the round robin goes on to x,
    which agrees. Every column is fresh or unchanged, so B is exact."""
    model = mujoco.MjModel.from_xml_string("""
<mujoco>
  <option gravity="0 0 0"/>
  <worldbody>
    <body>
      <joint name="x" type="slide" axis="1 0 0" range="-.1 .1"/>
      <joint name="y" type="slide" axis="0 1 0" range="-.1 .1"/>
      <joint name="z" type="slide" axis="0 0 1" range="-.1 .1"/>
      <geom type="sphere" size=".1" mass="100"/>
    </body>
  </worldbody>
  <actuator>
    <motor name="x" joint="x" ctrlrange="-1 1"/>
    <motor name="y" joint="y" ctrlrange="-1 1"/>
    <motor name="z" joint="z" ctrlrange="-1 1"/>
  </actuator>
  <sensor>
    <actuatorfrc actuator="x"/><actuatorfrc actuator="y"/><actuatorfrc actuator="z"/>
  </sensor>
</mujoco>""")
    d = mujoco.MjData(model)
    d.ctrl[:] = [0.5, 0.2, -0.3]
    provider = derivatives.make_provider("wasp", model, frac_x=1.0, frac_u=1 / 3, tol_u=0.05,
                                         threads=1)
    state_blocks = 2 * model.nv  # frac_x = 1: always all of them
    _, sims = wasp_jacobians(provider, d)
    assert sims == full_sweep(model)
    _, sims = wasp_jacobians(provider, d)
    assert sims == 1 + state_blocks + 1  # same state: the first ctrl test (x) passes
    d.qpos[1:] = 0.105  # y and z into their limits
    (_, B, _, _), sims = wasp_jacobians(provider, d)
    _, B_ref, _, D_ref = fd_jacobians(model, d)
    nv = model.nv
    for j in (1, 2):  # the limits took the y, z forces
        assert B_ref[nv + j, j] < 0.1 * B_ref[nv, 0]
    np.testing.assert_allclose(D_ref, np.eye(3), atol=1e-6)  # the sensors did not notice
    assert sims == 1 + state_blocks + 3
    np.testing.assert_allclose(B, B_ref, rtol=0, atol=1e-3 * np.abs(B_ref).max())


SLIDES = """
<mujoco>
  <option gravity="0 0 0"/>
  <worldbody>
    <body>
      <joint name="x" type="slide" axis="1 0 0" limited="true" range="-.1 .1"/>
      <joint name="y" type="slide" axis="0 1 0"/>
      <joint name="z" type="slide" axis="0 0 1"/>
      <geom type="sphere" size=".1" mass="2"/>
    </body>
  </worldbody>
  <actuator>
    <motor joint="x" ctrlrange="-1 1"/><motor joint="y" ctrlrange="-1 1"/>
    <motor joint="z" ctrlrange="-1 1"/>
  </actuator>
  <sensor><jointpos joint="x"/><jointpos joint="y"/><jointvel joint="z"/></sensor>
</mujoco>"""


def test_a_change_in_one_input_s_column_stays_in_that_column():
    """Three decoupled slide joints; pressing x into its limit changes only the x columns of
    [A B] (and C, D). With the default directions the estimate's error stays there: every
    other column is exact while the x columns are stale. (Random dense directions would
    spread the stale x part over every column: in a legged robot, the change a touchdown makes
    to the stance legs' and the base's columns would leak into the swing legs'.)"""
    model = mujoco.MjModel.from_xml_string(SLIDES)
    d = mujoco.MjData(model)
    d.qvel[:] = [0.1, -0.2, 0.3]
    d.ctrl[:] = [0.5, 0.2, -0.3]
    # one JVP per block and call (p_min = 1, a test that always passes): columns go stale
    provider = derivatives.make_provider("wasp", model, frac_x=1 / 3, frac_u=1 / 3,
                                         tol_x=10.0, tol_u=10.0, threads=1)
    wasp_jacobians(provider, d)  # cold: full sweep
    wasp_jacobians(provider, d)  # warm, same state: the round robin moves on
    before = fd_jacobians(model, d)
    d.qpos[0] = 0.105  # x into its limit
    out, _ = wasp_jacobians(provider, d)
    after = fd_jacobians(model, d)
    nv = model.nv
    x_inputs = [0, nv]  # qpos x, qvel x (and ctrl x in B, D)
    for got, old, new in zip(out, before, after, strict=True):
        if not new.size:
            continue
        x_cols = x_inputs if new.shape[1] == 2 * nv else [0]
        others = [c for c in range(new.shape[1]) if c not in x_cols]
        changed = np.abs(new - old).max(axis=0)
        assert changed[others].max() <= 1e-7 * np.abs(new).max()  # only x columns changed
        np.testing.assert_allclose(got[:, others], new[:, others], rtol=0,
                                   atol=1e-6 * np.abs(new).max())
    A, A_new = out[0], after[0]
    assert np.abs(A[:, 0] - A_new[:, 0]).max() > 0.1 * np.abs(A_new).max()  # x stayed stale


# --- the horizon: shift, reset, threads, each knot once --------------------------------------
def test_shift_moves_caches_with_the_knots_and_reset_forgets(a1_task, rng):
    _, model = a1_task
    T, k = 8, 3
    traj = rollout(model, trotting_data(model, rng), T + k)
    first = Trajectory(*(getattr(traj, f)[:T].copy() for f in
                         ("time", "qpos", "qvel", "act", "ctrl", "sensordata", "warmstart")))
    later = Trajectory(*(getattr(traj, f)[k:].copy() for f in
                         ("time", "qpos", "qvel", "act", "ctrl", "sensordata", "warmstart")))
    provider = derivatives.make_provider("wasp", model, threads=1, full_first=0)
    out = Linearization.allocate(model, T)
    provider.horizon(first, range(T), out)
    assert provider.last_simulations == T * full_sweep(model)
    cache = provider.cache
    before = [a.copy() for a in (cache.F, cache.D, cache.filled, cache.pointer)]

    provider.shift(k)
    for now, then in zip((cache.F, cache.D, cache.filled, cache.pointer), before, strict=True):
        np.testing.assert_array_equal(now[: T - k], then[k:])
        for t in range(T - k, T):  # the knots that entered start from the last one kept
            np.testing.assert_array_equal(now[t], then[T - 1])
    # The knots that moved down see the states they were computed at: they stop at p_min.
    # The k new knots are warm (their neighbour's JVPs): no full sweep among them.
    warm = 1 + int(provider.p_min.sum())
    sims = np.zeros(T, dtype=np.int64)
    provider._run(0, np.arange(T), later, cache, out, sims)
    assert np.all(sims[: T - k] == warm)
    assert np.all(sims[T - k :] < full_sweep(model))

    provider.reset()
    assert not cache.filled.any() and not cache.D.any()
    provider.horizon(later, range(T), out)
    fresh = derivatives.make_provider("wasp", model, threads=1)
    expected = Linearization.allocate(model, T)
    fresh.horizon(later, range(T), expected)
    assert provider.last_simulations == T * full_sweep(model)
    for name in ("A", "B", "C", "D"):
        np.testing.assert_array_equal(getattr(out, name), getattr(expected, name))


def test_the_first_knots_are_differenced_in_full_in_every_call(a1_task, rng):
    """The first knots set the feedback gains the robot follows until the next plan: knots
    t < full_first are forward differences in full (``mjd_transitionFD``'s, to rounding) in
    every call, warm or not, while the later knots reuse their caches."""
    _, model = a1_task
    T, full = 6, 2
    data = trotting_data(model, rng)
    first = rollout(model, data, T)
    data.qvel[:] += 0.05 * rng.standard_normal(model.nv)
    second = rollout(model, data, T)
    provider = derivatives.make_provider("wasp", model, threads=1, full_first=full)
    out = Linearization.allocate(model, T)
    provider.horizon(first, range(T), out)
    provider.horizon(second, range(T), out)  # warm: knots full.. stop early
    assert np.all(provider._simulations[:full] == full_sweep(model))
    assert np.all(provider._simulations[full:T] < full_sweep(model))
    d = mujoco.MjData(model)
    for t in range(full):
        load_knot(d, second, t)
        for got, want in zip((out.A[t], out.B[t], out.C[t], out.D[t]),
                             fd_jacobians(model, d), strict=True):
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * np.abs(want).max())


def test_cache_grows_to_the_longest_horizon_and_keeps_what_it_has(a1_task, rng):
    _, model = a1_task
    traj = rollout(model, trotting_data(model, rng), 6)
    provider = derivatives.make_provider("wasp", model, threads=1, full_first=0)
    short = Trajectory(*(getattr(traj, f)[:4].copy() for f in
                         ("time", "qpos", "qvel", "act", "ctrl", "sensordata", "warmstart")))
    provider.horizon(short, range(4), Linearization.allocate(model, 4))
    assert provider.cache.capacity == 4
    provider.horizon(traj, range(6), Linearization.allocate(model, 6))
    assert provider.cache.capacity == 6
    warm = 1 + int(provider.p_min.sum())
    assert provider.last_simulations == 4 * warm + 2 * full_sweep(model)


def test_threads_give_the_result_of_one_thread(a1_task, rng):
    _, model = a1_task
    T = 7
    data = trotting_data(model, rng)
    trajectories = [rollout(model, data, T)]
    data.qvel[:] += 0.05 * rng.standard_normal(model.nv)
    trajectories.append(rollout(model, data, T))
    one = derivatives.make_provider("wasp", model, threads=1)
    two = derivatives.make_provider("wasp", model, threads=2)
    for traj in trajectories:  # a cold call, then a warm one at other states
        a, b = Linearization.allocate(model, T), Linearization.allocate(model, T)
        one.horizon(traj, range(T), a)
        two.horizon(traj, range(T), b)
        assert one.last_simulations == two.last_simulations
        for name in ("A", "B", "C", "D"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    two.close()


def test_each_knot_is_evaluated_once_per_call(a1_task, rng):
    _, model = a1_task
    traj = rollout(model, trotting_data(model, rng), 4)
    provider = derivatives.make_provider("wasp", model, threads=2)
    before = derivatives.fd_evaluations()
    provider.horizon(traj, [0, 2, 2, 0, 1], Linearization.allocate(model, 4))
    assert provider.last_simulations == 3 * full_sweep(model)
    assert derivatives.fd_evaluations() - before == provider.last_simulations
    assert not provider.cache.filled[3].any()
    provider.close()


# --- interface ----------------------------------------------------------------------------------
def test_linearize_leaves_data_unchanged(a1_task, rng):
    _, model = a1_task
    d = trotting_data(model, rng)
    fields = ("qpos", "qvel", "act", "ctrl", "qacc_warmstart", "sensordata", "qacc", "xpos")
    before = {f: getattr(d, f).copy() for f in fields} | {"time": d.time}
    derivatives.make_provider("wasp", model, threads=1).transition(d)
    for f in fields:
        np.testing.assert_array_equal(getattr(d, f), before[f])
    assert d.time == before["time"]


@pytest.mark.parametrize("bad", [dict(frac_x=0.0), dict(frac_u=1.5), dict(tol_x=-0.1),
                                 dict(eps=0.0), dict(threads=0), dict(basis="sobol")])
def test_bad_options_are_rejected(a1_task, bad):
    _, model = a1_task
    with pytest.raises(ValueError):
        derivatives.make_provider("wasp", model, **bad)


def test_rk4_is_rejected():
    model = floating_box_model()
    model.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    with pytest.raises(ValueError, match="RK4"):
        derivatives.make_provider("wasp", model)
