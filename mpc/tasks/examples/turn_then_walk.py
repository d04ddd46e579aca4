"""Turn in place to face a heading, then walk to the goal facing that way (a quadruped).

The worked example of ``docs/tasks.md``. The quadruped task walks to goals but lets the body
face where it will; this task adds a heading term in goal mode and a first stage that holds
the start position until the body faces ``heading``. Everything else (sensors, gait, goals,
the other terms, options) is the quadruped's and the legged base's. Try it with

    mpc-run docs/examples/go2_turn_then_walk.yaml --mode lockstep
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from mpc.tasks.goal_mode import Stage
from mpc.tasks.quadruped import QuadrupedFlat
from mpc.tasks.task_base import CostTerm, base_yaw, wrap_angle
from robots.info import RobotInfo


class TurnThenWalk(QuadrupedFlat):
    name = "turn_then_walk"
    description = "turn in place to face a heading, then walk to the goal"

    #: Bounds of this task's own options; the others are the legged base's.
    RANGES: ClassVar[dict[str, dict[str, float]]] = {
        "heading": {"min": -math.tau, "max": math.tau},
        "turn_tolerance": {"gt": 0.0, "max": math.pi},
    }

    def __init__(self, robot: RobotInfo, heading: float = math.pi / 2,
                 turn_tolerance: float = 0.05, **options):
        """``heading`` ψ (rad, world frame): where to face; ``turn_tolerance`` (rad): how
        close to ψ the turn ends. Other options: the quadruped's (``goal``, ``gait``, ...)."""
        super().__init__(robot, **options)
        self.heading = float(heading)
        self.turn_tolerance = float(turn_tolerance)

    def declare_terms(self) -> list[CostTerm]:
        """The quadruped's terms and, in goal mode, a heading term: the base x-axis along
        (cos ψ, sin ψ), built by the legged base (``affine_heading``, target ψ)."""
        terms = super().declare_terms()
        if not self.velocity_mode:  # velocity mode tracks the commanded heading already
            terms.append(CostTerm("heading", 2, "smooth_abs", param=0.1, weight=1.0))
        return terms

    def make_stages(self, time: float, qpos: np.ndarray) -> list[Stage]:
        """First turn on the spot until the yaw is within ``turn_tolerance`` of ψ, then the
        quadruped's stages: the waypoints."""
        def turned(t: float, q: np.ndarray) -> bool:
            return abs(wrap_angle(base_yaw(q) - self.heading)) < self.turn_tolerance

        return [Stage("turn", done=turned), *super().make_stages(time, qpos)]
