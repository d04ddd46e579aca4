"""Gauss-Newton cost derivatives of a whole horizon in one compiled call (see :mod:`mpc.cost`).

Per knot t and term i (rows rᵢ of the residual, weight wᵢ already divided by T, norm code
:data:`NORM_CODES`), with the residual Jacobians r_x = R_s C_t, r_u = R_s D_t:

    gᵢ = wᵢ nᵢ'(rᵢ),    J̃_xᵢ = √wᵢ Fᵢᵀ r_xᵢ,    J̃_uᵢ = √wᵢ Fᵢᵀ r_uᵢ     (Fᵢ Fᵢᵀ = nᵢ''(rᵢ))

    ℓ_x = r_xᵀ g    ℓ_u = r_uᵀ g    ℓ_xx = J̃_xᵀ J̃_x    ℓ_uu = J̃_uᵀ J̃_u    ℓ_ux = J̃_uᵀ J̃_x

The factors: quadratic F = I; smooth-abs F = diag(p / sⱼ^{3/2}) with sⱼ = √(rⱼ² + p²);
l2 F = (I − c ĝ ĝᵀ)/√s with s = √(rᵀr + p²), ĝ = r/s and c = (1 − √(1 − ĝᵀĝ))/ĝᵀĝ
(c → ½ as ĝ → 0), for which (I − c ĝ ĝᵀ)² = I − ĝ ĝᵀ.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Integer codes of the norms for the kernel.
NORM_CODES = {"quadratic": 0, "l2": 1, "smooth_abs": 2}


@njit(cache=True, nogil=True)
def gauss_newton_horizon(residual, Rs, C, D, starts, dims, codes, params, weights,
                         lx, lu, lxx, luu, lux):
    """Fill lx (T, nx), lu (T, nu), lxx (T, nx, nx), luu (T, nu, nu), lux (T, nu, nx) from the
    residuals (T, nr), their sensor Jacobians Rs (T, nr, ns) and the sensor Jacobians
    C (T, ns, nx), D (T, ns, nu). Term i covers rows starts[i] : starts[i] + dims[i], with
    norm code codes[i], parameter params[i] and weight weights[i] (already divided by T)."""
    T, nr = residual.shape
    ns = C.shape[1]
    nx = C.shape[2]
    nu = D.shape[2]
    grad = np.empty(nr)
    Jx = np.empty((nr, nx))
    Ju = np.empty((nr, nu))
    rx = np.empty((nr, nx))
    ru = np.empty((nr, nu))
    for t in range(T):
        # r_x = R_s C, r_u = R_s D over the nonzeros of R_s (a residual reads few sensors)
        rx[:, :] = 0.0
        ru[:, :] = 0.0
        for j in range(nr):
            for k in range(ns):
                g = Rs[t, j, k]
                if g != 0.0:
                    for c in range(nx):
                        rx[j, c] += g * C[t, k, c]
                    for c in range(nu):
                        ru[j, c] += g * D[t, k, c]
        grad[:] = 0.0
        Jx[:, :] = 0.0
        Ju[:, :] = 0.0
        for i in range(starts.shape[0]):
            w = weights[i]
            if w == 0.0:
                continue
            a = starts[i]
            e = a + dims[i]
            p = params[i]
            sw = np.sqrt(w)
            r = residual[t, a:e]
            if codes[i] == 0:  # quadratic
                for j in range(a, e):
                    grad[j] = w * residual[t, j]
                    Jx[j] = sw * rx[j]
                    Ju[j] = sw * ru[j]
            elif codes[i] == 2:  # smooth_abs
                for j in range(a, e):
                    s = np.sqrt(residual[t, j] ** 2 + p * p)
                    grad[j] = w * residual[t, j] / s
                    f = sw * p / s**1.5
                    Jx[j] = f * rx[j]
                    Ju[j] = f * ru[j]
            else:  # l2
                s = np.sqrt(np.sum(r * r) + p * p)
                g = r / s
                g2 = np.sum(g * g)
                c = (1.0 - np.sqrt(max(1.0 - g2, 0.0))) / g2 if g2 > 1e-12 else 0.5
                d = e - a
                F = np.eye(d) - c * np.outer(g, g)
                F *= sw / np.sqrt(s)
                Jx[a:e] = F @ rx[a:e]
                Ju[a:e] = F @ ru[a:e]
                for j in range(a, e):
                    grad[j] = w * g[j - a]
        lx[t] = rx.T @ grad
        lu[t] = ru.T @ grad
        lxx[t] = Jx.T @ Jx
        luu[t] = Ju.T @ Ju
        lux[t] = Ju.T @ Jx
