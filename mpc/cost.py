"""Cost of trajectories and its Gauss-Newton derivatives.

The cost of a trajectory of T knots is the mean stage cost (1/T) Σ_t ℓ(s_t, t). Its derivatives
at each knot use the Gauss-Newton approximation of each term i (residual slice rᵢ, norm nᵢ,
weight wᵢ), with residual Jacobians r_x, r_u:

    ℓ_x  = Σᵢ wᵢ r_xᵢᵀ nᵢ'(rᵢ)            ℓ_u  = Σᵢ wᵢ r_uᵢᵀ nᵢ'(rᵢ)
    ℓ_xx = Σᵢ wᵢ r_xᵢᵀ nᵢ''(rᵢ) r_xᵢ      ℓ_uu = Σᵢ wᵢ r_uᵢᵀ nᵢ''(rᵢ) r_uᵢ     ℓ_ux = Σᵢ wᵢ r_uᵢᵀ nᵢ''(rᵢ) r_xᵢ

each divided by T.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mpc import norms
from mpc.tasks.task_base import Task


@dataclass
class CostDerivatives:
    lx: np.ndarray  # (T, nx)
    lu: np.ndarray  # (T, nu)
    lxx: np.ndarray  # (T, nx, nx)
    luu: np.ndarray  # (T, nu, nu)
    lux: np.ndarray  # (T, nu, nx)


def trajectory_costs(task: Task, sensordata: np.ndarray, time: np.ndarray) -> np.ndarray:
    """Mean stage cost of each trajectory: sensordata (..., T, ns), time (..., T) -> (...)."""
    return task.cost(task.residual(sensordata, time)).mean(axis=-1)


def gauss_newton(task: Task, residual: np.ndarray, rx: np.ndarray,
                 ru: np.ndarray) -> CostDerivatives:
    """Derivatives of the mean stage cost from residuals (T, nr) and Jacobians rx, ru."""
    T = residual.shape[0]
    nx, nu = rx.shape[2], ru.shape[2]
    lx = np.zeros((T, nx))
    lu = np.zeros((T, nu))
    lxx = np.zeros((T, nx, nx))
    luu = np.zeros((T, nu, nu))
    lux = np.zeros((T, nu, nx))
    for term, s in zip(task.terms, task.term_slices):
        if term.weight == 0.0:
            continue
        w = term.weight / T
        r, jx, ju = residual[:, s], rx[:, s], ru[:, s]
        g = norms.gradient(term.norm, r, term.param)
        H = norms.hessian(term.norm, r, term.param)
        jxT, juT = jx.transpose(0, 2, 1), ju.transpose(0, 2, 1)
        Hjx, Hju = H @ jx, H @ ju
        lx += w * np.einsum("tdi,td->ti", jx, g)
        lu += w * np.einsum("tdi,td->ti", ju, g)
        lxx += w * (jxT @ Hjx)
        luu += w * (juT @ Hju)
        lux += w * (juT @ Hjx)
    return CostDerivatives(lx, lu, lxx, luu, lux)
