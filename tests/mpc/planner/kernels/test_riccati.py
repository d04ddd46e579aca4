"""The backward pass on linear-quadratic problems against the discrete Riccati recursion."""

import numpy as np
import pytest

from mpc.planner.kernels.boxqp import NOT_PD, boxqp
from mpc.planner.kernels.riccati import backward_pass


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


def reference_backward_pass(A, B, lx, lu, lxx, luu, lux, ctrl, ctrl_lo, ctrl_hi, mu):
    """The equations of :mod:`mpc.planner.kernels.riccati` term by term in numpy (np.linalg.solve
    for the gains); only the box QP is the kernel's own (checked by brute force in test_boxqp)."""
    T, nx, nu = B.shape
    K = np.zeros((T, nu, nx))
    k = np.zeros((T, nu))
    dV = np.zeros(2)
    Vx, Vxx = lx[T - 1].copy(), lxx[T - 1].copy()
    bounded = np.any(np.isfinite(ctrl_lo) | np.isfinite(ctrl_hi))
    for t in range(T - 2, -1, -1):
        Qx = lx[t] + A[t].T @ Vx
        Qu = lu[t] + B[t].T @ Vx
        Qxx = lxx[t] + A[t].T @ Vxx @ A[t]
        Quu = luu[t] + B[t].T @ Vxx @ B[t]
        Qux = lux[t] + B[t].T @ Vxx @ A[t]
        H = 0.5 * (Quu + Quu.T) + mu * np.eye(nu)
        if bounded:
            free = np.zeros(nu, dtype=np.bool_)
            status, _ = boxqp(H, Qu, ctrl_lo - ctrl[t], ctrl_hi - ctrl[t], k[t + 1], k[t], free,
                              np.zeros((nu, nu)))
            assert status != NOT_PD
            if free.any():
                K[t][free] = -np.linalg.solve(H[np.ix_(free, free)], Qux[free])
        else:
            k[t] = -np.linalg.solve(H, Qu)
            K[t] = -np.linalg.solve(H, Qux)
        Kt, kt = K[t], k[t]
        Vx = Qx + Kt.T @ Quu @ kt + Kt.T @ Qu + Qux.T @ kt
        Vxx = Qxx + Kt.T @ Quu @ Kt + Kt.T @ Qux + Qux.T @ Kt
        Vxx = 0.5 * (Vxx + Vxx.T)
        dV += [kt @ Qu, 0.5 * kt @ Quu @ kt]
    K[T - 1] = K[T - 2]
    return K, k, dV


def random_problem(rng, T, nx, nu):
    """Well-conditioned random derivatives: A near the identity, a positive definite joint
    Hessian [[ℓ_xx, ℓ_uxᵀ], [ℓ_ux, ℓ_uu]] (so every V_xx is positive semidefinite), and
    nominal controls that make the limits bite."""
    n = nx + nu
    A = np.eye(nx) + 0.1 * rng.standard_normal((T, nx, nx)) / np.sqrt(nx)
    B = rng.standard_normal((T, nx, nu)) / np.sqrt(nx)
    M = rng.standard_normal((T, n, n)) / np.sqrt(n)
    H = M @ M.transpose(0, 2, 1) + 0.1 * np.eye(n)
    return dict(
        A=A, B=B, lx=rng.standard_normal((T, nx)), lu=rng.standard_normal((T, nu)),
        lxx=np.ascontiguousarray(H[:, :nx, :nx]), luu=np.ascontiguousarray(H[:, nx:, nx:]),
        lux=np.ascontiguousarray(H[:, nx:, :nx]), ctrl=0.5 * rng.standard_normal((T, nu)))


@pytest.mark.parametrize("limits", ["none", "loose", "active"])
@pytest.mark.parametrize(("T", "nx", "nu"), [(9, 5, 3), (14, 36, 12)])
def test_equals_the_numpy_reference(limits, T, nx, nu):
    """Gains, feedforward and expected improvement equal the docstring's equations evaluated
    term by term (the kernel's factored value update is algebraically the same), with μ > 0 so
    the regularized and plain Q_uu differ."""
    rng = np.random.default_rng(T * 100 + nx)
    a = random_problem(rng, T, nx, nu)
    lim = {"none": np.inf, "loose": 1e3, "active": 0.3}[limits]
    lo, hi = -lim * np.ones(nu), lim * np.ones(nu)
    mu = 0.3
    K, k, dV = np.zeros((T, nu, nx)), np.zeros((T, nu)), np.zeros(2)
    failed = backward_pass(a["A"], a["B"], a["lx"], a["lu"], a["lxx"], a["luu"], a["lux"],
                           a["ctrl"], lo, hi, mu, K, k, dV)
    assert failed == -1
    K_ref, k_ref, dV_ref = reference_backward_pass(
        a["A"], a["B"], a["lx"], a["lu"], a["lxx"], a["luu"], a["lux"], a["ctrl"], lo, hi, mu)
    if limits == "active":  # both kinds of rows occur
        clamped = np.all(K_ref[:-1] == 0.0, axis=2)
        assert clamped.any() and (~clamped).any()
    np.testing.assert_allclose(K, K_ref, rtol=1e-10, atol=1e-10 * np.abs(K_ref).max())
    np.testing.assert_allclose(k, k_ref, rtol=1e-10, atol=1e-10 * np.abs(k_ref).max())
    np.testing.assert_allclose(dV, dV_ref, rtol=1e-10)
    np.testing.assert_array_equal(K[T - 1], K[T - 2])
    np.testing.assert_array_equal(k[T - 1], 0.0)
