"""Tasks by name."""

from __future__ import annotations

from mpc.tasks.humanoid import HumanoidFlat
from mpc.tasks.quadruped import QuadrupedFlat
from mpc.tasks.quadruped_biped import QuadrupedBiped
from mpc.tasks.task_base import CostTerm, Task

TASKS: dict[str, type[Task]] = {
    QuadrupedFlat.name: QuadrupedFlat,
    QuadrupedBiped.name: QuadrupedBiped,
    HumanoidFlat.name: HumanoidFlat,
}

__all__ = ["TASKS", "CostTerm", "Task", "make_task"]


def make_task(name: str, robot, **params) -> Task:
    """Build task ``name`` for ``robot`` (a :class:`robots.RobotInfo`)."""
    try:
        cls = TASKS[name]
    except KeyError:
        raise ValueError(f"unknown task {name!r}; available: {', '.join(sorted(TASKS))}") from None
    return cls(robot, **params)
