"""Derivative backends by name.

Backends are imported on first use, so choosing ``fd`` never compiles another backend's kernels.
"""

from __future__ import annotations

import mujoco

from common.registry import Registry
from derivatives.provider_base import DerivativeProvider

BACKENDS: Registry[DerivativeProvider] = Registry("derivative backend", {
    "fd": "derivatives.fd:FDProvider",
    "analytic": "derivatives.analytic:AnalyticProvider",
    "wasp": "derivatives.wasp:WaspProvider",
})


def make_provider(name: str, model: mujoco.MjModel, **options) -> DerivativeProvider:
    """Build backend ``name`` for ``model`` with backend-specific ``options``."""
    return BACKENDS.get(name)(model, **options)
