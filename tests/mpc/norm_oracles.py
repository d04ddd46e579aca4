"""Test oracles of the cost norms (:mod:`mpc.norms`) and of the Gauss-Newton kernel: plain numpy,
written from the math and apart from the compiled code they check.

For a residual r of dimension d and parameter p > 0:

    quadratic    n(r) = ½ rᵀr                  n' = r          n'' = I
    l2           n(r) = √(rᵀr + p²) − p        n' = r / s      n'' = (I − r rᵀ/s²) / s
    smooth_abs   n(r) = Σᵢ √(rᵢ² + p²) − p     n'ᵢ = rᵢ / sᵢ   n''ᵢᵢ = p² / sᵢ³

with s = √(rᵀr + p²) for l2 and sᵢ = √(rᵢ² + p²) for smooth_abs. Every function takes r of
shape (..., d) and broadcasts over the leading dimensions.
"""

from __future__ import annotations

import numpy as np

from mpc.planner.cost import CostDerivatives


class Quadratic:
    @staticmethod
    def value(r: np.ndarray, p: float) -> np.ndarray:
        return 0.5 * np.sum(r * r, axis=-1)

    @staticmethod
    def gradient(r: np.ndarray, p: float) -> np.ndarray:
        return r.copy()

    @staticmethod
    def hessian(r: np.ndarray, p: float) -> np.ndarray:
        d = r.shape[-1]
        return np.broadcast_to(np.eye(d), (*r.shape, d)).copy()


class L2:
    @staticmethod
    def value(r: np.ndarray, p: float) -> np.ndarray:
        return np.sqrt(np.sum(r * r, axis=-1) + p * p) - p

    @staticmethod
    def gradient(r: np.ndarray, p: float) -> np.ndarray:
        return r / np.sqrt(np.sum(r * r, axis=-1, keepdims=True) + p * p)

    @staticmethod
    def hessian(r: np.ndarray, p: float) -> np.ndarray:
        s = np.sqrt(np.sum(r * r, axis=-1) + p * p)[..., None, None]
        return (np.eye(r.shape[-1]) - r[..., :, None] * r[..., None, :] / (s * s)) / s


class SmoothAbs:
    @staticmethod
    def value(r: np.ndarray, p: float) -> np.ndarray:
        return np.sum(np.sqrt(r * r + p * p) - p, axis=-1)

    @staticmethod
    def gradient(r: np.ndarray, p: float) -> np.ndarray:
        return r / np.sqrt(r * r + p * p)

    @staticmethod
    def hessian(r: np.ndarray, p: float) -> np.ndarray:
        s = np.sqrt(r * r + p * p)
        return np.eye(r.shape[-1]) * (p * p / s**3)[..., None, :]


#: The oracle of each norm, by the name it has in :data:`mpc.norms.NORMS`.
ORACLES = {"quadratic": Quadratic, "l2": L2, "smooth_abs": SmoothAbs}


def gauss_newton_reference(task, residual: np.ndarray, rx: np.ndarray,
                           ru: np.ndarray) -> CostDerivatives:
    """:func:`mpc.planner.cost.gauss_newton` in plain numpy, from the residual Jacobians
    rx = Rs C, ru = Rs D and each term's gradient and Hessian (no factor, no skipped rows)."""
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
        g = ORACLES[term.norm].gradient(r, term.param)
        H = ORACLES[term.norm].hessian(r, term.param)
        jxT, juT = jx.transpose(0, 2, 1), ju.transpose(0, 2, 1)
        lx += w * np.einsum("tdi,td->ti", jx, g)
        lu += w * np.einsum("tdi,td->ti", ju, g)
        lxx += w * (jxT @ H @ jx)
        luu += w * (juT @ H @ ju)
        lux += w * (juT @ H @ jx)
    return CostDerivatives(lx, lu, lxx, luu, lux)
