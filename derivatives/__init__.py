"""Derivative providers: the linearization of one MuJoCo step, by name.

``make_provider(name, model, **options).transition(data) -> (A, B)`` in the conventions of
``mujoco.mjd_transitionFD``; ``fd_evaluations()`` counts finite-difference evaluations.
"""

from derivatives.counter import fd_evaluations
from derivatives.provider_base import DerivativeProvider, Linearization
from derivatives.registry import UnknownBackendError, available, make_provider, register

__all__ = [
    "DerivativeProvider",
    "Linearization",
    "UnknownBackendError",
    "available",
    "fd_evaluations",
    "make_provider",
    "register",
]
