"""The finite-difference oracle: its model, its smoothness probe and its error measures."""

import mujoco
import numpy as np
import pytest

from derivatives.oracle import (
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
    assert o.opt.solver == mujoco.mjtSolver.mjSOL_NEWTON and o.opt.tolerance == 1e-12
    assert o.opt.integrator == mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    assert m.opt.tolerance != 1e-12  # the model itself is left alone


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
