"""Tasks by name (``task.name`` in a config). Writing a new one: ``docs/tasks.md``; a variant
that changes what the residual computes is a task of its own here, one that changes a number
an option of its task."""

from __future__ import annotations

from common.registry import Registry
from mpc.tasks.task_base import CostTerm, Task

TASKS: Registry[Task] = Registry("task", {
    "quadruped_flat": "mpc.tasks.quadruped:QuadrupedFlat",
    "quadruped_biped": "mpc.tasks.quadruped_biped:QuadrupedBiped",
    "humanoid_flat": "mpc.tasks.humanoid:HumanoidFlat",
    "turn_then_walk": "mpc.tasks.examples.turn_then_walk:TurnThenWalk",
    "joint_excitation": "mpc.tasks.excitation:JointExcitation",
})

__all__ = ["TASKS", "CostTerm", "Task", "make_task"]


def make_task(name: str, robot, **params) -> Task:
    """Build task ``name`` for ``robot`` (a :class:`robots.RobotInfo`)."""
    return TASKS.get(name)(robot, **params)
