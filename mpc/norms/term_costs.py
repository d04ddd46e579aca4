"""The weighted terms of the stage cost for many residual vectors in one compiled call.

For each row k of the residuals R (K, nr) and term i (rows starts[i] : starts[i] + dims[i],
norm code codes[i] of :data:`mpc.norms.CODES`, parameter pᵢ, weight wᵢ):

    out[k, i] = wᵢ nᵢ(R[k, rᵢ])

with the norms' ``value`` (:mod:`mpc.norms`). The planner evaluates every rollout this way: in
numpy the same is a handful of array operations per term, whose call overhead exceeds the
arithmetic.
"""

from __future__ import annotations

from numba import njit

from mpc.norms.dispatch import value


@njit(cache=True, nogil=True)
def term_costs(residual, starts, dims, codes, params, weights, out):
    """Fill out (K, nterms) from residual (K, nr)."""
    for k in range(residual.shape[0]):
        for i in range(starts.shape[0]):
            a = starts[i]
            e = a + dims[i]
            p = params[i]
            acc = value(codes[i], residual, k, a, e, p)
            out[k, i] = weights[i] * acc
