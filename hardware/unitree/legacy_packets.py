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

The checksum is :func:`hardware.unitree.crc.packet_crc`. Each message is a packed numpy
structured dtype: a packet is encoded by assigning whole fields (all 20 motors' q at once) into
a copy of a template that holds the constant header, and decoded as a view of the bytes; at 500
packets a second each way this costs a fraction of building it value by value. Encoders take
values in SI units and clamp them to
what the fields can carry (tau within +-128 N m, Kp below 2048, Kd below 4096: the SDK itself
wraps around, tau = 200 went out as -56); they refuse non-finite values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hardware.lowlevel import HEAD, LEVEL_LOW, SLOTS, LowState, MotorCommand
from hardware.unitree import crc

MOTOR_CMD = np.dtype([("mode", "u1"), ("q", "<f4"), ("dq", "<f4"), ("tau", "<i2"),
                      ("kp", "<u2"), ("kd", "<u2"), ("reserve", "V12")])
MOTOR_STATE = np.dtype([("mode", "u1"), ("q", "<f4"), ("dq", "<f4"), ("ddq", "<i2"),
                        ("tau_est", "<i2"), ("q_raw", "<f4"), ("dq_raw", "<f4"),
                        ("ddq_raw", "<i2"), ("temperature", "i1"), ("reserve", "V8")])
IMU = [("quaternion", "<f4", (4,)), ("gyroscope", "<f4", (3,)), ("accelerometer", "<f4", (3,)),
       ("rpy", "<f4", (3,)), ("imu_temperature", "i1")]
TAIL = [("wireless_remote", "V40"), ("reserve", "<u4"), ("crc", "<u4")]

#: What the fields can carry: tau i16/256, Kp u16/32, Kd u16/16.
TAU_WIRE = (-32768 / 256, 32767 / 256)
KP_WIRE = (0.0, 65535 / 32)
KD_WIRE = (0.0, 65535 / 16)
_F32_MAX = float(np.finfo(np.float32).max)
#: Scales and integer ranges of the command's tau, Kp and Kd fields (rows of a (3, n) block).
_CMD_SCALE = np.array([[256.0], [32.0], [16.0]])
_CMD_LO = np.array([[-32768], [0], [0]])
_CMD_HI = np.array([[32767], [65535], [65535]])


@dataclass(frozen=True)
class PacketFormat:
    """One robot's legacy low-level packet format: the two message dtypes, and the bytes of
    each message with only its constant header set."""

    name: str
    #: Whether the header starts with FE EF (Go1) or with the level flag (A1).
    has_head: bool
    low_cmd: np.dtype
    low_state: np.dtype
    cmd_template: bytes
    state_template: bytes

    @property
    def cmd_size(self) -> int:
        return self.low_cmd.itemsize

    @property
    def state_size(self) -> int:
        return self.low_state.itemsize


def _format(name: str, header_size: int, has_head: bool, cmd_extra: int, bms: int
            ) -> PacketFormat:
    """``cmd_extra``: bytes between the motor commands and the remote (Go1 BmsCmd, A1 LEDs);
    ``bms``: bytes of the BmsState (Go1) between the motor states and the foot forces."""
    header = [("header", f"V{header_size}")]
    low_cmd = np.dtype([*header, ("motor", MOTOR_CMD, (SLOTS,)), ("extra", f"V{cmd_extra}"),
                        *TAIL])
    low_state = np.dtype([*header, *IMU, ("motor", MOTOR_STATE, (SLOTS,)),
                          *([("bms", f"V{bms}")] if bms else []),
                          ("foot_force", "<i2", (4,)), ("foot_force_est", "<i2", (4,)),
                          ("tick", "<u4"), *TAIL])
    head = bytes([*HEAD, LEVEL_LOW]) if has_head else bytes([LEVEL_LOW])
    templates = []
    for dtype in (low_cmd, low_state):
        templates.append(head.ljust(dtype.itemsize, b"\0"))
    return PacketFormat(name, has_head, low_cmd, low_state, *templates)


GO1 = _format("go1", 22, True, 4, 24)  # BmsCmd: off u8, reserve u8[3]
A1 = _format("a1", 10, False, 12, 0)  # LED u8[4][3]
FORMATS = {"a1": A1, "go1": GO1}


class PacketError(ValueError):
    """A packet that is not a valid message of the expected kind."""


def _f32(values) -> np.ndarray:
    """As the SDK: the value is a float32 before it is scaled (by a power of two: exact)."""
    return np.minimum(np.maximum(values, -_F32_MAX), _F32_MAX).astype(np.float32)


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


def _blank(template: bytes, dtype: np.dtype) -> np.ndarray:
    """A new message (a writable structured scalar view of fresh bytes) from ``template``."""
    return np.frombuffer(bytearray(template), dtype, count=1)[0]


def _sealed(message: np.ndarray) -> bytes:
    return bytes(crc.seal(bytearray(message.tobytes())))


def encode_low_cmd(fmt: PacketFormat, cmd: MotorCommand, wireless_remote: bytes = bytes(40)
                   ) -> bytes:
    """LowCmd packet carrying ``cmd`` (values clamped to the field ranges)."""
    values = np.array((cmd.q, cmd.dq, cmd.tau, cmd.kp, cmd.kd))
    if not np.isfinite(values).all():
        raise ValueError("refusing to encode a non-finite motor command")
    f32 = _f32(values)
    scaled = np.minimum(np.maximum(np.trunc(f32[2:] * _CMD_SCALE), _CMD_LO), _CMD_HI)
    msg = _blank(fmt.cmd_template, fmt.low_cmd)
    motor = msg["motor"]
    motor["mode"] = cmd.mode
    motor["q"], motor["dq"] = f32[0], f32[1]
    motor["tau"], motor["kp"], motor["kd"] = scaled
    msg["wireless_remote"] = np.void(bytes(wireless_remote))
    return _sealed(msg)


@np.errstate(invalid="ignore")  # widening a signalling NaN: refused downstream
def decode_low_cmd(fmt: PacketFormat, packet: bytes) -> MotorCommand:
    """The command in a LowCmd packet; :class:`PacketError` if it is malformed."""
    _check(packet, fmt, fmt.cmd_size, "LowCmd")
    motor = np.frombuffer(packet, fmt.low_cmd, count=1)[0]["motor"]
    return MotorCommand(mode=motor["mode"].copy(), q=motor["q"].astype(float),
                        dq=motor["dq"].astype(float), tau=motor["tau"] / 256.0,
                        kp=motor["kp"] / 32.0, kd=motor["kd"] / 16.0)


def encode_low_state(fmt: PacketFormat, state: LowState) -> bytes:
    """LowState packet of ``state`` (what a robot sends)."""
    msg = _blank(fmt.state_template, fmt.low_state)
    motors = _f32(np.array((state.q, state.dq, state.tau_est)))
    motor = msg["motor"]
    motor["mode"] = state.mode
    motor["q"] = motor["q_raw"] = motors[0]
    motor["dq"] = motor["dq_raw"] = motors[1]
    motor["tau_est"] = np.minimum(np.maximum(np.trunc(motors[2] * 256), -32768), 32767)
    imu = _f32(np.concatenate((state.quat, state.gyro, state.accel, state.rpy)))
    msg["quaternion"], msg["gyroscope"] = imu[0:4], imu[4:7]
    msg["accelerometer"], msg["rpy"] = imu[7:10], imu[10:13]
    msg["foot_force"] = msg["foot_force_est"] = np.minimum(
        np.maximum(np.round(state.foot_force), -32768), 32767)
    msg["tick"] = state.tick & 0xFFFFFFFF
    msg["wireless_remote"] = np.void(bytes(state.wireless_remote))
    return _sealed(msg)


@np.errstate(invalid="ignore")  # widening a signalling NaN: refused downstream
def decode_low_state(fmt: PacketFormat, packet: bytes) -> LowState:
    """The state in a LowState packet; :class:`PacketError` if it is malformed."""
    _check(packet, fmt, fmt.state_size, "LowState")
    msg = np.frombuffer(packet, fmt.low_state, count=1)[0]
    motor = msg["motor"]
    return LowState(
        tick=int(msg["tick"]), quat=msg["quaternion"].astype(float),
        gyro=msg["gyroscope"].astype(float), accel=msg["accelerometer"].astype(float),
        rpy=msg["rpy"].astype(float), q=motor["q"].astype(float), dq=motor["dq"].astype(float),
        tau_est=motor["tau_est"] / 256.0, mode=motor["mode"].copy(),
        foot_force=msg["foot_force"].astype(float),
        wireless_remote=msg["wireless_remote"].tobytes())
