"""Command filter (limits, ramp, dead man), the scripted profile and the keyboard source."""

from __future__ import annotations

import numpy as np
import pytest

from mpc.app.commands import COMMAND_SOURCES, CommandFilter, VelocityCommand
from mpc.app.commands.keyboard import KEY_END, KEY_LEFT, KEY_PAGE_UP, KEY_UP, KeyboardCommand
from mpc.app.commands.scripted import ScriptedCommand


def run_filter(f: CommandFilter, source, times) -> np.ndarray:
    return np.array([f.update(t, source(t)) for t in times])


def test_filter_limits_speed_and_ramps_at_the_acceleration_limit():
    f = CommandFilter(max_speed=[1.0, 0.5, 1.0], max_accel=[2.0, 1.0, 4.0], timeout=0.5)
    times = np.arange(0.0, 1.01, 0.01)
    out = run_filter(f, lambda t: VelocityCommand(3.0, -2.0, 0.5, t), times)
    # clipped targets (1, -0.5, 0.5), reached at a (2, 1, 4) per second
    np.testing.assert_allclose(out[-1], [1.0, -0.5, 0.5])
    np.testing.assert_allclose(out[25], [0.5, -0.25, 0.5], atol=1e-9)
    assert np.all(np.abs(np.diff(out, axis=0)) <= np.array([2.0, 1.0, 4.0]) * 0.01 + 1e-12)


def test_dead_man_decays_a_stale_command_to_zero():
    f = CommandFilter(max_speed=[1.0, 1.0, 1.0], max_accel=[1.0, 1.0, 1.0], timeout=0.3)
    last = VelocityCommand(1.0, 0.0, 0.0, 0.0)  # the source went silent at t = 0
    for t in np.arange(0.0, 0.31, 0.01):
        f.update(t, VelocityCommand(1.0, 0.0, 0.0, t))
    assert f.value[0] == pytest.approx(0.3)
    assert not f.stale
    out = run_filter(f, lambda t: last, np.arange(0.31, 1.0, 0.01))
    assert f.stale
    assert out[-1][0] == 0.0
    assert np.all(np.diff(out[:, 0]) <= 1e-12)  # decays monotonically at the limit


def test_no_source_command_and_non_finite_commands_give_zero():
    f = CommandFilter(max_speed=[1.0, 1.0, 1.0], max_accel=[10.0, 10.0, 10.0], timeout=0.3)
    assert np.all(run_filter(f, lambda t: None, [0.0, 0.5, 1.0]) == 0.0)
    out = run_filter(f, lambda t: VelocityCommand(np.nan, 0.0, 0.0, t), [1.1, 1.2])
    assert np.all(out == 0.0) and f.stale


@pytest.mark.parametrize("kwargs", [dict(max_speed=[1, 1], max_accel=[1, 1, 1], timeout=1),
                                    dict(max_speed=[1, 1, 1], max_accel=[1, 0, 1], timeout=1),
                                    dict(max_speed=[1, 1, 1], max_accel=[1, 1, 1], timeout=0)])
def test_filter_rejects_bad_limits(kwargs):
    with pytest.raises(ValueError, match="command limits"):
        CommandFilter(**kwargs)


def test_scripted_profile_is_piecewise_constant_and_always_fresh():
    s = ScriptedCommand([[1.0, 0.5, 0.0, 0.0], [2.0, 0.0, 0.3, 0.1]])
    assert s.read(0.5).as_array().tolist() == [0.0, 0.0, 0.0]
    assert s.read(1.0).as_array().tolist() == [0.5, 0.0, 0.0]
    assert s.read(2.5).as_array().tolist() == [0.0, 0.3, 0.1]
    assert s.read(2.5).stamp == 2.5


@pytest.mark.parametrize("profile", [[], [[0, 1, 2]], [[1, 0, 0, 0], [1, 0, 0, 0]],
                                     [[0, np.inf, 0, 0]]])
def test_scripted_profile_rejects_bad_rows(profile):
    with pytest.raises(ValueError, match="profile"):
        ScriptedCommand(profile)


def test_keyboard_steps_a_latched_setpoint_fresh_only_while_the_viewer_beats():
    k = KeyboardCommand(step=0.1, turn_step=0.2)
    assert k.read(0.0) is None  # no viewer: never fresh, the robot stands
    for key in (KEY_UP, KEY_UP, KEY_PAGE_UP, KEY_LEFT):
        k.on_key(key)
    k.heartbeat()
    c = k.read(1.0)
    assert c.as_array().tolist() == pytest.approx([0.2, 0.1, 0.2]) and c.stamp == 1.0
    k.on_key(KEY_END)
    assert k.read(1.1).as_array().tolist() == [0.0, 0.0, 0.0]


def test_registry_names_every_source():
    assert COMMAND_SOURCES.available() == ["gamepad", "keyboard", "lcm", "ros2", "scripted",
                                           "unitree_remote"]
    assert COMMAND_SOURCES.get("scripted") is ScriptedCommand
