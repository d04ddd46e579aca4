"""The compiled functions of the norms in :data:`mpc.norms.NORMS`, selected by norm code, as the
kernels call them: each selector takes the code and then the norm function's own arguments.

* ``value(code, residual, k, a, e, p)``: every norm's ``value``;
* ``gauss_newton_row(code, r, p, w, sw)``: a separable norm's ``gauss_newton_row``;
* ``gauss_newton_rows(code, residual, t, a, e, p, w, sw, rx, ru, m0, grad, Jx, Ju, g, F)``: a
  coupled norm's ``gauss_newton_rows``;
* :data:`SEPARABLE`: whether the norm of each code is separable.

numba can neither index a list of functions at run time nor inline a call made through
``*args``, so each selector is an if-chain over the codes, written out from the table for the
function's own parameters and compiled with ``inline="always"``: numba splices the chain and
the norms' functions into the kernel, which pays no call per term or row (a call costs more, in
reference counting of its array arguments, than the arithmetic it serves).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import njit

from mpc.norms import NORMS


def _select(function: str, params: str, codes: list[int]) -> Callable:
    """``select(code, <params>)`` = ``NORMS[code].<function>(<params>)`` for the norms of
    ``codes`` (the last of them for any other code), inlined where it is called. The source
    reads, for codes [0, 2]::

        def select(code, r, p, w, sw):
            if code == 0:
                out = norm_0(r, p, w, sw)
            else:
                out = norm_2(r, p, w, sw)
            return out
    """
    norms = list(NORMS.values())
    namespace = {f"norm_{c}": getattr(norms[c], function) for c in codes}
    body = [f"out = norm_{c}({params})" for c in codes]
    if len(codes) > 1:
        tests = ([f"if code == {codes[0]}:"] + [f"elif code == {c}:" for c in codes[1:-1]]
                 + ["else:"])
        body = [f"{test}\n        {call}" for test, call in zip(tests, body, strict=True)]
    body = [*body, "return out"] if codes else ["pass"]
    exec(f"def select(code, {params}):\n" + "".join(f"    {line}\n" for line in body), namespace)
    return njit(inline="always")(namespace["select"])


#: Whether the norm of each code is separable (n'' diagonal).
SEPARABLE = np.array([norm.SEPARABLE for norm in NORMS.values()])

value = _select("value", "residual, k, a, e, p", list(range(len(NORMS))))
gauss_newton_row = _select("gauss_newton_row", "r, p, w, sw",
                           [c for c, separable in enumerate(SEPARABLE) if separable])
gauss_newton_rows = _select(
    "gauss_newton_rows", "residual, t, a, e, p, w, sw, rx, ru, m0, grad, Jx, Ju, g, F",
    [c for c, separable in enumerate(SEPARABLE) if not separable])
