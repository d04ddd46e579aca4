"""Derivative providers: the linearization of one MuJoCo step, by name.

``make_provider(name, model, **options).transition(data) -> (A, B)`` in the conventions of
``mujoco.mjd_transitionFD``; ``fd_evaluations()`` counts finite-difference evaluations.
"""

from derivatives.counter import fd_evaluations
from derivatives.provider_base import DerivativeProvider, Linearization
from derivatives.registry import BACKENDS, make_provider

__all__ = [
    "BACKENDS",
    "DerivativeProvider",
    "Linearization",
    "fd_evaluations",
    "make_provider",
]
