"""Gauss-Newton cost derivatives."""

import numpy as np

from mpc.cost import gauss_newton, gauss_newton_reference, trajectory_costs


def test_whitened_products_equal_the_direct_formula(a1_task, rng):
    task, _ = a1_task
    T, nr = 8, task.nresidual
    r = 0.2 * rng.standard_normal((T, nr))
    rx = rng.standard_normal((T, nr, 36))
    ru = rng.standard_normal((T, nr, 12))
    a = gauss_newton(task, r, rx, ru)
    b = gauss_newton_reference(task, r, rx, ru)
    for k in ("lx", "lu", "lxx", "luu", "lux"):
        np.testing.assert_allclose(getattr(a, k), getattr(b, k), atol=1e-12)


def test_gradient_is_the_derivative_of_the_mean_stage_cost(a1_task, rng):
    """For residuals that depend linearly on the sensors, ℓ_s = (∂r/∂s)ᵀ ∇n: check
    d cost / d sensordata by finite differences through the task's residual."""
    task, model = a1_task
    T = 5
    s = rng.standard_normal((T, model.nsensordata)) * 0.1
    s[:, task.sensor("base_pos")] += [0.0, 0.0, 0.27]
    times = np.linspace(0.0, 0.2, T)
    Rs = task.residual_jacobian(s, times)
    eye = np.broadcast_to(np.eye(model.nsensordata), (T, *np.eye(model.nsensordata).shape))
    d = gauss_newton(task, task.residual(s, times), Rs @ eye, Rs[:, :, :2] @ np.eye(2))
    h = 1e-6
    for t in range(T):
        for j in range(0, model.nsensordata, 5):
            sp, sm = s.copy(), s.copy()
            sp[t, j] += h
            sm[t, j] -= h
            fd = (trajectory_costs(task, sp, times) - trajectory_costs(task, sm, times)) / (2 * h)
            assert abs(fd - d.lx[t, j]) < 1e-6 * max(1.0, abs(fd))
