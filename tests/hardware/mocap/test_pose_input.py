"""Pose time stamping (latency) and the robot-clock mapping."""

from __future__ import annotations

import numpy as np
import pytest

from hardware.estimation.clock_sync import ClockOffset
from hardware.mocap.pose_input import MocapOptions, PoseStamper
from hardware.rotations import quat_exp


def test_clock_offset_takes_the_least_delayed_message_and_follows_drift():
    clock = ClockOffset(window=0.2)
    assert not clock.ready
    rng = np.random.default_rng(0)
    # Robot clock = local - 5 s; delays 0.2..3 ms, one 50 ms stall.
    for k in range(100):
        local = 10.0 + 0.002 * k
        delay = 0.05 if k == 50 else rng.uniform(0.0002, 0.003)
        clock.observe(local - 5.0, local + delay)
    assert clock.to_robot(20.0) == pytest.approx(15.0, abs=0.0005)
    # A robot clock running 20 % slow (a simulation behind real time) is followed within
    # the window's drift, 0.2 s * 20 %.
    clock = ClockOffset(window=0.2)
    for k in range(1000):
        local = 0.002 * k
        clock.observe(0.8 * local, local + 0.0005)
    assert clock.to_robot(2.0) == pytest.approx(1.6, abs=0.2 * 0.2 + 0.001)


@pytest.mark.parametrize("clock", ["receive", "stream"])
def test_capture_time_subtracts_reported_and_transport_latency(clock):
    got = []
    options = MocapOptions(clock=clock, transport_latency=0.002, up_axis="z")
    stamper = PoseStamper(options, lambda *a: got.append(a), lambda local: local - 100.0)
    stamper(np.array([1.0, 2.0, 3.0]), quat_exp([0.0, 0.0, 0.5]), True, received=150.0,
            reported_latency=0.011, stream_time=49.9)
    (t, pos, quat, tracked), = got
    assert t == pytest.approx(49.987 if clock == "receive" else 49.9)
    np.testing.assert_allclose(pos, [1.0, 2.0, 3.0])
    np.testing.assert_allclose(quat, quat_exp([0.0, 0.0, 0.5]))
    assert tracked


def test_poses_before_the_robot_clock_is_known_are_dropped_and_counted():
    got = []
    stamper = PoseStamper(MocapOptions(), lambda *a: got.append(a), lambda local: None)
    stamper(np.zeros(3), np.array([1.0, 0, 0, 0]), True, 1.0, 0.0, 0.0)
    assert not got and stamper.unclocked == 1


def test_mocap_options_checked():
    with pytest.raises(ValueError, match="source"):
        MocapOptions(source="vicon")
    with pytest.raises(ValueError, match="clock"):
        MocapOptions(clock="ptp")


@pytest.mark.parametrize("pos,quat,latency", [
    ([np.nan, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], 0.0),
    ([0.0, 0.0, 0.0], [np.inf, 0.0, 0.0, 0.0], 0.0),
    ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], 0.0),
    ([1e9, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], 0.0),
    ([0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], -0.5),
    ([0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], np.nan),
    ([0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], 30.0),
], ids=["nan-position", "inf-quaternion", "zero-quaternion", "1e9-m", "negative-latency",
        "nan-latency", "30-s-latency"])
def test_unusable_poses_are_refused_and_counted(pos, quat, latency):
    got = []
    stamper = PoseStamper(MocapOptions(up_axis="z"), lambda *a: got.append(a), lambda t: t)
    assert not stamper(np.array(pos), np.array(quat), True, 10.0, latency, 10.0)
    assert not got and stamper.refused.as_dict() == {"invalid": 1}
    assert stamper(np.zeros(3), np.array([1.0, 0, 0, 0]), True, 10.0, 0.01, 10.0)
    assert len(got) == 1
