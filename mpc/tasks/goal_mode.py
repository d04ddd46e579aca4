"""Goal mode: a task walks through waypoints in stages.

A goal-mode plan is a list of :class:`Stage` s, made at the first plan by
:meth:`GoalMode.make_stages` (the start is known then): by default an optional hold
(``hold_time`` seconds where the base started), then one stage per waypoint, each over when the
base's xy is within ``waypoint_tolerance`` of it,

    stage k ends at the first plan time t with  ‖p_xy(t) − g_k‖ < tolerance   (k < last),

and the last never ends. A task sequences other behaviour (turn first, then walk) by returning
its own stages. The goal a task's position term pulls to is the current stage's, or where the
base stood when a stage without a goal began.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass
class Stage:
    """A stretch of a goal-mode plan: the base goes to ``goal`` (world xy; None: stays where
    it was when the stage began) facing ``heading`` (radians, for a task with a heading term;
    None: the task's own :attr:`LeggedTask.heading`) until ``done(time, qpos)`` holds (None:
    the stage never ends). Only the last stage may never end."""

    name: str
    goal: np.ndarray | None = None
    heading: float | None = None
    done: Callable[[float, np.ndarray], bool] | None = None

    def __post_init__(self) -> None:
        if self.goal is not None and not isinstance(self.goal, np.ndarray):
            self.goal = np.array(self.goal, dtype=float)  # an array (a view stays a view)


class GoalMode:
    """What a task with a goal mode adds to :class:`~mpc.tasks.task_base.Task`: its
    ``waypoints`` (n, 2), ``hold_time`` and ``waypoint_tolerance``, the ``stages``
    (None until the first plan), the current ``stage_index`` and the ``stage_start``. The
    task sets them in its ``__init__`` and calls :meth:`advance_stages` once per plan."""

    name: str
    velocity_mode: bool
    waypoints: np.ndarray
    hold_time: float
    waypoint_tolerance: float
    stages: list[Stage] | None
    stage_index: int
    stage_start: np.ndarray | None

    def make_stages(self, time: float, qpos: np.ndarray) -> list[Stage]:
        """The goal-mode plan, made at the first update (``qpos`` the start): hold the start
        position until ``hold_time`` if it is positive, then one stage per waypoint, each
        over when the base is within ``waypoint_tolerance`` of it (the last: never)."""
        stages = []
        if self.hold_time > 0.0:
            stages.append(Stage("hold", done=lambda t, q: t >= self.hold_time))
        last = len(self.waypoints) - 1
        for i, goal in enumerate(self.waypoints):  # views: set_goal moves them
            stages.append(Stage(f"waypoint {i}", goal,
                                done=None if i == last else self.reached(goal)))
        return stages

    def reached(self, goal: np.ndarray) -> Callable[[float, np.ndarray], bool]:
        """A stage end: the base within ``waypoint_tolerance`` of ``goal`` (xy)."""
        return lambda t, q: bool(np.linalg.norm(q[:2] - goal) < self.waypoint_tolerance)

    @property
    def stage(self) -> Stage | None:
        """The current goal-mode stage (None before the first update and in velocity mode)."""
        return None if self.stages is None else self.stages[self.stage_index]

    def _begin(self, index: int, qpos: np.ndarray) -> None:
        self.stage_index = index
        self.stage_start = np.array(qpos[:2], dtype=float)

    @property
    def goal(self) -> np.ndarray | None:
        if self.velocity_mode:
            return None
        stage = self.stage
        if stage is None:
            return self.waypoints[0]
        return self.stage_start if stage.goal is None else stage.goal

    def set_goal(self, xy) -> None:
        """Move the goal (the viewer's drag): the stages before the first one at or after the
        current one that has a goal end now, and that goal moves to ``xy``."""
        if self.velocity_mode:
            raise NotImplementedError("velocity mode has no goal")
        xy = np.asarray(xy, dtype=float)[:2]
        if self.stages is None:
            self.waypoints[0] = xy
            return
        later = [i for i in range(self.stage_index, len(self.stages))
                 if self.stages[i].goal is not None]
        if later:
            self.stage_index = later[0]
            self.stages[later[0]].goal[:] = xy
        else:
            self.stages[self.stage_index].goal = xy.copy()

    def advance_stages(self, time: float, qpos: np.ndarray) -> None:
        """At a plan: make the stages at the first (``qpos`` the start), then each stage that
        is done gives way to the next."""
        if self.stages is None:
            self.stages = self.make_stages(time, qpos)
            if not self.stages or self.stages[-1].done is not None:
                raise ValueError(f"{self.name}: the last stage must never end")
            self._begin(0, qpos)
        while (self.stage_index < len(self.stages) - 1
               and self.stages[self.stage_index].done(time, qpos)):
            self._begin(self.stage_index + 1, qpos)


def as_waypoints(goal) -> np.ndarray:
    """A goal [x, y] or a list of waypoints [[x, y], ...] as an (n, 2) array."""
    a = np.asarray(goal, dtype=float)
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2 or a.shape[1] != 2 or a.shape[0] == 0:
        raise ValueError(f"goal must be [x, y] or a list of [x, y] waypoints, got {goal!r}")
    return a.copy()


def final_goal(task: dict, default=(0.0, 0.0)) -> np.ndarray:
    """Where a goal-mode run of a config's ``task`` section ends (xy, relative to the start):
    its goal, the last waypoint where it has several (the stairs configs: up a flight and down
    again), ``default`` where it names none. What an evaluation judges a run by."""
    return as_waypoints(task.get("goal", default))[-1]
