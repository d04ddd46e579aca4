"""Process-wide count of finite-difference evaluations that entered a returned Jacobian, and of
the analytic backend's fallbacks to them by reason.

One evaluation is one simulation (or one residual evaluation) run only to build a difference
quotient. The analytic backend must leave the count at zero; that is how it is proven. Where it
cannot (see :mod:`derivatives.analytic.provider`), each knot it hands to finite differences is
recorded under its reason, with the evaluations it cost.
"""

from __future__ import annotations

import threading

_lock = threading.Lock()
_count = 0
_fallbacks: dict[str, list[int]] = {}


def add_fd_evaluations(n: int) -> None:
    """Record ``n`` finite-difference evaluations."""
    global _count
    with _lock:
        _count += int(n)


def fd_evaluations() -> int:
    """Finite-difference evaluations recorded in this process so far."""
    return _count


def record_fallback(reason: str, knots: int, evaluations: int) -> int:
    """Record ``knots`` knots linearized by finite differences for ``reason`` at the cost of
    ``evaluations`` (which the caller also adds to :func:`fd_evaluations`); returns the knots
    recorded for that reason so far."""
    with _lock:
        entry = _fallbacks.setdefault(reason, [0, 0])
        entry[0] += int(knots)
        entry[1] += int(evaluations)
        return entry[0]


def fallbacks() -> dict[str, dict[str, int]]:
    """Knots and evaluations recorded by :func:`record_fallback` so far, by reason."""
    with _lock:
        return {reason: {"knots": k, "fd_evaluations": e} for reason, (k, e) in _fallbacks.items()}


def fallbacks_since(start: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    """:func:`fallbacks` minus an earlier snapshot ``start`` (reasons with new knots only)."""
    out = {}
    for reason, now in fallbacks().items():
        before = start.get(reason, {"knots": 0, "fd_evaluations": 0})
        if now["knots"] > before["knots"]:
            out[reason] = {k: now[k] - before[k] for k in now}
    return out
