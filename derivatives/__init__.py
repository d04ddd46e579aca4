"""Derivative providers: the linearization of one MuJoCo step, by name.

``make_provider(name, model, **options).transition(data) -> (A, B)`` in the conventions of
``mujoco.mjd_transitionFD``; ``fd_evaluations()`` counts finite-difference evaluations and
``fallbacks()`` the analytic backend's knots linearized by them, by reason.
"""

from derivatives.counter import fallbacks, fd_evaluations
from derivatives.provider_base import DerivativeProvider, Linearization
from derivatives.registry import BACKENDS, make_provider

__all__ = [
    "BACKENDS",
    "DerivativeProvider",
    "Linearization",
    "fallbacks",
    "fd_evaluations",
    "make_provider",
]
