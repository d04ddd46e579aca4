"""The compiled functions of the norms in :data:`mpc.norms.NORMS`, selected by norm code, as the
kernels call them: ``value(code, ...)`` and ``gauss_newton_rows(code, ...)`` take the norm
modules' arguments after the code, and :data:`SEPARABLE` is indexed by code.

numba can neither index a list of functions at run time nor inline a call made through
``*args``, so each selector is a chain of code tests built from the table, one closure per norm,
all with ``inline="always"``: numba splices the chain and the norms' own functions into the
kernel, which pays no call per term (a call costs more, in reference counting of its array
arguments, than the arithmetic it serves).
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import numpy as np
from numba import njit

from mpc.norms import NORMS


def _values(norms: list[ModuleType]) -> Callable:
    """value(c, residual, k, a, e, p) = norms[c].value(residual, k, a, e, p) (the codes that
    the list does not reach select its first norm)."""
    *head, last = norms
    f = last.value
    if not head:
        @njit(inline="always")
        def first(c, residual, k, a, e, p):
            return f(residual, k, a, e, p)
        return first
    code, rest = len(head), _values(head)

    @njit(inline="always")
    def select(c, residual, k, a, e, p):
        if c == code:
            return f(residual, k, a, e, p)
        return rest(c, residual, k, a, e, p)
    return select


def _gauss_newton_rows(norms: list[ModuleType]) -> Callable:
    """gauss_newton_rows(c, ...) = norms[c].gauss_newton_rows(...), as :func:`_values`."""
    *head, last = norms
    f = last.gauss_newton_rows
    if not head:
        @njit(inline="always")
        def first(c, residual, t, rows, m0, m, a, e, p, w, rx, ru, grad, Jx, Ju, g, F):
            f(residual, t, rows, m0, m, a, e, p, w, rx, ru, grad, Jx, Ju, g, F)
        return first
    code, rest = len(head), _gauss_newton_rows(head)

    @njit(inline="always")
    def select(c, residual, t, rows, m0, m, a, e, p, w, rx, ru, grad, Jx, Ju, g, F):
        if c == code:
            f(residual, t, rows, m0, m, a, e, p, w, rx, ru, grad, Jx, Ju, g, F)
        else:
            rest(c, residual, t, rows, m0, m, a, e, p, w, rx, ru, grad, Jx, Ju, g, F)
    return select


#: Whether each norm (by code) is separable: its n'' diagonal.
SEPARABLE = np.array([norm.SEPARABLE for norm in NORMS.values()])

#: The term's norm value n(residual[k, a:e]) (see the norm modules' ``value``).
value = _values(list(NORMS.values()))

#: The term's gradient and whitened Jacobian rows (see the norm modules' ``gauss_newton_rows``).
gauss_newton_rows = _gauss_newton_rows(list(NORMS.values()))
