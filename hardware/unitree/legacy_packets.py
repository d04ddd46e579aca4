"""Legacy Unitree low-level UDP packets: A1 (SDK v3.3) and Go1 (SDK v3.8).

Byte layouts (little-endian, packed), as the compiled SDKs put them on the wire:

- header, Go1 (22 B): head u8[2] = FE EF, levelFlag u8 = 0xFF, frameReserve u8, SN u32[2],
  version u32[2], bandWidth u16. A1 (10 B): levelFlag u8, commVersion u16, robotID u16, SN u32,
  bandWidth u8.
- motor command (27 B): mode u8, q f32, dq f32, tau i16 = 256 tau, Kp u16 = 32 Kp, Kd u16 =
  16 Kd (scaled values truncated toward zero, as the SDK does), 12 B reserve.
- motor state (32 B): mode u8, q f32, dq f32, ddq i16, tauEst i16 = 256 tau, q_raw f32,
  dq_raw f32, ddq_raw i16, temperature i8, 8 B reserve.
- LowCmd: header, 20 motor commands, then Go1: BmsCmd (off u8, 3 B reserve); A1: LED u8[4][3];
  then wirelessRemote u8[40], reserve u32, crc u32. Go1 614 B, A1 610 B.
- LowState: header, IMU (quaternion f32[4] (w, x, y, z), gyroscope f32[3], accelerometer f32[3],
  rpy f32[3], temperature i8: 53 B), 20 motor states, Go1 only: BmsState (24 B), then
  footForce i16[4], footForceEst i16[4], tick u32, wirelessRemote u8[40], reserve u32, crc u32.
  Go1 807 B, A1 771 B.

The checksum is :func:`hardware.unitree.crc.packet_crc`. Packets are built with precompiled
``struct`` formats (one C call per packet). Encoders take values in SI units and clamp them to
what the fields can carry (tau within +-128 N m, Kp below 2048, Kd below 4096: the SDK itself
wraps around, tau = 200 went out as -56); they refuse non-finite values.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from itertools import chain

import numpy as np

from hardware.unitree import crc
from hardware.unitree.lowlevel import HEAD, LEVEL_LOW, SLOTS, LowState, MotorCommand

GO1_HEADER = "2sBB2I2IH"  # head, levelFlag, frameReserve, SN[2], version[2], bandWidth
A1_HEADER = "BHHIB"  # levelFlag, commVersion, robotID, SN, bandWidth
MOTOR_CMD = "BffhHH12x"  # mode, q, dq, tau*256, Kp*32, Kd*16, reserve
MOTOR_STATE = "Bffhhffhb8x"  # mode, q, dq, ddq, tauEst*256, q_raw, dq_raw, ddq_raw, temp
IMU = "4f3f3f3fb"  # quaternion (w, x, y, z), gyroscope, accelerometer, rpy, temperature
GO1_BMS_STATE = "BBBBiH2b2b5H"
STATE_TAIL = "4h4hI40sI"  # footForce, footForceEst, tick, wirelessRemote, reserve

#: What the fields can carry: tau i16/256, Kp u16/32, Kd u16/16.
TAU_WIRE = (-32768 / 256, 32767 / 256)
KP_WIRE = (0.0, 65535 / 32)
KD_WIRE = (0.0, 65535 / 16)
_F32_MAX = float(np.finfo(np.float32).max)
_N_IMU = 14
_N_MOTOR_STATE = 9


@dataclass(frozen=True)
class PacketFormat:
    """One robot's legacy low-level packet format (the CRC word not included in the structs)."""

    name: str
    header: str
    #: Whether the header starts with FE EF (Go1) or with the level flag (A1).
    has_head: bool
    low_cmd: struct.Struct
    low_state: struct.Struct

    @property
    def cmd_size(self) -> int:
        return self.low_cmd.size + 4

    @property
    def state_size(self) -> int:
        return self.low_state.size + 4

    @property
    def header_fields(self) -> int:
        return len(struct.unpack("<" + self.header, bytes(struct.calcsize("<" + self.header))))

    def header_values(self) -> tuple:
        if self.has_head:
            return bytes(HEAD), LEVEL_LOW, 0, 0, 0, 0, 0, 0
        return LEVEL_LOW, 0, 0, 0, 0


def _format(name: str, header: str, has_head: bool, cmd_tail: str, bms: str) -> PacketFormat:
    return PacketFormat(
        name, header, has_head,
        struct.Struct("<" + header + MOTOR_CMD * SLOTS + cmd_tail + "40sI"),
        struct.Struct("<" + header + IMU + MOTOR_STATE * SLOTS + bms + STATE_TAIL))


GO1 = _format("go1", GO1_HEADER, True, "B3x", GO1_BMS_STATE)  # BmsCmd: off, reserve
A1 = _format("a1", A1_HEADER, False, "12x", "")  # LED u8[4][3]
FORMATS = {"a1": A1, "go1": GO1}


class PacketError(ValueError):
    """A packet that is not a valid message of the expected kind."""


def _f32(values) -> np.ndarray:
    """As the SDK: the value is a float32 before it is scaled (by a power of two: exact)."""
    return np.minimum(np.maximum(values, -_F32_MAX), _F32_MAX).astype(np.float32)


