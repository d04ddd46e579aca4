"""Process-wide count of finite-difference evaluations that entered a returned Jacobian.

One evaluation is one simulation (or one residual evaluation) run only to build a difference
quotient. The analytic backend must leave the count at zero; that is how it is proven.
"""

from __future__ import annotations

import threading

_lock = threading.Lock()
_count = 0


def add_fd_evaluations(n: int) -> None:
    """Record ``n`` finite-difference evaluations."""
    global _count
    with _lock:
        _count += int(n)


def fd_evaluations() -> int:
    """Finite-difference evaluations recorded in this process so far."""
    return _count
