"""SDK2 samples: the fast layouts equal cyclonedds' own serializer of the project's IDL types;
CRC over the C image."""

import numpy as np
import pytest

from hardware.lowlevel import LowState, MotorCommand, remote_block
from hardware.unitree import crc
from hardware.unitree import sdk2_messages as sm
from hardware.unitree import sdk2_types as st
from hardware.unitree.legacy_packets import PacketError


def test_c_image_and_cdr_sizes():
    assert sm.LOW_CMD_LAYOUT.c.size == 812 and sm.LOW_STATE_LAYOUT.c.size == 1180
    assert sm.LOW_CMD_LAYOUT.sample_size == len(st.LowCmd_().serialize())
    assert sm.LOW_STATE_LAYOUT.sample_size == len(st.LowState_().serialize())


def test_u8_members_are_bytes():
    """The Cyclone 0.10.2 trap: no member may be declared uint8."""
    import typing

    import cyclonedds.idl.types as types

    for cls in (st.LowCmd_, st.LowState_, st.MotorCmd_, st.MotorState_, st.IMUState_,
                st.BmsCmd_, st.BmsState_, st.Request_, st.Response_):
        for name, hint in typing.get_type_hints(cls, include_extras=True).items():
            assert "uint8" not in repr(hint), f"{cls.__name__}.{name}: {hint!r}"
            assert hint is not types.uint8


def test_low_cmd_equals_cyclonedds_serializer(rng):
    cmd = MotorCommand(mode=rng.integers(0, 256, 20).astype(np.uint8),
                       q=rng.normal(size=20), dq=rng.normal(size=20), tau=rng.normal(size=20),
                       kp=rng.uniform(0, 100, 20), kd=rng.uniform(0, 5, 20))
    remote = remote_block(["L1", "Y"])
    sample = sm.encode_low_cmd(cmd, remote)
    msg = st.LowCmd_.deserialize(sample)
    assert msg.serialize() == sample
    assert tuple(msg.head) == (0xFE, 0xEF) and msg.level_flag == 0xFF
    assert bytes(msg.wireless_remote) == remote
    for i in range(20):
        m = msg.motor_cmd[i]
        assert m.mode == cmd.mode[i]
        np.testing.assert_allclose([m.q, m.dq, m.tau, m.kp, m.kd],
                                   [cmd.q[i], cmd.dq[i], cmd.tau[i], cmd.kp[i], cmd.kd[i]],
                                   rtol=1e-6)
    back = sm.decode_low_cmd(msg.serialize())
    np.testing.assert_allclose(back.kd, cmd.kd, rtol=1e-6)


def test_low_state_equals_cyclonedds_serializer(rng):
    state = LowState(tick=123456, quat=rng.normal(size=4), gyro=rng.normal(size=3),
                     accel=rng.normal(size=3), rpy=rng.normal(size=3), q=rng.normal(size=20),
                     dq=rng.normal(size=20), tau_est=rng.normal(size=20),
                     mode=np.ones(20, np.uint8), foot_force=np.array([10.0, -3, 7, 0]),
                     wireless_remote=remote_block(["L2", "B"]))
    sample = sm.encode_low_state(state)
    msg = st.LowState_.deserialize(sample)
    assert msg.serialize() == sample
    assert msg.tick == 123456 and list(msg.foot_force) == [10, -3, 7, 0]
    np.testing.assert_allclose(msg.imu_state.quaternion, state.quat, rtol=1e-6)
    np.testing.assert_allclose([m.q for m in msg.motor_state], state.q, rtol=1e-6)
    back = sm.decode_low_state(sample)
    np.testing.assert_allclose(back.dq, state.dq, rtol=1e-6)
    assert back.wireless_remote == state.wireless_remote


def test_crc_is_over_the_c_image(rng):
    """Set by an independent path: fill the IDL object, lay the C struct out by hand with
    numpy's aligned dtype, CRC it; the encoder must agree."""
    motor = np.dtype([("mode", "u1"), ("q", "<f4"), ("dq", "<f4"), ("tau", "<f4"),
                      ("kp", "<f4"), ("kd", "<f4"), ("reserve", "<u4", (3,))], align=True)
    image_t = np.dtype([("head", "u1", (2,)), ("level_flag", "u1"), ("frame_reserve", "u1"),
                        ("sn", "<u4", (2,)), ("version", "<u4", (2,)), ("bandwidth", "<u2"),
                        ("motor", motor, (20,)), ("bms", "u1", (4,)),
                        ("wireless_remote", "u1", (40,)), ("led", "u1", (12,)),
                        ("fan", "u1", (2,)), ("gpio", "u1"), ("reserve", "<u4"),
                        ("crc", "<u4")], align=True)
    assert image_t.itemsize == 812
    cmd = MotorCommand(mode=np.ones(20, np.uint8), q=rng.normal(size=20), dq=np.zeros(20),
                       tau=rng.normal(size=20), kp=np.full(20, 60.0), kd=np.full(20, 5.0))
    image = np.zeros(1, image_t)
    image["head"] = (0xFE, 0xEF)
    image["level_flag"] = 0xFF
    for f in ("mode", "q", "dq", "tau", "kp", "kd"):
        image["motor"][f] = getattr(cmd, f)
    expected = crc.packet_crc(image.tobytes())
    assert st.LowCmd_.deserialize(sm.encode_low_cmd(cmd)).crc == expected


def test_bad_samples_are_rejected(rng):
    sample = bytearray(sm.encode_low_cmd(MotorCommand()))
    sample[100] ^= 0x04
    with pytest.raises(PacketError, match="checksum"):
        sm.decode_low_cmd(bytes(sample))
    msg = st.LowCmd_()  # CRC right, but not a low-level message
    msg.crc = crc.packet_crc(sm.LOW_CMD_LAYOUT.c_image(msg.serialize()[4:]))
    with pytest.raises(PacketError, match="low-level"):
        sm.decode_low_cmd(msg.serialize())
    with pytest.raises(PacketError):
        sm.decode_low_cmd(b"\x01\x00\x00\x00" + bytes(808))  # big-endian header


def test_non_finite_is_refused():
    cmd = MotorCommand()
    cmd.tau[0] = np.nan
    with pytest.raises(ValueError):
        sm.encode_low_cmd(cmd)


def test_stored_crc_is_the_word_cyclonedds_reads(rng):
    cmd = MotorCommand(mode=np.ones(20, np.uint8), q=rng.normal(size=20), dq=np.zeros(20),
                       tau=rng.normal(size=20), kp=np.full(20, 60.0), kd=np.full(20, 5.0))
    sample = sm.encode_low_cmd(cmd)
    assert sm.LOW_CMD_LAYOUT.stored_crc(sample) == st.LowCmd_.deserialize(sample).crc
