"""Swing heights on a map (mpc.tasks.map_swing): the ground profile B(s) of a swing leaves
the lift-off ground, is at the highest ground of the path from the rise r to 1 − r and lands on
the touchdown ground; a swing plan gives each foot its own swing's profile by time, 0 in
stance; the path is sampled with its corners."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mpc.tasks.gait import swing_phase
from mpc.tasks.map_swing import (
    RISE,
    SwingPlan,
    path_points,
    profile,
    progress,
    step_down_pending,
)

heights = st.floats(0.0, 0.3)


@given(h0=heights, h1=heights, extra=st.floats(0.0, 0.2), rise=st.sampled_from([RISE, 0.25, 0.45]))
def test_a_swing_leaves_its_ground_is_over_the_highest_and_lands_on_its_ground(h0, h1, extra,
                                                                               rise):
    top = max(h0, h1) + extra
    s = np.linspace(0.0, 1.0, 201)
    b = profile(s, h0, top, h1, rise)
    assert b[0] == pytest.approx(h0) and b[-1] == pytest.approx(h1)
    middle = (s >= rise) & (s <= 1.0 - rise)
    assert np.allclose(b[middle], top)
    assert np.all(b <= top + 1e-12) and np.all(b >= min(h0, h1) - 1e-12)
    assert np.all(np.diff(b[s <= 0.5]) >= -1e-12)  # up, then level
    assert np.all(np.diff(b[s >= 0.5]) <= 1e-12)  # level, then down


def test_a_step_up_is_reached_early_in_the_swing_and_held_to_touchdown():
    """From the floor onto an 8 cm tread: at 30 % of the swing the foot's ground is the tread's,
    and it stays there to touchdown (the foot crosses the riser late in its swing)."""
    s = np.array([0.0, 0.1, RISE, 0.6, 0.95, 1.0])
    b = profile(s, 0.0, 0.08, 0.08)
    assert b[0] == 0.0 and 0.0 < b[1] < 0.08
    assert b[2:] == pytest.approx([0.08] * 4)


def test_a_plan_with_a_slower_rise_asks_the_foot_up_over_more_of_its_swing():
    """``task.map_rise`` 0.25 (the A1's stairs config): at 16 % of a swing onto an 8 cm tread
    the foot is not yet asked over the tread (with the default it is), and its path has not
    begun to move over."""
    kwargs = dict(liftoff=np.array([[0.0]]), touchdown=np.array([[1.0]]),
                  start=np.array([[0.0]]), top=np.array([[0.08]]), land=np.array([[0.08]]),
                  lift_xy=np.zeros((1, 1, 2)), land_xy=np.ones((1, 1, 2)))
    fast, slow = SwingPlan(**kwargs), SwingPlan(**kwargs, rise=0.25)
    time, phase = np.array([0.16]), np.array([[0.16]])
    assert fast.ground(time, phase)[0, 0] == pytest.approx(0.08)
    assert slow.ground(time, phase)[0, 0] == pytest.approx(profile(0.16, 0.0, 0.08, 0.08, 0.25))
    assert slow.ground(time, phase)[0, 0] < 0.06
    assert fast.path(time, phase)[0, 0, 0] > 0.0 and slow.path(time, phase)[0, 0, 0] == 0.0


def test_a_swing_plan_gives_each_foot_its_swing_by_time_and_zero_in_stance():
    nan = np.nan
    plan = SwingPlan(liftoff=np.array([[-np.inf, 1.0], [0.2, nan]]),
                     touchdown=np.array([[0.3, 1.3], [0.5, nan]]),
                     start=np.array([[0.0, 0.08], [0.0, nan]]),
                     top=np.array([[0.08, 0.1], [0.05, nan]]),
                     land=np.array([[0.08, 0.1], [0.05, nan]]), slack=0.01)
    time = np.array([0.15, 0.35, 0.4, 1.15])
    phase = np.array([[0.5, nan], [nan, 0.5], [nan, 0.67], [0.5, nan]])
    b = plan.ground(time, phase)
    assert b[0].tolist() == pytest.approx([0.08, 0.0])  # foot 0 mid-swing: the tread
    assert b[1].tolist() == pytest.approx([0.0, 0.05])  # foot 0 stands; foot 1 mid-swing
    assert b[2, 1] == pytest.approx(0.05)
    assert b[3, 0] == pytest.approx(0.1)  # foot 0's second swing


def test_the_swing_phase_runs_from_lift_off_to_touchdown_over_the_swing_window():
    """s = 0 where step_height's window opens, 1 where it closes, NaN in stance: a trot (duty
    0.45), the first foot's swing centred on phase 0."""
    duty = 0.45
    half = np.pi * (1.0 - duty)  # half the swing window, in radians of phase
    phase = np.array([-half + 1e-9, 0.0, half / 2, half - 1e-9, np.pi])
    s = swing_phase(phase, np.array([0.0]), duty)[:, 0]
    assert s[:4] == pytest.approx([0.0, 0.5, 0.75, 1.0], abs=1e-8)
    assert np.isnan(s[4])
    assert np.isnan(swing_phase(np.array([0.0]), np.array([0.0]), 1.0)).all()


def test_a_path_is_sampled_with_its_corners_and_no_wider_than_asked():
    pts = path_points(np.array([[0.0, 0.0], [0.1, 0.0], [0.1, 0.05]]), 0.03)
    assert pts[0].tolist() == [0.0, 0.0] and pts[-1].tolist() == pytest.approx([0.1, 0.05])
    assert any(np.allclose(p, [0.1, 0.0]) for p in pts)
    assert np.linalg.norm(np.diff(pts, axis=0), axis=1).max() <= 0.03 + 1e-12


