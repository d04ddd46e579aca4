"""The compiled functions of the norms in :data:`mpc.norms.NORMS`, selected by norm code, as the
kernels call them: each selector takes the code and then the norm function's own arguments.

* ``value(code, residual, k, a, e, p)``: every norm's ``value``;
* ``gauss_newton_row(code, r, p, w, sw)``: a separable norm's ``gauss_newton_row``;
* ``gauss_newton_rows(code, residual, t, a, e, p, w, sw, rx, ru, m0, grad, Jx, Ju, g, F)``: a
  coupled norm's ``gauss_newton_rows``;
* :data:`SEPARABLE`: whether the norm of each code is separable.

numba can neither index a list of functions at run time nor inline a call made through
``*args``, so each selector is an if-chain over the codes, compiled with ``inline="always"``:
numba splices the chain and the norms' functions into the kernel, which pays no call per term or
row (a call costs more, in reference counting of its array arguments, than the arithmetic it
serves). A norm added to the table gets its branch here; ``tests/mpc/norms/test_norms.py``
runs every norm of the table through both kernels, so a missing branch fails there.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mpc.norms import CODES, NORMS, l2, quadratic, smooth_abs

QUADRATIC, L2, SMOOTH_ABS = CODES["quadratic"], CODES["l2"], CODES["smooth_abs"]

#: Whether the norm of each code is separable (n'' diagonal).
SEPARABLE = np.array([norm.SEPARABLE for norm in NORMS.values()])


@njit(inline="always")
def value(code, residual, k, a, e, p):
    if code == QUADRATIC:
        return quadratic.value(residual, k, a, e, p)
    if code == L2:
        return l2.value(residual, k, a, e, p)
    return smooth_abs.value(residual, k, a, e, p)


@njit(inline="always")
def gauss_newton_row(code, r, p, w, sw):
    if code == QUADRATIC:
        return quadratic.gauss_newton_row(r, p, w, sw)
    return smooth_abs.gauss_newton_row(r, p, w, sw)


@njit(inline="always")
def gauss_newton_rows(code, residual, t, a, e, p, w, sw, rx, ru, m0, grad, Jx, Ju, g, F):
    # l2 is the only coupled norm
    l2.gauss_newton_rows(residual, t, a, e, p, w, sw, rx, ru, m0, grad, Jx, Ju, g, F)
