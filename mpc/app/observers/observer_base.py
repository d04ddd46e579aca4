"""What a run tells the things that watch it: the recorder, the dashboard, the viewer, telemetry.

The session feeds every :class:`Observer` with reports it builds itself, so an observer never
reaches into the session, the planner or the plant while they run:

- :meth:`Observer.on_plan` after every planner iteration (planner thread);
- :meth:`Observer.on_state` at ``output.record_rate`` of plant time (the loop's thread);
- :meth:`Observer.tick` about every 50 ms of wall time in the run's main thread (a dashboard
  redraws, a viewer syncs); returning False ends the run;
- :meth:`Observer.close` once with the run's summary.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from common.trajectory import Trajectory
from mpc.app.plants.plant_base import PlantState
from mpc.planner.planner_base import IterationStats


@dataclass(frozen=True)
class PlanReport:
    """One planner iteration and the run's counters right after it."""

    stats: IterationStats
    #: The iteration's nominal trajectory (a fresh copy per iteration; None before the first).
    nominal: Trajectory | None
    #: Wall time since the run started (s).
    wall_time: float
    iterations: int
    feedback_steps: int
    #: Age of the policy the feedback law last followed (s).
    policy_age: float
    #: The task's goal (xy) during the iteration, or None for a task without one.
    goal: np.ndarray | None = None


@dataclass(frozen=True)
class StateReport:
    """A sample of the plant's state with the control in force and the feet in contact."""

    time: float
    qpos: np.ndarray
    qvel: np.ndarray
    ctrl: np.ndarray
    contacts: np.ndarray
    #: Wall time since the run started (s).
    wall_time: float | None = None
    #: Feedback steps so far.
    feedback_steps: int | None = None
    #: Feet the task's gait schedule puts on the ground, or None for a task without one.
    planned_contacts: np.ndarray | None = None
    #: The plant's actuator forces (planning-model order), or None if it cannot tell.
    actuator_force: np.ndarray | None = None
    #: The velocity command (v_x, v_y, ω_z) tracked at this time (velocity mode), else None.
    command: np.ndarray | None = None


@dataclass(frozen=True)
class Status:
    """The run as it stands, for observers that show it live."""

    state: PlantState
    iterations: int
    feedback_steps: int
    policy_age: float
    last: IterationStats | None
    nominal: Trajectory | None
    goal_distance: float
    #: Feet in contact (task foot order), or None when the plant cannot tell.
    contacts: np.ndarray | None
    #: Why the run is stopping (a fall, a trip, an expired policy), or None.
    stopped: str | None
    #: The derivative audit: (checks, last relative error, worst, disagreements), or None.
    audit: tuple[int, float, float, int] | None = None
    #: The velocity command (v_x, v_y, ω_z) tracked (velocity mode), else None.
    command: np.ndarray | None = None


class Observer:
    """Watches a run; every hook is optional."""

    def on_plan(self, report: PlanReport) -> None:
        """After each planner iteration (planner thread: keep it short)."""

    def on_state(self, report: StateReport) -> None:
        """At the recording rate of plant time."""

    def tick(self, status: Status) -> bool:
        """About every 50 ms of wall time, in the main thread; False ends the run."""
        return True

    def close(self, summary: dict) -> None:
        """Once, when the run has ended."""
