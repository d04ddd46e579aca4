"""The backward pass on linear-quadratic problems against the discrete Riccati recursion."""

import numpy as np
import pytest

from mpc.kernels.riccati import backward_pass


def lq_problem(rng, T=12, nx=4, nu=2):
    A = np.eye(nx) + 0.1 * rng.standard_normal((nx, nx))
    B = 0.3 * rng.standard_normal((nx, nu))
    M = rng.standard_normal((nx, nx))
    Q = M @ M.T + np.eye(nx)
    R = np.diag(rng.uniform(0.5, 2.0, nu))
    return A, B, Q, R, T


def riccati_gains(A, B, Q, R, T):
    """Finite-horizon LQR: P_T = Q, K_t = -(R + BᵀPB)⁻¹ BᵀPA, P = Q + AᵀP(A + BK)."""
    P = Q.copy()
    gains = [None] * (T - 1)
    for t in range(T - 2, -1, -1):
        K = -np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A)
        gains[t] = K
        P = Q + A.T @ P @ (A + B @ K)
    return gains, P


def arrays(A, B, Q, R, T, x_nom=None):
    nx, nu = B.shape
    x_nom = np.zeros((T, nx)) if x_nom is None else x_nom
    return dict(
        A=np.repeat(A[None], T, 0), B=np.repeat(B[None], T, 0),
        lx=x_nom @ Q, lu=np.zeros((T, nu)),
        lxx=np.repeat(Q[None], T, 0), luu=np.repeat(R[None], T, 0),
        lux=np.zeros((T, nu, nx)), ctrl=np.zeros((T, nu)))


@pytest.mark.parametrize("bounded", [False, True])
def test_gains_equal_riccati_without_active_limits(bounded):
    rng = np.random.default_rng(1)
    A, B, Q, R, T = lq_problem(rng)
    nx, nu = B.shape
    a = arrays(A, B, Q, R, T)
    lim = 1e3 if bounded else np.inf
    K = np.zeros((T, nu, nx))
    k = np.zeros((T, nu))
    dV = np.zeros(2)
    failed = backward_pass(a["A"], a["B"], a["lx"], a["lu"], a["lxx"], a["luu"], a["lux"],
                           a["ctrl"], -lim * np.ones(nu), lim * np.ones(nu), 0.0, K, k, dV)
    assert failed == -1
    expected, _ = riccati_gains(A, B, Q, R, T)
    for t in range(T - 1):
        np.testing.assert_allclose(K[t], expected[t], atol=1e-9)
    np.testing.assert_allclose(k, 0.0, atol=1e-12)


def test_one_step_solves_the_lq_problem():
    """From a nonzero nominal, x_{t+1} = A x + B (u + k + K dx) reaches the LQR optimum:
    the feedforward k equals the LQR action at the nominal state."""
    rng = np.random.default_rng(2)
    A, B, Q, R, T = lq_problem(rng)
    nx, nu = B.shape
    x = np.zeros((T, nx))
    x[0] = rng.standard_normal(nx)
    for t in range(T - 1):
        x[t + 1] = A @ x[t]  # nominal with zero controls
    a = arrays(A, B, Q, R, T, x)
    K = np.zeros((T, nu, nx))
    k = np.zeros((T, nu))
    dV = np.zeros(2)
    backward_pass(a["A"], a["B"], a["lx"], a["lu"], a["lxx"], a["luu"], a["lux"], a["ctrl"],
                  -np.inf * np.ones(nu), np.inf * np.ones(nu), 0.0, K, k, dV)
    gains, P0 = riccati_gains(A, B, Q, R, T)
    # forward pass with alpha = 1
    xs = x[0].copy()
    cost = 0.0
    for t in range(T - 1):
        u = k[t] + K[t] @ (xs - x[t])
        np.testing.assert_allclose(u, gains[t] @ xs, atol=1e-9)
        cost += 0.5 * xs @ Q @ xs + 0.5 * u @ R @ u
        xs = A @ xs + B @ u
    cost += 0.5 * xs @ Q @ xs
    assert abs(cost - 0.5 * x[0] @ P0 @ x[0]) < 1e-8
    # expected improvement dV[0] + dV[1] equals the actual one for a quadratic problem
    nominal = sum(0.5 * x[t] @ Q @ x[t] for t in range(T))
    assert abs(dV[0] + dV[1] - (cost - nominal)) < 1e-8


def test_active_limits_zero_the_feedback_rows():
    rng = np.random.default_rng(3)
    A, B, Q, R, T = lq_problem(rng)
    nx, nu = B.shape
    x = np.zeros((T, nx))
    x[0] = 10 * rng.standard_normal(nx)
    for t in range(T - 1):
        x[t + 1] = A @ x[t]
    a = arrays(A, B, Q, R, T, x)
    K = np.zeros((T, nu, nx))
    k = np.zeros((T, nu))
    dV = np.zeros(2)
    lim = 0.05
    backward_pass(a["A"], a["B"], a["lx"], a["lu"], a["lxx"], a["luu"], a["lux"], a["ctrl"],
                  -lim * np.ones(nu), lim * np.ones(nu), 0.0, K, k, dV)
    assert np.all(np.abs(k) <= lim + 1e-12)
    clamped = np.isclose(np.abs(k[:-1]), lim)
    assert clamped.any()
    for t, i in zip(*np.nonzero(clamped), strict=False):
        np.testing.assert_allclose(K[t, i], 0.0)


def test_indefinite_control_hessian_reports_the_knot():
    rng = np.random.default_rng(4)
    A, B, Q, R, T = lq_problem(rng)
    nx, nu = B.shape
    a = arrays(A, B, Q, -10 * R, T)
    failed = backward_pass(a["A"], a["B"], a["lx"], a["lu"], a["lxx"], a["luu"], a["lux"],
                           a["ctrl"], -np.inf * np.ones(nu), np.inf * np.ones(nu), 0.0,
                           np.zeros((T, nu, nx)), np.zeros((T, nu)), np.zeros(2))
    assert failed == T - 2
