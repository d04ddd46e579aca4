"""Cost of trajectories and its Gauss-Newton derivatives.

The cost of a trajectory of T knots is the mean stage cost (1/T) Σ_t ℓ(s_t, t). Its derivatives
at each knot use the Gauss-Newton approximation of each term i (residual slice rᵢ, norm nᵢ,
weight wᵢ), with residual Jacobians r_x, r_u:

    ℓ_x  = Σᵢ wᵢ r_xᵢᵀ nᵢ'(rᵢ)            ℓ_u  = Σᵢ wᵢ r_uᵢᵀ nᵢ'(rᵢ)
    ℓ_xx = Σᵢ wᵢ r_xᵢᵀ nᵢ''(rᵢ) r_xᵢ      ℓ_uu = Σᵢ wᵢ r_uᵢᵀ nᵢ''(rᵢ) r_uᵢ
    ℓ_ux = Σᵢ wᵢ r_uᵢᵀ nᵢ''(rᵢ) r_xᵢ

each divided by T. Every norm Hessian here is positive semidefinite with an explicit factor
n'' = F Fᵀ (each norm module of :mod:`mpc.norms` gives its own), so with the whitened Jacobians
J̃ = √w Fᵀ r_x (and likewise for u) the second derivatives are plain products,
ℓ_xx = J̃_xᵀ J̃_x, ℓ_ux = J̃_uᵀ J̃_x, computed for the whole horizon in one compiled call
(:mod:`mpc.norms.gauss_newton`).
"""

from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import dataclass

import numpy as np

from mpc.norms.gauss_newton import gauss_newton_horizon
from mpc.tasks.task_base import Task, term_table


@dataclass
class CostDerivatives:
    lx: np.ndarray  # (T, nx)
    lu: np.ndarray  # (T, nu)
    lxx: np.ndarray  # (T, nx, nx)
    luu: np.ndarray  # (T, nu, nu)
    lux: np.ndarray  # (T, nu, nx)


def trajectory_costs(task: Task, sensordata: np.ndarray,
                     time: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean stage cost of each trajectory and the residuals it came from: sensordata
    (..., T, ns), time (..., T) -> costs (...), residuals (..., T, nr)."""
    residual = task.residual(sensordata, time)
    return task.cost(residual).mean(axis=-1), residual


def gauss_newton(task: Task, residual: np.ndarray, Rs: np.ndarray, C: np.ndarray,
                 D: np.ndarray, executor: Executor | None = None) -> CostDerivatives:
    """Derivatives of the mean stage cost from residuals (T, nr), their sensor Jacobians
    Rs (T, nr, ns) and the sensor Jacobians C (T, ns, nx), D (T, ns, nu): one compiled call
    (:func:`mpc.norms.gauss_newton.gauss_newton_horizon`) with r_x = Rs C, r_u = Rs D. With
    an ``executor`` (a thread of it idle) the knots are split in two halves, the later one
    on the executor's thread (the kernel releases the GIL; each knot's derivatives are its
    own: the same values)."""
    T, nx, nu = residual.shape[0], C.shape[2], D.shape[2]
    out = CostDerivatives(np.empty((T, nx)), np.empty((T, nu)), np.empty((T, nx, nx)),
                          np.empty((T, nu, nu)), np.empty((T, nu, nx)))
    starts, dims, codes, params, weights = term_table(task.terms)
    arrays = [np.ascontiguousarray(a, dtype=np.float64) for a in (residual, Rs, C, D)]
    weights = weights / T

    def knots(a: int, b: int) -> None:
        gauss_newton_horizon(*(x[a:b] for x in arrays), starts, dims, codes, params, weights,
                             out.lx[a:b], out.lu[a:b], out.lxx[a:b], out.luu[a:b],
                             out.lux[a:b])

    if executor is None or T < 2:
        knots(0, T)
        return out
    half = T // 2
    later = executor.submit(knots, half, T)
    knots(0, half)
    later.result()
    return out