#: Scales and integer ranges of the command's tau, Kp and Kd fields (rows of a (3, n) block).
_CMD_SCALE = np.array([[256.0], [32.0], [16.0]])
_CMD_LO = np.array([[-32768], [0], [0]])
_CMD_HI = np.array([[32767], [65535], [65535]])


def _check(packet: bytes, fmt: PacketFormat, size: int, what: str) -> None:
    if len(packet) != size:
        raise PacketError(f"{fmt.name} {what}: {len(packet)} B, expected {size} B")
    if not crc.crc_ok(packet):
        raise PacketError(f"{fmt.name} {what}: bad checksum")
    if fmt.has_head:
        if tuple(packet[:2]) != HEAD or packet[2] != LEVEL_LOW:
            raise PacketError(f"{fmt.name} {what}: not a low-level message")
    elif packet[0] != LEVEL_LOW:
        raise PacketError(f"{fmt.name} {what}: not a low-level message")


def _sealed(body: bytes) -> bytes:
    return bytes(crc.seal(bytearray(body + bytes(4))))


def encode_low_cmd(fmt: PacketFormat, cmd: MotorCommand, wireless_remote: bytes = bytes(40)
                   ) -> bytes:
    """LowCmd packet carrying ``cmd`` (values clamped to the field ranges).

    Sent 500 times a second, so the five quantities go through each step as one block."""
    values = np.array((cmd.q, cmd.dq, cmd.tau, cmd.kp, cmd.kd))
    if not np.isfinite(values).all():
        raise ValueError("refusing to encode a non-finite motor command")
    f32 = _f32(values)
    scaled = np.minimum(np.maximum(np.trunc(f32[2:] * _CMD_SCALE), _CMD_LO), _CMD_HI)
    motors = zip(cmd.mode.tolist(), *f32[:2].tolist(), *scaled.astype(np.int64).tolist(),
                 strict=True)
    tail = (0,) if fmt.has_head else ()  # Go1: BmsCmd.off
    return _sealed(fmt.low_cmd.pack(*fmt.header_values(), *chain.from_iterable(motors), *tail,
                                    bytes(wireless_remote), 0))


def decode_low_cmd(fmt: PacketFormat, packet: bytes) -> MotorCommand:
    """The command in a LowCmd packet; :class:`PacketError` if it is malformed."""
    _check(packet, fmt, fmt.cmd_size, "LowCmd")
    values = fmt.low_cmd.unpack_from(packet)
    h = fmt.header_fields
    m = np.array(values[h:h + 6 * SLOTS], dtype=float).reshape(SLOTS, 6)
    return MotorCommand(mode=m[:, 0].astype(np.uint8), q=m[:, 1], dq=m[:, 2],
                        tau=m[:, 3] / 256.0, kp=m[:, 4] / 32.0, kd=m[:, 5] / 16.0)


def encode_low_state(fmt: PacketFormat, state: LowState) -> bytes:
    """LowState packet of ``state`` (what a robot sends)."""
    motors_f32 = _f32(np.array((state.q, state.dq, state.tau_est)))
    q, dq = motors_f32[:2].tolist()
    tau = np.minimum(np.maximum(np.trunc(motors_f32[2] * 256), -32768), 32767)
    zeros = (0,) * SLOTS
    motors = zip(np.asarray(state.mode, np.uint8).tolist(), q, dq, zeros,
                 tau.astype(np.int64).tolist(), q, dq, zeros, zeros, strict=True)
    imu = _f32(np.concatenate((state.quat, state.gyro, state.accel, state.rpy))).tolist()
    bms = (0,) * 15 if fmt.has_head else ()
    force = np.minimum(np.maximum(np.round(state.foot_force), -32768), 32767)
    force = force.astype(np.int64).tolist()
    return _sealed(fmt.low_state.pack(
        *fmt.header_values(), *imu, 0, *chain.from_iterable(motors), *bms, *force, *force,
        state.tick & 0xFFFFFFFF, bytes(state.wireless_remote), 0))


def decode_low_state(fmt: PacketFormat, packet: bytes) -> LowState:
    """The state in a LowState packet; :class:`PacketError` if it is malformed."""
    _check(packet, fmt, fmt.state_size, "LowState")
    values = fmt.low_state.unpack_from(packet)
    h = fmt.header_fields
    imu = np.array(values[h:h + 13], dtype=float)
    k = h + _N_IMU
    m = np.array(values[k:k + _N_MOTOR_STATE * SLOTS], dtype=float).reshape(
        SLOTS, _N_MOTOR_STATE)
    tail = values[-11:]  # footForce[4], footForceEst[4], tick, wirelessRemote, reserve
    return LowState(
        tick=tail[8], quat=imu[0:4], gyro=imu[4:7], accel=imu[7:10], rpy=imu[10:13],
        q=m[:, 1], dq=m[:, 2], tau_est=m[:, 4] / 256.0, mode=m[:, 0].astype(np.uint8),
        foot_force=np.array(tail[0:4], dtype=float), wireless_remote=tail[9])
