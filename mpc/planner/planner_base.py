"""The planner interface used by the runtime loops."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np

from mpc.planner.policy import Policy

#: The phases of one iteration, as keys of :attr:`IterationStats.timings` (in order).
PHASES = ("nominal", "derivatives", "cost_derivatives", "backward", "linesearch", "total")


@dataclass
class IterationStats:
    """What one planner iteration did, for the dashboard, the logs and the benchmarks."""

    iteration: int
    time: float
    #: "ok", or why the iteration was discarded (the previous policy stays).
    status: str
    #: Mean stage cost of the nominal (warm start) and of the new plan.
    cost_nominal: float = np.nan
    cost: float = np.nan
    #: Stage cost at the measured state, per term and total.
    term_costs: np.ndarray = field(default_factory=lambda: np.zeros(0))
    stage_cost: float = np.nan
    alpha: float = 0.0
    mu: float = 0.0
    expected: float = 0.0
    #: Milliseconds per phase (:data:`PHASES`).
    timings: dict[str, float] = field(default_factory=dict)
    #: Finite-difference simulations spent on model derivatives (0 for analytic).
    simulations: int = 0


class Planner(ABC):
    """Produces a :class:`Policy` from a measured state, one iteration at a time."""

    policy: Policy

    @abstractmethod
    def reset(self, time: float, qpos: np.ndarray, qvel: np.ndarray, act: np.ndarray) -> None:
        """Start over from the given state with the initial (hold) policy."""

    @abstractmethod
    def iterate(self, time: float, qpos: np.ndarray, qvel: np.ndarray,
                act: np.ndarray) -> IterationStats:
        """Improve the plan from the measured state; publishes ``self.policy`` on success."""

    def close(self) -> None:  # noqa: B027
        """Stop worker threads."""
