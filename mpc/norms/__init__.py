"""Norms applied to residual terms, with first and second derivatives.

For a residual r of dimension d and parameter p > 0:

    quadratic    n(r) = ½ rᵀr                      n' = r          n'' = I
    l2           n(r) = √(rᵀr + p²) − p       n' = r / s     n'' = (I − r rᵀ/s²) / s
    smooth_abs   n(r) = Σᵢ √(rᵢ² + p²) − p    n'ᵢ = rᵢ / sᵢ  n''ᵢᵢ = p² / sᵢ³

with s = √(rᵀr + p²) for l2 and sᵢ = √(rᵢ² + p²) for smooth_abs.

All functions take r of shape (..., d) and broadcast over the leading dimensions.
"""

from __future__ import annotations

import numpy as np

NORMS = ("quadratic", "l2", "smooth_abs")


def value(norm: str, r: np.ndarray, p: float) -> np.ndarray:
    if norm == "quadratic":
        return 0.5 * np.sum(r * r, axis=-1)
    if norm == "l2":
        return np.sqrt(np.sum(r * r, axis=-1) + p * p) - p
    if norm == "smooth_abs":
        return np.sum(np.sqrt(r * r + p * p) - p, axis=-1)
    raise ValueError(f"unknown norm {norm!r}")


def gradient(norm: str, r: np.ndarray, p: float) -> np.ndarray:
    if norm == "quadratic":
        return r.copy()
    if norm == "l2":
        return r / np.sqrt(np.sum(r * r, axis=-1, keepdims=True) + p * p)
    if norm == "smooth_abs":
        return r / np.sqrt(r * r + p * p)
    raise ValueError(f"unknown norm {norm!r}")


def hessian(norm: str, r: np.ndarray, p: float) -> np.ndarray:
    d = r.shape[-1]
    eye = np.eye(d)
    if norm == "quadratic":
        return np.broadcast_to(eye, (*r.shape, d)).copy()
    if norm == "l2":
        s = np.sqrt(np.sum(r * r, axis=-1) + p * p)[..., None, None]
        return (eye - r[..., :, None] * r[..., None, :] / (s * s)) / s
    if norm == "smooth_abs":
        s = np.sqrt(r * r + p * p)
        return eye * (p * p / s**3)[..., None, :]
    raise ValueError(f"unknown norm {norm!r}")