def test_a_swing_path_lifts_before_it_moves_over_a_riser_and_sets_down_after():
    """P(s): 0 until the ground target reaches the highest ground (RISE) on a step up, 1 from
    1 − RISE where it comes down to a lower foothold, rising in between; on the level the
    whole swing moves over."""
    s = np.linspace(0.0, 1.0, 201)
    up = progress(s, 0.0, 0.12, 0.12)
    assert np.all(up[s <= RISE] == 0.0) and up[-1] == 1.0
    assert np.all(np.diff(up) >= 0.0) and 0.0 < up[100] < 1.0
    down = progress(s, 0.12, 0.12, 0.0)
    assert down[0] == 0.0 and np.all(down[s >= 1.0 - RISE] == 1.0)
    over = progress(s, 0.0, 0.12, 0.0)  # over a bump: both
    assert np.all(over[s <= RISE] == 0.0) and np.all(over[s >= 1.0 - RISE] == 1.0)
    level = progress(s, 0.0, 0.0, 0.0)
    assert level[0] == 0.0 and level[-1] == 1.0 and 0.0 < level[10] < level[190] < 1.0


def test_a_swing_plan_gives_each_swinging_foot_its_point_on_its_path_by_time():
    nan = np.nan
    plan = SwingPlan(liftoff=np.array([[-np.inf, 1.0], [0.2, nan]]),
                     touchdown=np.array([[0.3, 1.3], [0.5, nan]]),
                     start=np.array([[0.0, 0.12], [0.0, nan]]),
                     top=np.array([[0.12, 0.12], [0.0, nan]]),
                     land=np.array([[0.12, 0.12], [0.0, nan]]), slack=0.01,
                     land_xy=np.array([[[0.7, 0.1], [0.95, 0.1]], [[0.3, -0.1], [nan, nan]]]),
                     lift_xy=np.array([[[0.5, 0.1], [0.7, 0.1]], [[0.1, -0.1], [nan, nan]]]))
    time = np.array([0.15, 0.35, 1.15, 1.29])
    phase = np.array([[0.1, nan], [nan, 0.5], [0.5, nan], [1.0, nan]])
    p = plan.path(time, phase)
    assert p[0, 0].tolist() == pytest.approx([0.5, 0.1])  # still lifting: at its lift-off
    assert np.isnan(p[0, 1]).all() and np.isnan(p[1, 0]).all()  # in stance
    assert p[1, 1].tolist() == pytest.approx([0.2, -0.1])  # half way on the level
    assert p[2, 0].tolist() == pytest.approx([0.825, 0.1])  # the second swing, half way
    assert p[3, 0].tolist() == pytest.approx([0.95, 0.1])  # at its foothold
    assert np.isnan(SwingPlan(*plan_arrays(plan)).path(time, phase)).all()  # no lift_xy


def plan_arrays(plan: SwingPlan) -> tuple:
    return plan.liftoff, plan.touchdown, plan.start, plan.top, plan.land


def test_a_step_down_is_pending_while_the_hip_is_past_a_foot_on_higher_ground():
    """At the top of a flight down (the ground 0.12 m lower from x = 1): a foot on the top
    with its hip over the first tread down, more than the lag behind it, has a step down
    pending; not with its hip still over the top, nor a foot already down."""
    def height(x, y):
        return np.where(np.asarray(x) < 1.0, 0.12, 0.0)
    heading = np.array([1.0, 0.0])
    assert step_down_pending([[0.95, 0.1]], [[1.1, 0.1]], heading, height, 0.08)
    assert not step_down_pending([[0.95, 0.1]], [[0.99, 0.1]], heading, height, 0.08)
    assert not step_down_pending([[0.95, 0.1]], [[1.1, 0.1]], heading, height, 0.2)
    assert not step_down_pending([[1.05, 0.1]], [[1.2, 0.1]], heading, height, 0.08)
    assert not step_down_pending([[0.95, 0.1]], [[1.1, 0.1]], -heading, height, 0.08)


def test_a_swinging_foot_counts_on_the_chord_of_a_step_up_and_the_profile_of_a_step_down():
    """counted: up a step (h₁ ≥ h₀) h₀ + (h₁ − h₀) s, down one B(s) (at h₀ until the swing
    comes down), over the swing whose window holds the time; 0 in stance."""
    nan = np.nan
    plan = SwingPlan(liftoff=np.array([[-np.inf, 1.0], [0.2, nan]]),
                     touchdown=np.array([[0.3, 1.3], [0.5, nan]]),
                     start=np.array([[0.0, 0.12], [0.12, nan]]),
                     top=np.array([[0.12, 0.24], [0.12, nan]]),
                     land=np.array([[0.12, 0.24], [0.0, nan]]), slack=0.01)
    time = np.array([0.15, 0.35, 0.45, 1.15])
    phase = np.array([[0.25, nan], [nan, 0.5], [nan, 0.95], [0.75, nan]])
    c = plan.counted(time, phase)
    assert c[0].tolist() == pytest.approx([0.03, 0.0])  # a quarter of the way up 12 cm
    assert c[1].tolist() == pytest.approx([0.0, 0.12])  # foot 0 stands; foot 1 still over h₀
    assert 0.0 < c[2, 1] < 0.12 and c[2, 1] == pytest.approx(profile(0.95, 0.12, 0.12, 0.0))
    assert c[3, 0] == pytest.approx(0.21)  # foot 0's second swing, from 0.12 to 0.24
    up = plan.ground(time, phase)[0, 0]  # led up early: B is at the top already
    assert up == pytest.approx(0.12) and c[0, 0] < up
