"""The legged-task base: options and ranges inherited through the config check, declared
waypoints (the stages: test_goal_mode.py), the terms' builders, exact Jacobians of every
registered task, the goal-mode travel reference, and the angle helpers."""

from __future__ import annotations

import math
import re
from typing import ClassVar

import mujoco
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from task_helpers import qpos_at

import robots
from mpc.app.config import load_config
from mpc.app.schema import ConfigError, check_kwargs, keyword_options, option_ranges
from mpc.tasks import TASKS, make_task
from mpc.tasks.humanoid import HumanoidFlat
from mpc.tasks.quadruped import QuadrupedFlat
from mpc.tasks.quadruped_biped import QuadrupedBiped
from mpc.tasks.task_base import CostTerm, Task, wrap_angle
from mpc.tasks.velocity import clamp_angle, clamp_distance

#: A robot each registered task runs on.
ROBOT = {"quadruped_flat": "a1", "quadruped_biped": "go1", "humanoid_flat": "h1",
         "turn_then_walk": "go2"}


# --- options ---------------------------------------------------------------------------------
class Base:
    RANGES: ClassVar[dict] = {"a": {"min": 0.0, "max": 1.0}, "b": {"min": 0.0, "max": 1.0}}

    def __init__(self, a: float = 0.5, b: float = 0.5):
        pass


class Child(Base):
    RANGES: ClassVar[dict] = {"b": {"min": 0.0, "max": 10.0}, "c": {"min": 0.0, "max": 1.0}}

    def __init__(self, c: float = 0.5, b: float = 5.0, **options):
        super().__init__(b=min(b, 1.0), **options)


class Closed(Base):
    def __init__(self, c: float = 0.5):
        super().__init__()


def test_options_and_their_ranges_follow_kwargs_up_the_classes():
    assert list(keyword_options(Child)) == ["c", "b", "a"]
    assert keyword_options(Child)["b"][0].default == 5.0  # the subclass's default wins
    assert option_ranges(Child)["b"] == {"min": 0.0, "max": 10.0}  # and its bounds
    assert check_kwargs(Child, {"a": 1, "b": 7.0}, "x.yaml", "task.") == {"a": 1.0, "b": 7.0}
    with pytest.raises(ConfigError, match=r"'task.a' must be >= 0.0 and <= 1.0, got 2"):
        check_kwargs(Child, {"a": 2}, "x.yaml", "task.")
    with pytest.raises(ConfigError, match=r"unknown key 'task.a'"):  # no **options: closed
        check_kwargs(Closed, {"a": 1}, "x.yaml", "task.")


def test_every_task_has_the_legged_options_with_their_ranges():
    base = set(keyword_options(QuadrupedFlat, ("robot",)))
    assert {"goal", "hold_time", "weights", "mode", "lead", "effort_scale"} <= base
    for cls in (QuadrupedBiped, HumanoidFlat, TASKS.get("turn_then_walk")):
        assert base <= set(keyword_options(cls, ("robot",))), cls.__name__
    assert keyword_options(HumanoidFlat)["gait"][0].default == "stand"
    assert option_ranges(HumanoidFlat)["height"]["max"] == 3.0
    assert option_ranges(QuadrupedFlat)["height"]["max"] == 2.0
    assert option_ranges(QuadrupedBiped)["effort_scale"] == {"gt": 0.0, "max": 100.0}


