"""Derivative backends by name.

Backends are imported on first use, so choosing ``fd`` never compiles another backend's kernels.
"""

from __future__ import annotations

import importlib

import mujoco

from derivatives.provider_base import DerivativeProvider

#: name -> "module:Class"
_BACKENDS: dict[str, str] = {
    "fd": "derivatives.fd:FDProvider",
    "analytic": "derivatives.analytic:AnalyticProvider",
    "wasp": "derivatives.wasp:WaspProvider",
}


class UnknownBackendError(ValueError):
    """Raised for a backend name that is not registered."""


def register(name: str, target: str) -> None:
    """Register a backend class given as ``"module:Class"``."""
    _BACKENDS[name] = target


def available() -> list[str]:
    """Registered backend names."""
    return sorted(_BACKENDS)


def provider_class(name: str) -> type[DerivativeProvider]:
    try:
        target = _BACKENDS[name]
    except KeyError:
        raise UnknownBackendError(
            f"unknown derivative backend {name!r}; available: {', '.join(available())}"
        ) from None
    module, cls = target.split(":")
    return getattr(importlib.import_module(module), cls)


def make_provider(name: str, model: mujoco.MjModel, **options) -> DerivativeProvider:
    """Build backend ``name`` for ``model`` with backend-specific ``options``."""
    return provider_class(name)(model, **options)
