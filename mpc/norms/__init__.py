"""The norms of the cost terms: one module per norm, and the table that registers them.

A task's stage cost is Σᵢ wᵢ nᵢ(rᵢ) over its terms (residual slice rᵢ, norm nᵢ with parameter
pᵢ, weight wᵢ). Each norm module states its value n(r), gradient n'(r), Hessian n''(r) and a
factor F of it, n'' = F Fᵀ (the Gauss-Newton whitening), and holds their compiled forms, which
the two kernels inline by the term's norm code (:mod:`mpc.norms.dispatch`):

* ``SEPARABLE``: whether n'' is diagonal, so that each row is whitened on its own;
* ``value(residual, k, a, e, p)``: n(r) of r = residual[k, a:e], for the stage-cost kernel
  (:mod:`mpc.norms.term_costs`);
* for the Gauss-Newton kernel (:mod:`mpc.norms.gauss_newton`), the gradient rows w n'(r) and
  the whitening of the Jacobians, J̃ = √w Fᵀ r_x (likewise for u): a separable norm gives them
  row by row, ``gauss_newton_row(r, p, w, sw)`` -> (w n'ⱼ, √w Fⱼⱼ), the kernel scaling the row's
  Jacobians; a coupled norm (F mixes its rows) for the whole term, ``gauss_newton_rows(residual,
  t, a, e, p, w, sw, rx, ru, m0, grad, Jx, Ju, g, F)``.

:data:`NORMS` registers the norms: a new norm is a module with these names, a line in the table, its
branch in :mod:`mpc.norms.dispatch` and its numpy oracle in the tests. numba's disk cache is keyed
on a kernel's own file, not on the norm modules it inlines: after editing a norm or the table,
delete ``mpc/norms/__pycache__`` or the kernels keep the old code.
"""

from __future__ import annotations

from types import ModuleType

from mpc.norms import l2, quadratic, smooth_abs

#: The norms by name; a norm's code, on which the kernels dispatch, is its position here.
NORMS: dict[str, ModuleType] = {
    "quadratic": quadratic,
    "l2": l2,
    "smooth_abs": smooth_abs,
}

#: Norm name -> code.
CODES: dict[str, int] = {name: code for code, name in enumerate(NORMS)}