@pytest.mark.parametrize("override, message", [
    ("task.effort_scale=-1", "'task.effort_scale' must be > 0.0"),   # a base option
    ("task.hold_time=-1", "'task.hold_time' must be >= 0.0"),
    ("task.heading=100", "'task.heading' must be >= -6.28"),         # the subclass's own
    ("task.suport=front", "unknown key 'task.suport' (did you mean 'support'?)"),
    ("task.mode=velocity", "task: unknown mode 'velocity'; choose from goal"),
    ("task.gait=walk", "task: unknown gait 'walk'; choose from trot"),
])
def test_a_subclass_config_is_checked_against_inherited_options(override, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config("configs/go1_biped.yaml", [override])


def test_weights_of_terms_the_task_does_not_have_are_rejected():
    with pytest.raises(ValueError, match=r"unknown cost term\(s\) yaw in weights; terms of "
                                         r"quadruped_flat: upright, height, position, gait, "
                                         r"balance, effort, posture, velocity, heading$"):
        make_task("quadruped_flat", robots.info("a1"), mode="velocity", weights={"yaw": 1.0})
    task = make_task("quadruped_flat", robots.info("a1"), mode="velocity",
                     weights={"heading": 3.0})
    assert {t.name: t.weight for t in task.terms}["heading"] == 3.0


@pytest.mark.parametrize("weight", [[0.1, 0.2], "0.1", True, None])
def test_a_weight_that_is_not_a_number_is_refused_naming_the_term(weight):
    """Found by the config fuzz test: ``weights.position`` given as a list passed the bounds
    (they bound each number of a value) and raised a TypeError, a traceback, in the task."""
    with pytest.raises(ValueError, match=r"^weights\.position must be a number, got "):
        make_task("quadruped_flat", robots.info("a1"), weights={"position": weight})


# --- waypoints -----------------------------------------------------------------------------------
class Bare(Task):
    name = "bare"

    def add_sensors(self, spec):
        pass

    def residual(self, sensordata, time):
        return np.zeros((*np.shape(time), 0))

    def residual_jacobian(self, sensordata, time):
        return np.zeros((*np.shape(time), 0, sensordata.shape[-1]))


def test_waypoints_are_declared_by_every_task():
    assert Bare(robots.info("a1")).waypoints.shape == (0, 2)
    task = make_task("quadruped_flat", robots.info("a1"), goal=[[1, 0], [1, 1]])
    np.testing.assert_array_equal(task.waypoints, [[1, 0], [1, 1]])


# --- terms -------------------------------------------------------------------------------------
def test_a_term_without_its_builder_is_named():
    class Extra(QuadrupedFlat):
        def declare_terms(self):
            return [*super().declare_terms(), CostTerm("sway", 2, "quadratic", 0.0, 1.0)]

    with pytest.raises(TypeError, match=r"term 'sway' has no method affine_sway"):
        Extra(robots.info("a1")).planning_model(0.01)


def central_difference(task, s, t, h=1e-6):
    cols = []
    for j in range(s.shape[-1]):
        e = np.zeros_like(s)
        e[..., j] = h
        cols.append((task.residual(s + e, t) - task.residual(s - e, t)) / (2 * h))
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("name, mode", [(n, m) for n in sorted(ROBOT)
                                         for m in TASKS.get(n).MODES])
def test_every_task_has_an_exact_residual_jacobian(name, mode, rng):
    task = make_task(name, robots.info(ROBOT[name]), mode=mode, gait="trot")
    model = task.planning_model(0.01)
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key(task.robot.home_key).id)
    mujoco.mj_forward(model, data)
    if mode == "velocity":
        task.set_command([0.3, 0.1, 0.4])
    task.update(0.0, data.qpos, data.qvel)
    s = data.sensordata + 0.05 * rng.standard_normal((3, model.nsensordata))
    t = np.array([0.05, 0.2, 0.31])  # stance and swing of different feet
    J = task.residual_jacobian(s, t)
    assert J.shape == (3, task.nresidual, model.nsensordata)
    np.testing.assert_allclose(J, central_difference(task, s, t), atol=1e-7)


# --- helpers ------------------------------------------------------------------------------------
ANGLES = st.floats(-100.0, 100.0)


@given(ANGLES)
def test_wrap_angle_is_the_same_direction_in_minus_pi_to_pi(a):
    w = wrap_angle(a)
    assert -math.pi <= w <= math.pi
    assert math.cos(w) == pytest.approx(math.cos(a), abs=1e-9)
    assert math.sin(w) == pytest.approx(math.sin(a), abs=1e-9)


@given(ANGLES, ANGLES, st.floats(0.0, 3.0))
def test_clamp_angle_turns_the_short_way_by_at_most_the_limit(angle, center, limit):
    out = clamp_angle(angle, center, limit)
    gap = wrap_angle(angle - center)
    assert abs(out - center) <= limit + 1e-12
    if abs(gap) <= limit:  # already within: the same direction
        assert wrap_angle(out - angle) == pytest.approx(0.0, abs=1e-9)
    else:  # on the short side, at the limit
        assert (out - center) == pytest.approx(math.copysign(limit, gap), abs=1e-12)


