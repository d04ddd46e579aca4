"""The weighted terms of the stage cost for many residual vectors in one compiled call.

For each row k of the residuals R (K, nr) and term i (rows starts[i] : starts[i] + dims[i],
norm code codes[i] of :data:`mpc.norms.gauss_newton.NORM_CODES`, parameter pᵢ, weight wᵢ):

    out[k, i] = wᵢ nᵢ(R[k, rᵢ])

with the norms of :mod:`mpc.norms` (quadratic ½ rᵀr, l2 √(rᵀr + p²) − p, smooth-abs
Σⱼ √(rⱼ² + p²) − p). The planner evaluates every rollout this way: in numpy the same is a
handful of array operations per term, whose call overhead exceeds the arithmetic.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def term_costs(residual, starts, dims, codes, params, weights, out):
    """Fill out (K, nterms) from residual (K, nr)."""
    for k in range(residual.shape[0]):
        for i in range(starts.shape[0]):
            a = starts[i]
            e = a + dims[i]
            p = params[i]
            acc = 0.0
            if codes[i] == 0:  # quadratic
                for j in range(a, e):
                    acc += residual[k, j] * residual[k, j]
                acc *= 0.5
            elif codes[i] == 1:  # l2
                for j in range(a, e):
                    acc += residual[k, j] * residual[k, j]
                acc = np.sqrt(acc + p * p) - p
            else:  # smooth_abs
                for j in range(a, e):
                    acc += np.sqrt(residual[k, j] * residual[k, j] + p * p) - p
            out[k, i] = weights[i] * acc
