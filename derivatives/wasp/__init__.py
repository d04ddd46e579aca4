"""WASP derivative backend (Web of Affine Spaces; Rakita et al. 2025, as used in MuJoCo MPC).

Approximate transition and sensor Jacobians that reuse, at each horizon index, the directional
derivatives (JVPs) measured in earlier planner iterations, and measure fresh ones only until a
cached prediction agrees with a fresh measurement. Modules: :mod:`.basis` (directions and
per-block JVP budgets), :mod:`.update` (the rank-one estimate update and the agreement test),
:mod:`.cache` (per-knot memory that shifts with the horizon), :mod:`.kernel` (compiled JVPs
through MuJoCo) and :mod:`.provider` (the backend).
"""

from derivatives.wasp.provider import WaspProvider

__all__ = ["WaspProvider"]
