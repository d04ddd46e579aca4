"""Exact closed-form derivatives of one MuJoCo step (numba), contacts included.

Modules follow MuJoCo's pipeline stages; every stage kernel takes the model and the data
bundles of :mod:`.bundles`:

* :mod:`.rnea`: inverse dynamics and its configuration/velocity derivatives;
* :mod:`.passive` and :mod:`.actuation`: passive and actuator force derivatives;
* :mod:`.constraint`: constraint states, Hessian, impedance and reference-acceleration terms;
* :mod:`.contact_jacobian`: configuration derivatives of contact Jacobians;
* :mod:`.step`: the implicit-function-theorem solve and the discrete (integrator) Jacobians;
* :mod:`.sensor`: sensor Jacobians (the raw material of residual Jacobians);
* :mod:`.gate`: which models and contacts are covered;
* :mod:`.bundles`: the model, data and constraint bundles the stage kernels take;
* :mod:`.knot`: all stages of one knot in one compiled call;
* :mod:`.horizon`: the knots of a horizon, forward passes included, in one compiled call;
* :mod:`.provider`: the ``analytic`` backend.

Reference states and the finite-difference oracle the tests and the benchmark verify it against
are test code, in ``tests/analytic_verify.py``.

All kernels are numba functions with ``cache=True``. numba's disk cache is keyed on the file of
the function itself, not on the functions it calls from other files: after editing a kernel,
delete ``derivatives/analytic/__pycache__`` or callers in other modules keep the old code.
"""

from derivatives.analytic.provider import AnalyticFallbackWarning, AnalyticProvider

__all__ = ["AnalyticFallbackWarning", "AnalyticProvider"]
