"""Legacy UDP packets: sizes, round trips, clamping, rejection of bad packets."""

import numpy as np
import pytest

from hardware.lowlevel import POS_STOP, VEL_STOP, LowState, MotorCommand, remote_block
from hardware.unitree import legacy_packets as lp


def random_command(rng) -> MotorCommand:
    """Values the wire carries exactly (float32 targets, gains and torques on the grid)."""
    return MotorCommand(
        mode=rng.choice([0x00, 0x0A], 20).astype(np.uint8),
        q=rng.normal(size=20).astype(np.float32).astype(float),
        dq=rng.normal(size=20).astype(np.float32).astype(float),
        tau=rng.integers(-5000, 5000, 20) / 256.0, kp=rng.integers(0, 6000, 20) / 32.0,
        kd=rng.integers(0, 100, 20) / 16.0)


def random_state(rng) -> LowState:
    return LowState(
        tick=int(rng.integers(0, 2**32)), quat=rng.normal(size=4), gyro=rng.normal(size=3),
        accel=rng.normal(size=3), rpy=rng.normal(size=3), q=rng.normal(size=20),
        dq=rng.normal(size=20), tau_est=rng.integers(-3000, 3000, 20) / 256.0,
        mode=np.full(20, 0x0A, np.uint8), foot_force=rng.integers(-300, 300, 4).astype(float),
        wireless_remote=remote_block(["L2", "B"]))


@pytest.mark.parametrize("fmt, cmd_size, state_size", [(lp.GO1, 614, 807), (lp.A1, 610, 771)])
def test_sizes(fmt, cmd_size, state_size):
    assert (fmt.cmd_size, fmt.state_size) == (cmd_size, state_size)


@pytest.mark.parametrize("fmt", [lp.GO1, lp.A1])
def test_round_trips(fmt, rng):
    for _ in range(10):
        cmd = random_command(rng)
        packet = lp.encode_low_cmd(fmt, cmd)
        assert len(packet) == fmt.cmd_size
        back = lp.decode_low_cmd(fmt, packet)
        for field in ("mode", "q", "dq", "tau", "kp", "kd"):
            np.testing.assert_array_equal(getattr(back, field), getattr(cmd, field))
        state = random_state(rng)
        back = lp.decode_low_state(fmt, lp.encode_low_state(fmt, state))
        assert back.tick == state.tick
        np.testing.assert_allclose(back.q, state.q, rtol=1e-6)
        np.testing.assert_allclose(back.quat, state.quat, rtol=1e-6)
        np.testing.assert_array_equal(back.tau_est, state.tau_est)
        np.testing.assert_array_equal(back.foot_force, state.foot_force)
        assert back.wireless_remote == state.wireless_remote


def test_header_bytes():
    go1 = lp.encode_low_cmd(lp.GO1, MotorCommand())
    assert go1[:3] == bytes([0xFE, 0xEF, 0xFF])
    a1 = lp.encode_low_cmd(lp.A1, MotorCommand())
    assert a1[0] == 0xFF


def test_fields_are_clamped_to_what_the_wire_carries():
    cmd = MotorCommand(tau=np.full(20, 200.0), kp=np.full(20, 5000.0), kd=np.full(20, -1.0))
    back = lp.decode_low_cmd(lp.GO1, lp.encode_low_cmd(lp.GO1, cmd))
    assert np.all(back.tau == 32767 / 256)  # not -56 as a wrapping encoder gives
    assert np.all(back.kp == 65535 / 32)
    assert np.all(back.kd == 0.0)
    cmd = MotorCommand(tau=np.full(20, -200.0))
    assert np.all(lp.decode_low_cmd(lp.GO1, lp.encode_low_cmd(lp.GO1, cmd)).tau == -128.0)


def test_sentinels_survive():
    back = lp.decode_low_cmd(lp.GO1, lp.encode_low_cmd(lp.GO1, MotorCommand()))
    assert np.all(back.q == np.float32(POS_STOP)) and np.all(back.dq == VEL_STOP)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_is_refused(bad):
    cmd = MotorCommand()
    cmd.kp[3] = bad
    with pytest.raises(ValueError):
        lp.encode_low_cmd(lp.GO1, cmd)


def test_bad_packets_are_rejected(rng):
    packet = bytearray(lp.encode_low_cmd(lp.GO1, random_command(rng)))
    with pytest.raises(lp.PacketError, match="checksum"):
        corrupted = bytearray(packet)
        corrupted[40] ^= 0x10
        lp.decode_low_cmd(lp.GO1, bytes(corrupted))
    with pytest.raises(lp.PacketError, match="614"):
        lp.decode_low_cmd(lp.GO1, bytes(packet[:-1]))
    with pytest.raises(lp.PacketError):  # an A1 packet is not a Go1 packet
        lp.decode_low_cmd(lp.GO1, lp.encode_low_cmd(lp.A1, MotorCommand()))
