"""The A1 (legacy SDK v3.3) packets against facts read from Unitree's published v3.3 headers
(``include/unitree_legged_sdk/comm.h`` of the unitree_legged_sdk v3.3.x releases for the A1),
not against the project's own codec: member order, the 10-byte header, the 53-byte IMU block,
the four 3-byte foot LEDs, the tail (remote, reserve, CRC) and where each motor's q and dq sit.

No A1 build of the SDK is installed here (the PyPI ``unitree-legged-sdk`` is the Go1's v3.8), so
this is a check of the layout against the header's declarations, read byte by byte from the
encoded packets with ``struct``. The header declares the motor command's tau, Kp, Kd and the
motor state's ddq, tauEst, ddq_raw as float (33 and 38 bytes per motor in memory): those are
the SDK's programming types. What goes on the wire is settled by the datagram lengths that
programs written against the v3.3 SDK (A1 and Aliengo, the two robots it serves) pass to its
``UDP`` constructor for low-level control, ``LOW_CMD_LENGTH = 610`` and
``LOW_STATE_LENGTH = 771``: 20 motor records of 27 and 32 bytes, the three members as 16-bit
integers, as Go1 v3.8's compiled SDK sends them. The last two tests pin both facts."""

import struct

import numpy as np

from hardware.lowlevel import LowState, MotorCommand
from hardware.unitree import legacy_packets as lp

# Facts from the v3.3 header (sizes in bytes, in declaration order; #pragma pack(1)).
HEADER = [("levelFlag", 1), ("commVersion", 2), ("robotID", 2), ("SN", 4), ("bandWidth", 1)]
IMU = [("quaternion", 16), ("gyroscope", 12), ("accelerometer", 12), ("rpy", 12),
       ("temperature", 1)]
MOTOR_CMD_MEMBERS = ["mode", "q", "dq", "tau", "Kp", "Kd", "reserve"]
MOTOR_STATE_MEMBERS = ["mode", "q", "dq", "ddq", "tauEst", "q_raw", "dq_raw", "ddq_raw",
                       "temperature", "reserve"]
#: Bytes per motor as the header declares them (float tau/Kp/Kd, float ddq/tauEst/ddq_raw).
HEADER_MOTOR_CMD, HEADER_MOTOR_STATE = 1 + 5 * 4 + 12, 1 + 7 * 4 + 1 + 8
LEDS = 4 * 3
TAIL = [("wirelessRemote", 40), ("reserve", 4), ("crc", 4)]
STATE_AFTER_MOTORS = [("footForce", 8), ("footForceEst", 8), ("tick", 4)]

HEADER_SIZE = sum(n for _, n in HEADER)
IMU_SIZE = sum(n for _, n in IMU)


def test_header_and_imu_sizes_match_the_sdk_headers():
    assert HEADER_SIZE == 10 and IMU_SIZE == 53
    fmt = lp.A1
    assert not fmt.has_head  # v3.3 has no FE EF head: levelFlag is the first byte
    cmd = lp.encode_low_cmd(fmt, MotorCommand())
    assert cmd[0] == 0xFF  # LOWLEVEL


def test_low_state_members_sit_where_the_header_puts_them():
    fmt = lp.A1
    motor = fmt.low_state["motor"].base.itemsize
    state = LowState(tick=0x12345678, quat=np.array([0.5, -0.5, 0.5, -0.5]),
                     gyro=np.array([1.0, 2.0, 3.0]), accel=np.array([4.0, 5.0, 6.0]),
                     rpy=np.array([0.1, 0.2, 0.3]), q=np.arange(20) * 0.1 + 0.05,
                     dq=-np.arange(20) * 0.2, tau_est=np.zeros(20),
                     mode=np.full(20, 10, np.uint8), foot_force=np.array([11.0, 22, 33, 44]),
                     wireless_remote=bytes(range(40)))
    packet = lp.encode_low_state(fmt, state)
    imu = HEADER_SIZE
    np.testing.assert_array_equal(struct.unpack_from("<4f", packet, imu),
                                  np.float32(state.quat))
    np.testing.assert_array_equal(struct.unpack_from("<3f", packet, imu + 16),
                                  np.float32(state.gyro))
    np.testing.assert_array_equal(struct.unpack_from("<3f", packet, imu + 28),
                                  np.float32(state.accel))
    motors = imu + IMU_SIZE
    for i in range(20):
        at = motors + i * motor
        assert packet[at] == 10  # mode first
        q, dq = struct.unpack_from("<2f", packet, at + 1)  # then q, dq as float
        assert q == np.float32(state.q[i]) and dq == np.float32(state.dq[i])
    at = motors + 20 * motor
    assert struct.unpack_from("<4h", packet, at) == (11, 22, 33, 44)  # footForce
    assert struct.unpack_from("<I", packet, at + 16)[0] == 0x12345678  # tick
    assert packet[at + 20:at + 60] == bytes(range(40))  # wirelessRemote
    assert len(packet) == at + sum(n for _, n in STATE_AFTER_MOTORS + TAIL)


def test_low_cmd_members_sit_where_the_header_puts_them():
    fmt = lp.A1
    motor = fmt.low_cmd["motor"].base.itemsize
    cmd = MotorCommand(mode=np.full(20, 10, np.uint8), q=np.arange(20) * 0.1 - 1.0,
                       dq=np.arange(20) * 0.5, tau=np.zeros(20), kp=np.zeros(20),
                       kd=np.zeros(20))
    packet = lp.encode_low_cmd(fmt, cmd)
    for i in range(20):
        at = HEADER_SIZE + i * motor
        assert packet[at] == 10
        q, dq = struct.unpack_from("<2f", packet, at + 1)
        assert q == np.float32(cmd.q[i]) and dq == np.float32(cmd.dq[i])
    after = HEADER_SIZE + 20 * motor
    assert fmt.low_cmd["extra"].itemsize == LEDS  # led[4] of r, g, b between motors and remote
    assert len(packet) == after + LEDS + sum(n for _, n in TAIL)


def test_motor_records_are_the_headers_with_three_members_sent_as_16_bit():
    """The wire carries the header's motor records with exactly three float members narrowed
    to 16 bits each (see the module docstring)."""
    assert MOTOR_CMD_MEMBERS[3:6] == ["tau", "Kp", "Kd"]
    assert MOTOR_STATE_MEMBERS[3:5] + MOTOR_STATE_MEMBERS[7:8] == ["ddq", "tauEst", "ddq_raw"]
    assert lp.A1.low_cmd["motor"].base.itemsize == HEADER_MOTOR_CMD - 3 * 2
    assert lp.A1.low_state["motor"].base.itemsize == HEADER_MOTOR_STATE - 3 * 2
    assert list(lp.MOTOR_CMD.names) == ["mode", "q", "dq", "tau", "kp", "kd", "reserve"]
    assert [n.replace("_est", "Est") for n in lp.MOTOR_STATE.names] == \
        MOTOR_STATE_MEMBERS


def test_datagrams_have_the_lengths_v33_programs_give_the_sdk():
    """610 and 771 bytes: the low-level lengths programs built on the v3.3 SDK configure."""
    assert len(lp.encode_low_cmd(lp.A1, MotorCommand())) == 610
    assert lp.A1.low_state.itemsize == 771
