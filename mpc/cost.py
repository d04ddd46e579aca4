"""Cost of trajectories and its Gauss-Newton derivatives.

The cost of a trajectory of T knots is the mean stage cost (1/T) Σ_t ℓ(s_t, t). Its derivatives
at each knot use the Gauss-Newton approximation of each term i (residual slice rᵢ, norm nᵢ,
weight wᵢ), with residual Jacobians r_x, r_u:

    ℓ_x  = Σᵢ wᵢ r_xᵢᵀ nᵢ'(rᵢ)            ℓ_u  = Σᵢ wᵢ r_uᵢᵀ nᵢ'(rᵢ)
    ℓ_xx = Σᵢ wᵢ r_xᵢᵀ nᵢ''(rᵢ) r_xᵢ      ℓ_uu = Σᵢ wᵢ r_uᵢᵀ nᵢ''(rᵢ) r_uᵢ
    ℓ_ux = Σᵢ wᵢ r_uᵢᵀ nᵢ''(rᵢ) r_xᵢ

each divided by T. Every norm Hessian here is positive semidefinite with an explicit factor
n'' = F Fᵀ, so with the whitened Jacobians J̃ = √w Fᵀ r_x (and likewise for u) the second
derivatives are single batched products over all knots: ℓ_xx = J̃_xᵀ J̃_x, ℓ_ux = J̃_uᵀ J̃_x.
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


def hessian_factor(norm: str, r: np.ndarray, p: float) -> np.ndarray:
    """F (..., d, d) with F Fᵀ = n''(r); symmetric."""
    d = r.shape[-1]
    eye = np.eye(d)
    if norm == "quadratic":
        return np.broadcast_to(eye, (*r.shape, d))
    if norm == "smooth_abs":
        s = np.sqrt(r * r + p * p)
        return eye * (p / s**1.5)[..., None, :]
    if norm == "l2":
        # n'' = (I − g gᵀ)/s with g = r/s, |g| < 1; (I − c g gᵀ)² = I − g gᵀ for the c below.
        s = np.sqrt(np.sum(r * r, axis=-1) + p * p)
        g = r / s[..., None]
        g2 = np.sum(g * g, axis=-1)
        c = np.where(g2 > 1e-12, (1.0 - np.sqrt(np.clip(1.0 - g2, 0.0, None)))
                     / np.where(g2 > 1e-12, g2, 1.0), 0.5)
        F = eye - c[..., None, None] * g[..., :, None] * g[..., None, :]
        return F / np.sqrt(s)[..., None, None]
    raise ValueError(f"unknown norm {norm!r}")


def gauss_newton(task: Task, residual: np.ndarray, rx: np.ndarray,
                 ru: np.ndarray) -> CostDerivatives:
    """Derivatives of the mean stage cost from residuals (T, nr) and Jacobians rx, ru."""
    T = residual.shape[0]
    grad = np.zeros_like(residual)  # Σ-ready weighted norm gradients, per residual row
    Jx = np.zeros_like(rx)  # whitened Jacobians
    Ju = np.zeros_like(ru)
    for term, s in zip(task.terms, task.term_slices, strict=False):
        if term.weight == 0.0:
            continue
        w = term.weight / T
        r = residual[:, s]
        grad[:, s] = w * norms.gradient(term.norm, r, term.param)
        Ft = np.sqrt(w) * np.swapaxes(hessian_factor(term.norm, r, term.param), -1, -2)
        Jx[:, s] = Ft @ rx[:, s]
        Ju[:, s] = Ft @ ru[:, s]
    JxT, JuT = np.swapaxes(Jx, 1, 2), np.swapaxes(Ju, 1, 2)
    return CostDerivatives(
        lx=np.einsum("tri,tr->ti", rx, grad),
        lu=np.einsum("tri,tr->ti", ru, grad),
        lxx=JxT @ Jx,
        luu=JuT @ Ju,
        lux=JuT @ Jx,
    )


def gauss_newton_reference(task: Task, residual: np.ndarray, rx: np.ndarray,
                           ru: np.ndarray) -> CostDerivatives:
    """Plain numpy version of :func:`gauss_newton` (the test oracle)."""
    T = residual.shape[0]
    nx, nu = rx.shape[2], ru.shape[2]
    lx = np.zeros((T, nx))
    lu = np.zeros((T, nu))
    lxx = np.zeros((T, nx, nx))
    luu = np.zeros((T, nu, nu))
    lux = np.zeros((T, nu, nx))
    for term, s in zip(task.terms, task.term_slices, strict=False):
        w = term.weight / T
        r, jx, ju = residual[:, s], rx[:, s], ru[:, s]
        g = norms.gradient(term.norm, r, term.param)
        H = norms.hessian(term.norm, r, term.param)
        jxT, juT = jx.transpose(0, 2, 1), ju.transpose(0, 2, 1)
        lx += w * np.einsum("tdi,td->ti", jx, g)
        lu += w * np.einsum("tdi,td->ti", ju, g)
        lxx += w * (jxT @ H @ jx)
        luu += w * (juT @ H @ ju)
        lux += w * (juT @ H @ jx)
    return CostDerivatives(lx, lu, lxx, luu, lux)
