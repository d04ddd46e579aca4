"""Velocity commands over LCM: received, stamped by their age, silent until the first."""

from __future__ import annotations

import time

import pytest

from hardware.lcm.command import LcmCommand
from hardware.lcm.lcm_types import velocity_command_t


def test_a_published_command_arrives_and_ages():
    source = LcmCommand("memq://", "VEL")
    try:
        assert source.read(0.0) is None  # silent: the dead-man rule keeps the robot standing
        msg = velocity_command_t()
        msg.utime, msg.vx, msg.vy, msg.yaw_rate = 1, 0.4, -0.1, 0.2
        source._subscription.lcm.publish("VEL", msg.encode())  # memq: same instance
        deadline = time.monotonic() + 2.0
        while source.read(10.0) is None and time.monotonic() < deadline:
            time.sleep(0.01)
        c = source.read(10.0)
        assert c.as_array().tolist() == pytest.approx([0.4, -0.1, 0.2])
        assert 9.0 < c.stamp <= 10.0
        time.sleep(0.2)
        assert source.read(10.0).stamp < c.stamp - 0.15
    finally:
        source.close()


def test_an_lcm_url_that_does_not_open_is_a_one_line_error():
    with pytest.raises(ValueError, match="cannot open LCM URL"):
        LcmCommand("nonsense://x", "VEL")
