"""The finite-difference oracle: its model, its smoothness probe and its error measures."""

import mujoco
import numpy as np
import pytest

from derivatives.oracle import (
    TOLERANCE,
    centered_fd,
    is_smooth,
    median_column_error,
    oracle_model,
    relative_error,
    relative_max_error,
)

BALL = """<mujoco><option timestep="0.002"/><worldbody><geom type="plane" size="1 1 .1"/>
<body pos="0 0 {z}"><freejoint/><geom type="sphere" size="0.1" mass="1"/></body></worldbody>
</mujoco>"""


def ball(z: float) -> tuple[mujoco.MjModel, mujoco.MjData]:
    m = mujoco.MjModel.from_xml_string(BALL.format(z=z))
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    return m, d


def test_the_oracle_model_is_a_tight_newton_copy():
    m, _ = ball(1.0)
    o = oracle_model(m, "implicitfast")
    assert o.opt.solver == mujoco.mjtSolver.mjSOL_NEWTON and o.opt.tolerance == TOLERANCE
    assert o.opt.integrator == mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    assert m.opt.tolerance != TOLERANCE  # the model itself is left alone


def test_a_free_ball_is_smooth_and_a_ball_at_the_floor_is_not():
    m, d = ball(1.0)
    assert is_smooth(m, d, 1e-5)
    m, d = ball(0.1)  # touching: ±eps in z switches the contact
    assert not is_smooth(m, d, 1e-5)
    assert d.qpos[2] == 0.1  # the probe leaves the state alone


def test_centered_differences_of_free_flight_are_the_exact_step():
    m, d = ball(1.0)
    A, B = centered_fd(oracle_model(m), d)
    h = m.opt.timestep
    # semi-implicit Euler: z' = z + h v', v' = v - h g: dz'/dvz = h
    assert A[2, 6 + 2] == pytest.approx(h, rel=1e-6)
    assert B.shape == (12, 0)


def test_the_error_measures():
    ref = np.array([[1.0, 0.0], [0.0, 2.0]])
    x = ref + np.array([[0.1, 0.0], [0.0, 0.0]])
    assert relative_error(x, ref) == pytest.approx(0.1 / np.sqrt(5))
    assert relative_max_error(x, ref) == pytest.approx(0.05)
    assert median_column_error(x, ref) == pytest.approx(0.05)  # columns: 0.1 and 0
    assert relative_max_error(np.zeros(2), np.zeros(2)) == 0.0
    assert relative_max_error(np.ones(2), np.zeros(2)) == np.inf
    assert np.isnan(median_column_error(np.ones((2, 2)), np.zeros((2, 2))))


def test_differences_on_a_height_field_knot_agree_with_the_analytic_step():
    """A knot as the planner's rollout leaves it (a Go2 standing on the landing of a flight of
    stairs in its planning model, the map a height field, a dozen contacts or more; the solver
    warm-started with the step before's acceleration): centered differences at step 1e-7 agree
    with the analytic derivatives to 1e-5 (at 1e-6 their own truncation error reaches that
    on one of the knots). With the solver stopped at tolerance 1e-12 from that warm start (the
    oracle before) they were off by 7e-5 here and by up to 2.5e-3 on the run-time audit's
    knots, which reported the height field's derivatives wrong."""
    import robots
    from derivatives.analytic.provider import AnalyticProvider
    from mpc.tasks import make_task
    from mpc.tasks.terrain_map import stairs

    flight = stairs(steps=2, start=0.5, landing=0.5, after=0.5)
    task = make_task("quadruped_flat", robots.info("go2"), gait="walk", height=0.27,
                     ground="map", map=flight, step_height=0.08, map_clearance=0.1)
    m = task.planning_model(0.01, False, None, None)
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, 0)
    # on the landing, all four feet on the field (on the floor before the flight they stand
    # on the plane alone since the field's floor-level samples lie 3 cm under it)
    d.qpos[0] = 1.0
    d.qpos[2] += float(flight.height(1.0, 0.0))
    d.ctrl[:] = d.qpos[7:]
    worst = 0.0
    for k in range(40):  # the robot lands on the field and settles; a knot every 10 steps
        mujoco.mj_step(m, d)
        if k % 10 == 9:
            nx = 2 * m.nv + m.na
            A, B = np.zeros((nx, nx)), np.zeros((nx, m.nu))
            AnalyticProvider(m, threads=1).linearize(d, A, B)
            A_fd, B_fd = centered_fd(oracle_model(m), d, eps=1e-7)
            worst = max(worst, relative_error(A, A_fd), relative_error(B, B_fd))
    assert d.ncon >= 12
    assert worst < 1e-5, worst
