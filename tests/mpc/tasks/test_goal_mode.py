"""Goal mode (mpc/tasks/goal_mode.py): the default stages (a hold, then the waypoints), a task's
own stages setting the goal and heading targets, the last stage that must never end, and the
viewer's goal drag."""

from __future__ import annotations

import math

import numpy as np
import pytest
from task_helpers import qpos_at

import robots
from mpc.tasks import make_task
from mpc.tasks.goal_mode import Stage, as_waypoints, final_goal
from mpc.tasks.quadruped import QuadrupedFlat
from mpc.tasks.task_base import CostTerm


def test_a_goal_or_a_list_of_waypoints_is_an_n_by_2_array():
    np.testing.assert_array_equal(as_waypoints([1, 2]), [[1, 2]])
    np.testing.assert_array_equal(as_waypoints([[1, 2], [3, 4]]), [[1, 2], [3, 4]])
    for bad in ([], [1, 2, 3], [[1, 2, 3]]):
        with pytest.raises(ValueError, match="goal must be"):
            as_waypoints(bad)


def test_a_runs_final_goal_is_its_last_waypoint_or_the_default():
    np.testing.assert_array_equal(final_goal({"goal": [1.5, 0.2]}), [1.5, 0.2])
    np.testing.assert_array_equal(final_goal({"goal": [[2.3, 0], [4.6, 0]]}), [4.6, 0])
    np.testing.assert_array_equal(final_goal({}, (2.0, 0.0)), [2.0, 0.0])
    np.testing.assert_array_equal(final_goal({}), [0.0, 0.0])


def test_default_stages_hold_then_visit_the_waypoints():
    task = make_task("quadruped_flat", robots.info("a1"), goal=[[1, 0], [1, 1]], hold_time=1.0)
    task.update(0.0, qpos_at((0.2, 0.1)), np.zeros(18))
    assert [s.name for s in task.stages] == ["hold", "waypoint 0", "waypoint 1"]
    np.testing.assert_array_equal(task.goal, [0.2, 0.1])      # held where it started
    task.update(0.5, qpos_at((0.9, 0.0)), np.zeros(18))      # near waypoint 0, still holding
    assert task.stage.name == "hold"
    task.update(1.0, qpos_at((0.9, 0.0)), np.zeros(18))      # hold over, waypoint 0 reached
    assert task.stage.name == "waypoint 1"
    np.testing.assert_array_equal(task.goal, [1, 1])
    task.update(9.0, qpos_at((1.0, 1.0)), np.zeros(18))      # the last stage never ends
    assert task.stage.name == "waypoint 1"


class Sequence(QuadrupedFlat):
    """Face left holding position until t = 1, then face back and go to the goal."""

    def declare_terms(self) -> list[CostTerm]:
        return [*super().declare_terms(), CostTerm("heading", 2, "smooth_abs", 0.1, 1.0)]

    def make_stages(self, time, qpos):
        return [Stage("turn", heading=math.pi / 2, done=lambda t, q: t >= 1.0),
                Stage("go", goal=np.array([2.0, 0.0]), heading=0.0)]


def test_stages_set_the_goal_and_heading_targets():
    task = Sequence(robots.info("a1"))
    task.planning_model(0.01)
    task.update(0.0, qpos_at((0.3, 0.0)), np.zeros(18))
    t = np.array([0.0, 0.1])
    np.testing.assert_allclose(task.targets(t)["heading"], [0.0, 1.0], atol=1e-15)
    np.testing.assert_array_equal(task.targets(t)["position"], [0.3, 0.0])
    task.update(1.0, qpos_at((0.3, 0.0)), np.zeros(18))
    np.testing.assert_array_equal(task.targets(t)["heading"], [1.0, 0.0])
    np.testing.assert_array_equal(task.goal, [2.0, 0.0])


def test_the_last_stage_must_never_end():
    class Ends(QuadrupedFlat):
        def make_stages(self, time, qpos):
            return [Stage("once", done=lambda t, q: True)]

    task = Ends(robots.info("a1"))
    with pytest.raises(ValueError, match="the last stage must never end"):
        task.update(0.0, qpos_at((0, 0)), np.zeros(18))


def test_moving_the_goal_ends_a_hold_and_moves_the_next_goal():
    task = make_task("humanoid_flat", robots.info("h1"), goal=[[1, 0], [2, 0]], hold_time=5.0)
    task.update(0.0, qpos_at((0, 0), nq=17), np.zeros(16))
    task.set_goal([0.0, 2.0])
    assert task.stage.name == "waypoint 0"
    np.testing.assert_array_equal(task.goal, [0.0, 2.0])
    np.testing.assert_array_equal(task.waypoints, [[0, 2], [2, 0]])