@given(st.lists(st.floats(-10, 10), min_size=4, max_size=4), st.floats(0.0, 5.0))
def test_clamp_distance_moves_a_point_toward_the_centre_to_the_radius(xy, radius):
    point, center = np.array(xy[:2]), np.array(xy[2:])
    out = clamp_distance(point, center, radius)
    d = point - center
    if np.linalg.norm(d) <= radius:
        np.testing.assert_array_equal(out, point)
    else:  # on the way from the centre to the point, at the radius
        np.testing.assert_allclose(out - center, d * radius / np.linalg.norm(d), atol=1e-12)


# --- the goal-mode travel reference -------------------------------------------------------------
def test_the_travel_target_walks_to_the_goal_at_the_travel_speed_and_stops_there():
    """With ``travel_speed`` the position target is a point walking from the base to the goal
    at that speed (the goal itself without it), kept within ``lead`` of the base."""
    task = make_task("quadruped_flat", robots.info("a1"), goal=[1.0, 0.0], travel_speed=0.2)
    task.update(0.0, qpos_at((0.0, 0.0)), np.zeros(18))
    np.testing.assert_allclose(task.position_target(np.array([0.0, 0.5, 1.0, 10.0])),
                               [[0.0, 0.0], [0.1, 0.0], [0.2, 0.0], [1.0, 0.0]])
    np.testing.assert_allclose(task.travel_velocity(), [0.2, 0.0])
    task.update(1.0, qpos_at((0.05, 0.0)), np.zeros(18))  # 0.15 behind the point: kept
    np.testing.assert_allclose(task.position_target(np.asarray(1.0)), [0.2, 0.0])
    task.update(2.0, qpos_at((0.05, 0.0)), np.zeros(18))  # 0.35 behind: pulled to the lead
    np.testing.assert_allclose(task.position_target(np.asarray(2.0)), [0.25, 0.0])
    task.update(9.0, qpos_at((0.95, 0.0)), np.zeros(18))
    np.testing.assert_allclose(task.position_target(np.array([9.0, 20.0])), [[1.0, 0.0]] * 2)
    np.testing.assert_allclose(task.travel_velocity(), [0.0, 0.0])  # at the goal: stopped
    plain = make_task("quadruped_flat", robots.info("a1"), goal=[1.0, 0.0])
    plain.update(0.0, qpos_at((0.0, 0.0)), np.zeros(18))
    np.testing.assert_array_equal(plain.position_target(np.asarray(0.5)), [1.0, 0.0])


def test_the_travel_target_turns_to_the_next_waypoint():
    task = make_task("quadruped_flat", robots.info("a1"), goal=[[0.5, 0.0], [0.5, 1.0]],
                     travel_speed=0.3)
    task.update(0.0, qpos_at((0.45, 0.0)), np.zeros(18))  # within the tolerance of the first
    assert task.stage.name == "waypoint 1"
    u = (np.array([0.5, 1.0]) - [0.45, 0.0]) / np.hypot(0.05, 1.0)
    np.testing.assert_allclose(task.position_target(np.asarray(1.0)), [0.45, 0.0] + 0.3 * u)


def test_the_travel_target_leaves_the_residual_jacobian_exact(rng):
    task = make_task("quadruped_flat", robots.info("a1"), gait="walk", goal=[2.0, 0.5],
                     travel_speed=0.25)
    model = task.planning_model(0.01)
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key(task.robot.home_key).id)
    mujoco.mj_forward(model, data)
    task.update(0.0, data.qpos, data.qvel)
    s = data.sensordata + 0.05 * rng.standard_normal((3, model.nsensordata))
    t = np.array([0.05, 0.2, 0.31])
    np.testing.assert_allclose(task.residual_jacobian(s, t), central_difference(task, s, t),
                               atol=1e-7)
    position = task.residual(s, t)[:, task.rows["position"]]
    np.testing.assert_allclose(position, s[:, task.sensor("base_pos")][:, :2]
                               - task.position_target(t))
