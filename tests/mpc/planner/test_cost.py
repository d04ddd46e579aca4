"""Gauss-Newton cost derivatives."""

from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import numpy as np
import pytest
from norm_oracles import gauss_newton_reference

from mpc import norms
from mpc.planner.cost import gauss_newton, trajectory_costs


def test_compiled_kernel_equals_the_numpy_reference(a1_task, rng):
    task, _ = a1_task
    T, nr = 8, task.nresidual
    r = 0.2 * rng.standard_normal((T, nr))
    ns = 20
    Rs = rng.standard_normal((T, nr, ns))
    C = rng.standard_normal((T, ns, 36))
    D = rng.standard_normal((T, ns, 12))
    a = gauss_newton(task, r, Rs, C, D)
    b = gauss_newton_reference(task, r, Rs @ C, Rs @ D)
    for k in ("lx", "lu", "lxx", "luu", "lux"):
        np.testing.assert_allclose(getattr(a, k), getattr(b, k), atol=1e-12)


@pytest.mark.parametrize("T", [1, 2, 7, 36])
def test_the_horizon_split_over_two_threads_is_the_same_to_the_bit(a1_task, rng, T):
    """With an executor the later half of the knots is computed on its thread: every
    derivative is the one of the single call, bit for bit (the planner relies on it: a plan
    does not depend on the threads)."""
    task, _ = a1_task
    nr, ns = task.nresidual, 20
    r = 0.2 * rng.standard_normal((T, nr))
    Rs = rng.standard_normal((T, nr, ns)) * (rng.random((T, nr, ns)) < 0.3)
    C = rng.standard_normal((T, ns, 36))
    D = rng.standard_normal((T, ns, 12))
    a = gauss_newton(task, r, Rs, C, D)
    with ThreadPoolExecutor(1) as pool:
        b = gauss_newton(task, r, Rs, C, D, pool)
    for k in ("lx", "lu", "lxx", "luu", "lux"):
        assert np.array_equal(getattr(a, k), getattr(b, k)), k


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
    d = gauss_newton(task, task.residual(s, times), Rs, eye, np.ascontiguousarray(eye[:, :, :2]))
    h = 1e-6
    for t in range(T):
        for j in range(0, model.nsensordata, 5):
            sp, sm = s.copy(), s.copy()
            sp[t, j] += h
            sm[t, j] -= h
            fd = (trajectory_costs(task, sp, times)[0]
                  - trajectory_costs(task, sm, times)[0]) / (2 * h)
            assert abs(fd - d.lx[t, j]) < 1e-6 * max(1.0, abs(fd))


@pytest.mark.parametrize("norm", norms.NORMS)
@pytest.mark.parametrize("scale", [0.0, 1e-7, 0.05, 3.0])
def test_compiled_kernel_per_norm_equals_the_numpy_reference(norm, scale, rng):
    """One term of each norm, at zero residual (l2's ĝ → 0 branch), tiny, moderate and
    large residuals, plus a zero-weight term that must contribute nothing."""
    terms = [SimpleNamespace(dim=3, norm=norm, param=0.1, weight=0.7),
             SimpleNamespace(dim=2, norm="quadratic", param=0.0, weight=0.0)]
    task = SimpleNamespace(terms=terms, term_slices=[slice(0, 3), slice(3, 5)])
    T, ns = 6, 9
    r = scale * rng.standard_normal((T, 5))
    Rs = rng.standard_normal((T, 5, ns))
    C = rng.standard_normal((T, ns, 8))
    D = rng.standard_normal((T, ns, 4))
    a = gauss_newton(task, r, Rs, C, D)
    ref_task = SimpleNamespace(terms=terms[:1], term_slices=[slice(0, 3)])
    b = gauss_newton_reference(ref_task, r[:, :3], (Rs @ C)[:, :3], (Rs @ D)[:, :3])
    for k in ("lx", "lu", "lxx", "luu", "lux"):
        np.testing.assert_allclose(getattr(a, k), getattr(b, k), rtol=1e-10, atol=1e-12)
