"""Gauss-Newton cost derivatives of a whole horizon in one compiled call (see
:mod:`mpc.planner.cost`).

Per knot t and term i (rows rᵢ of the residual, weight wᵢ already divided by T, norm code of
:data:`mpc.norms.CODES`), with the residual Jacobians r_x = R_s C_t, r_u = R_s D_t:

    gᵢ = wᵢ nᵢ'(rᵢ),    J̃_xᵢ = √wᵢ Fᵢᵀ r_xᵢ,    J̃_uᵢ = √wᵢ Fᵢᵀ r_uᵢ     (Fᵢ Fᵢᵀ = nᵢ''(rᵢ))

    ℓ_x = r_xᵀ g    ℓ_u = r_uᵀ g    ℓ_xx = J̃_xᵀ J̃_x    ℓ_uu = J̃_uᵀ J̃_u    ℓ_ux = J̃_uᵀ J̃_x

with gᵢ and F from the norm modules of :mod:`mpc.norms`: a separable norm's row by row
(``gauss_newton_row``, the kernel scales the row's Jacobians), a coupled norm's for the whole
term (``gauss_newton_rows``).

Only rows that contribute are kept: terms of zero weight are skipped, and so are rows of a
separable norm's term that read no sensor (a zero row of R_s). The Jacobian rows are sparse in
practice (a residual reads a few sensors, a sensor depends on a few coordinates: about 10% of
r_x is nonzero for the quadrupeds), so the products J̃ᵀJ̃ are accumulated row by row over each
row's nonzeros when that takes clearly fewer operations than the dense product (BLAS).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mpc.norms.dispatch import SEPARABLE, gauss_newton_row, gauss_newton_rows

#: The products J_aᵀ J_b are accumulated row by row over the rows' nonzero spans when
#: Σ_rows span_a·span_b ≤ m·n_a·n_b / SPARSE_RATIO (m rows), else taken densely (BLAS): per
#: multiply-add, a rank-one update costs about four times what a BLAS product does.
SPARSE_RATIO = 4


@njit(cache=True, nogil=True)
def _spans(J, m, lo, hi):
    """The span lo[j] : hi[j] from the first to the last nonzero of each of the first m rows
    of J (0 : 0 for a zero row); returns Σ (hi[j] − lo[j])², the work of the sparse product."""
    n = J.shape[1]
    work = 0
    for j in range(m):
        # as min/max reductions over the whole row, which vectorize (early-exit scans do not)
        a = n
        b = 0
        for c in range(n):
            nonzero = J[j, c] != 0.0
            a = min(a, c if nonzero else n)
            b = max(b, c + 1 if nonzero else 0)
        a = min(a, b)
        lo[j] = a
        hi[j] = b
        work += (b - a) * (b - a)
    return work


@njit(cache=True, nogil=True)
def _sparse_gram(J, m, lo, hi, out):
    """out = J[:m]ᵀ J[:m] by rank-one updates over each row's nonzero span: the upper triangle,
    then mirrored. The zeros inside a span add exact zeros: the sums are those over the
    nonzeros, in row order."""
    # Unsigned loop indices: numba then drops its negative-index wraparound, which otherwise
    # keeps LLVM from vectorizing loops that do not start at zero.
    out[:, :] = 0.0
    for j in range(m):
        h = np.uint64(hi[j])
        for a in range(np.uint64(lo[j]), h):
            va = J[j, a]
            if va != 0.0:
                for b in range(a, h):
                    out[a, b] += va * J[j, b]
    for i in range(out.shape[0]):
        for c in range(i):
            out[i, c] = out[c, i]


@njit(cache=True, nogil=True)
def _sparse_product(Ja, loa, hia, Jb, lob, hib, m, out):
    """out = Ja[:m]ᵀ Jb[:m] by rank-one updates over each row's nonzero spans (unsigned loop
    indices as in :func:`_sparse_gram`)."""
    out[:, :] = 0.0
    for j in range(m):
        b0 = np.uint64(lob[j])
        b1 = np.uint64(hib[j])
        for a in range(np.uint64(loa[j]), np.uint64(hia[j])):
            va = Ja[j, a]
            if va != 0.0:
                for b in range(b0, b1):
                    out[a, b] += va * Jb[j, b]


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
    maxdim = 1
    for i in range(starts.shape[0]):
        maxdim = max(maxdim, dims[i])
    # Kept rows are packed at the front of these buffers (m of them at knot t).
    grad = np.empty(nr)
    rx = np.empty((nr, nx))
    ru = np.empty((nr, nu))
    Jx = np.empty((nr, nx))
    Ju = np.empty((nr, nu))
    lo_x = np.empty(nr, dtype=np.int64)
    hi_x = np.empty(nr, dtype=np.int64)
    lo_u = np.empty(nr, dtype=np.int64)
    hi_u = np.empty(nr, dtype=np.int64)
    g = np.empty(maxdim)
    F = np.empty((maxdim, maxdim))
    sensors = np.empty(ns, dtype=np.int64)
    for t in range(T):
        m = 0
        for i in range(starts.shape[0]):
            w = weights[i]
            if w == 0.0:
                continue
            a = starts[i]
            e = a + dims[i]
            code = codes[i]
            p = params[i]
            separable = SEPARABLE[code]
            sw = np.sqrt(w)
            m0 = m
            for j in range(a, e):
                # r_x, r_u of row j over the nonzeros of R_s (a residual reads few sensors),
                # gathered without branches. Inline, with plain indexing: a call or a view per
                # row costs more (reference counting) than the few multiply-adds it serves.
                n = 0
                for k in range(ns):
                    sensors[n] = k
                    n += Rs[t, j, k] != 0.0
                if n == 0:
                    rx[m, :] = 0.0
                    ru[m, :] = 0.0
                else:
                    k = sensors[0]  # the first sensor read: 0 + x = x, so assign
                    gk = Rs[t, j, k]
                    for c in range(nx):
                        rx[m, c] = gk * C[t, k, c]
                    for c in range(nu):
                        ru[m, c] = gk * D[t, k, c]
                    for q in range(1, n):
                        k = sensors[q]
                        gk = Rs[t, j, k]
                        for c in range(nx):
                            rx[m, c] += gk * C[t, k, c]
                        for c in range(nu):
                            ru[m, c] += gk * D[t, k, c]
                if not separable:  # a coupled norm whitens the term's rows together, below
                    m += 1
                    continue
                r = residual[t, j]
                if n == 0 and np.isfinite(r):
                    continue  # a zero row of r_x, r_u adds nothing (a non-finite r still must)
                grad[m], f = gauss_newton_row(code, r, p, w, sw)
                for c in range(nx):
                    Jx[m, c] = f * rx[m, c]
                for c in range(nu):
                    Ju[m, c] = f * ru[m, c]
                m += 1
            if not separable:  # F mixes the rows: all kept, also those that read no sensor
                gauss_newton_rows(code, residual, t, a, e, p, w, sw, rx, ru, m0, grad, Jx, Ju,
                                  g, F)
        # ℓ_x = r_xᵀ g, ℓ_u = r_uᵀ g
        lxt = lx[t]
        lut = lu[t]
        lxt[:] = 0.0
        lut[:] = 0.0
        for j in range(m):
            gj = grad[j]
            for c in range(nx):
                lxt[c] += gj * rx[j, c]
            for c in range(nu):
                lut[c] += gj * ru[j, c]
        # ℓ_xx = J̃_xᵀ J̃_x, ℓ_uu = J̃_uᵀ J̃_u, ℓ_ux = J̃_uᵀ J̃_x: sparse or dense (BLAS)
        work_x = _spans(Jx, m, lo_x, hi_x)
        work_u = _spans(Ju, m, lo_u, hi_u)
        work_ux = 0
        for j in range(m):
            work_ux += (hi_u[j] - lo_u[j]) * (hi_x[j] - lo_x[j])
        if m == 0 or SPARSE_RATIO * work_x <= m * nx * nx:
            _sparse_gram(Jx, m, lo_x, hi_x, lxx[t])
        else:
            np.dot(Jx[:m].T, Jx[:m], lxx[t])
        if m == 0 or SPARSE_RATIO * work_u <= m * nu * nu:
            _sparse_gram(Ju, m, lo_u, hi_u, luu[t])
        else:
            np.dot(Ju[:m].T, Ju[:m], luu[t])
        if m == 0 or SPARSE_RATIO * work_ux <= m * nu * nx:
            _sparse_product(Ju, lo_u, hi_u, Jx, lo_x, hi_x, m, lux[t])
        else:
            np.dot(Ju[:m].T, Jx[:m], lux[t])
