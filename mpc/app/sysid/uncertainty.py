"""Uncertainty of a least-squares fit from its own data: the delete-a-block jackknife.

The statistical standard deviation σ² (JᵀJ)⁻¹ of a least-squares fit (even with the residuals'
autocorrelation counted) states how far sensor noise moves the parameters. What moves them
further, on the fake robots as on a robot, is what the model leaves out: the filter's bias at
the fastest sweeps, dry friction that MuJoCo makes soft, a gantry that sways. Those errors are
not white: they change with what the excitation does at the time (the sweep's frequency, which
joints move together), so fits to different stretches of a run disagree by about as much as
they are wrong.

The jackknife measures that disagreement. The samples, in time order, are cut into ``K``
contiguous blocks of several seconds each (much longer than the residuals' correlation, so
the blocks are nearly independent); the fit is repeated K times, each time without one block,
and

    var(θ) = (K − 1)/K Σ_k (θ₍₋ₖ₎ − θ̄)²,   θ̄ = mean of the θ₍₋ₖ₎

(Efron and Tibshirani, An Introduction to the Bootstrap, ch. 11; the delete-a-block form for
dependent data: Künsch 1989). For a linear fit the delete-one-block solutions come from the
blocks' normal equations, without touching the data again; for a nonlinear fit, from one
Gauss-Newton step from the full solution with the Jacobian at it (the linearized jackknife).
"""

from __future__ import annotations

import numpy as np

#: Blocks of a run (each 3-6 s of a 30-60 s excitation).
BLOCKS = 10


def blocks(n: int, k: int = BLOCKS) -> list[np.ndarray]:
    """Indices 0..n-1 (samples in time order) cut into ``k`` contiguous blocks."""
    return np.array_split(np.arange(n), min(k, n))


def jackknife_std(estimates: np.ndarray) -> np.ndarray:
    """Standard deviation from the delete-one-block estimates (K, p) (module docstring)."""
    est = np.asarray(estimates, float)
    k = len(est)
    if k < 2:
        return np.full(est.shape[1:], np.inf)
    return np.sqrt((k - 1) / k * np.sum((est - est.mean(axis=0)) ** 2, axis=0))


def normal_equations(A: np.ndarray, b: np.ndarray, parts: list[np.ndarray]
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per block: AᵀA (K, p, p), Aᵀb (K, p), bᵀb (K,)."""
    return (np.stack([A[i].T @ A[i] for i in parts]), np.stack([A[i].T @ b[i] for i in parts]),
            np.array([b[i] @ b[i] for i in parts]))


def leave_one_out(ata: np.ndarray, atb: np.ndarray, btb: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The linear least-squares solutions without each block and their residual sums of
    squares, from the blocks' normal equations: θ₍₋ₖ₎ (K, p), cost₍₋ₖ₎ (K,)."""
    M, v, c = ata.sum(axis=0) - ata, atb.sum(axis=0) - atb, btb.sum() - btb
    theta = np.stack([np.linalg.lstsq(m, w, rcond=None)[0] for m, w in zip(M, v, strict=True)])
    cost = c - np.einsum("kp,kp->k", theta, v)
    return theta, cost


def linearized(jac: np.ndarray, residual: np.ndarray, theta: np.ndarray,
               parts: list[np.ndarray]) -> np.ndarray:
    """Delete-one-block estimates (K, p) of a nonlinear fit at its solution ``theta``: one
    Gauss-Newton step, θ₍₋ₖ₎ = θ − (J₋ₖᵀ J₋ₖ)⁻¹ J₋ₖᵀ r₋ₖ, from the Jacobian ``jac`` (rows,
    p) and residual (rows,) at ``theta``; ``parts``: the rows of each block."""
    jtj, jtr, _ = normal_equations(jac, residual, parts)
    M, v = jtj.sum(axis=0) - jtj, jtr.sum(axis=0) - jtr
    return np.stack([theta - np.linalg.lstsq(m, w, rcond=None)[0]
                     for m, w in zip(M, v, strict=True)])
