"""Box-constrained QP by projected Newton (Tassa, Mansard, Todorov, ICRA 2014).

    minimize ½ xᵀHx + gᵀx   subject to   lower ≤ x ≤ upper

Each iteration fixes the clamped set (at a bound with the gradient pointing outward), takes a
Newton step on the free variables and an Armijo line search along the projected path.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mpc.planner.kernels.linalg import cholesky, cholesky_solve

NOT_PD = -1
NO_DESCENT = 0
MAX_ITER = 1
MAX_LINESEARCH = 2
SMALL_IMPROVEMENT = 4
SMALL_GRADIENT = 5
ALL_CLAMPED = 6


@njit(cache=True, nogil=True)
def _value(H, g, x):
    return x @ g + 0.5 * (x @ (H @ x))


@njit(cache=True, nogil=True)
def _clamp(x, lower, upper, out):
    for i in range(x.shape[0]):
        out[i] = min(max(x[i], lower[i]), upper[i])


@njit(cache=True, nogil=True)
def boxqp(H, g, lower, upper, x0, x, free, L):
    """Solve the box QP from the start x0; writes x, the free mask and the Cholesky factor L of
    H restricted to the free set (in its leading ``nfree`` block). Returns (status, nfree)."""
    n = g.shape[0]
    _clamp(x0, lower, upper, x)
    value = _value(H, g, x)
    clamped = np.zeros(n, dtype=np.bool_)
    old_clamped = np.zeros(n, dtype=np.bool_)
    grad = np.empty(n)
    search = np.empty(n)
    xc = np.empty(n)
    nfree = n
    old_value = 0.0
    status = MAX_ITER
    for it in range(100):
        if it > 0 and (old_value - value) < 1e-8 * abs(old_value):
            status = SMALL_IMPROVEMENT
            break
        old_value = value
        grad[:] = g + H @ x
        old_clamped[:] = clamped
        nfree = 0
        for i in range(n):
            clamped[i] = (x[i] == lower[i] and grad[i] > 0) or (x[i] == upper[i] and grad[i] < 0)
            free[i] = not clamped[i]
            if free[i]:
                nfree += 1
        if nfree == 0:
            status = ALL_CLAMPED
            break
        changed = it == 0
        for i in range(n):
            if clamped[i] != old_clamped[i]:
                changed = True
        idx = np.nonzero(free)[0]
        if changed:
            Hf = np.empty((nfree, nfree))
            for a in range(nfree):
                for b in range(nfree):
                    Hf[a, b] = H[idx[a], idx[b]]
            if not cholesky(Hf, L[:nfree, :nfree]):
                return NOT_PD, nfree
        gnorm = 0.0
        for a in range(nfree):
            gnorm += grad[idx[a]] ** 2
        if np.sqrt(gnorm) < 1e-8:
            status = SMALL_GRADIENT
            break
        # Newton step on the free set, with the clamped variables held at their bounds.
        xcl = np.where(clamped, x, 0.0)
        gcl = g + H @ xcl
        rhs = np.empty(nfree)
        for a in range(nfree):
            rhs[a] = gcl[idx[a]]
        cholesky_solve(L[:nfree, :nfree], rhs)
        search[:] = 0.0
        for a in range(nfree):
            search[idx[a]] = -rhs[a] - x[idx[a]]
        sdotg = search @ grad
        if sdotg >= 0:
            status = NO_DESCENT
            break
        step = 1.0
        _clamp(x + step * search, lower, upper, xc)
        vc = _value(H, g, xc)
        failed = False
        while (vc - value) / (step * sdotg) < 0.1:
            step *= 0.6
            _clamp(x + step * search, lower, upper, xc)
            vc = _value(H, g, xc)
            if step < 1e-22:
                failed = True
                break
        if failed:
            status = MAX_LINESEARCH
            break
        x[:] = xc
        value = vc
    return status, nfree
