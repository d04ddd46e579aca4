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

The checksum is :func:`hardware.unitree.crc.packet_crc`. Encoders take values in SI units and
clamp them to what the fields can carry (tau within +-128 N m, Kp below 2048, Kd below 4096:
the SDK itself wraps around, tau = 200 went out as -56); they refuse non-finite values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hardware.unitree import crc
from hardware.unitree.lowlevel import HEAD, LEVEL_LOW, SLOTS, LowState, MotorCommand

MOTOR_CMD = np.dtype([("mode", "u1"), ("q", "<f4"), ("dq", "<f4"), ("tau", "<i2"),
                      ("kp", "<u2"), ("kd", "<u2"), ("reserve", "V12")])
MOTOR_STATE = np.dtype([("mode", "u1"), ("q", "<f4"), ("dq", "<f4"), ("ddq", "<i2"),
                        ("tau", "<i2"), ("q_raw", "<f4"), ("dq_raw", "<f4"), ("ddq_raw", "<i2"),
                        ("temperature", "i1"), ("reserve", "V8")])
IMU = np.dtype([("quaternion", "<f4", (4,)), ("gyroscope", "<f4", (3,)),
                ("accelerometer", "<f4", (3,)), ("rpy", "<f4", (3,)), ("temperature", "i1")])
GO1_HEADER = [("head", "u1", (2,)), ("level_flag", "u1"), ("frame_reserve", "u1"),
              ("sn", "<u4", (2,)), ("version", "<u4", (2,)), ("bandwidth", "<u2")]
A1_HEADER = [("level_flag", "u1"), ("comm_version", "<u2"), ("robot_id", "<u2"),
             ("sn", "<u4"), ("bandwidth", "u1")]
GO1_BMS_STATE = [("version_h", "u1"), ("version_l", "u1"), ("status", "u1"), ("soc", "u1"),
                 ("current", "<i4"), ("cycle", "<u2"), ("bq_ntc", "i1", (2,)),
                 ("mcu_ntc", "i1", (2,)), ("cell_vol", "<u2", (5,))]
_TAIL = [("wireless_remote", "V40"), ("reserve", "<u4"), ("crc", "<u4")]
_STATE_TAIL = [("foot_force", "<i2", (4,)), ("foot_force_est", "<i2", (4,)), ("tick", "<u4"),
               *_TAIL]

GO1_LOW_CMD = np.dtype([*GO1_HEADER, ("motor", MOTOR_CMD, (SLOTS,)), ("bms_off", "u1"),
                        ("bms_reserve", "V3"), *_TAIL])
A1_LOW_CMD = np.dtype([*A1_HEADER, ("motor", MOTOR_CMD, (SLOTS,)), ("led", "V12"), *_TAIL])
GO1_LOW_STATE = np.dtype([*GO1_HEADER, ("imu", IMU), ("motor", MOTOR_STATE, (SLOTS,)),
                          ("bms", GO1_BMS_STATE), *_STATE_TAIL])
A1_LOW_STATE = np.dtype([*A1_HEADER, ("imu", IMU), ("motor", MOTOR_STATE, (SLOTS,)),
                         *_STATE_TAIL])

#: What the fields can carry: tau i16/256, Kp u16/32, Kd u16/16.
TAU_WIRE = (-32768 / 256, 32767 / 256)
KP_WIRE = (0.0, 65535 / 32)
KD_WIRE = (0.0, 65535 / 16)
_F32_MAX = float(np.finfo(np.float32).max)


@dataclass(frozen=True)
class PacketFormat:
    """One robot's legacy low-level packet format."""

    name: str
    low_cmd: np.dtype
    low_state: np.dtype
    #: Whether the header starts with FE EF (Go1) or with the level flag (A1).
    has_head: bool

    @property
    def cmd_size(self) -> int:
        return self.low_cmd.itemsize

    @property
    def state_size(self) -> int:
        return self.low_state.itemsize


GO1 = PacketFormat("go1", GO1_LOW_CMD, GO1_LOW_STATE, has_head=True)
A1 = PacketFormat("a1", A1_LOW_CMD, A1_LOW_STATE, has_head=False)
FORMATS = {"a1": A1, "go1": GO1}


class PacketError(ValueError):
    """A packet that is not a valid message of the expected kind."""


def _f32(values) -> np.ndarray:
    """As the SDK: the value is a float32 before it is scaled (by a power of two: exact)."""
    return np.clip(values, -_F32_MAX, _F32_MAX).astype(np.float32)


def _header(rec: np.ndarray, fmt: PacketFormat) -> None:
    rec["level_flag"] = LEVEL_LOW
    if fmt.has_head:
        rec["head"] = HEAD


def _check(packet: bytes, fmt: PacketFormat, dtype: np.dtype, what: str) -> np.ndarray:
    if len(packet) != dtype.itemsize:
        raise PacketError(f"{fmt.name} {what}: {len(packet)} B, expected {dtype.itemsize} B")
    if not crc.crc_ok(packet):
        raise PacketError(f"{fmt.name} {what}: bad checksum")
    rec = np.frombuffer(packet, dtype=dtype)[0]
    if rec["level_flag"] != LEVEL_LOW or (fmt.has_head and tuple(rec["head"]) != HEAD):
        raise PacketError(f"{fmt.name} {what}: not a low-level message")
    return rec


def encode_low_cmd(fmt: PacketFormat, cmd: MotorCommand, wireless_remote: bytes = bytes(40)
                   ) -> bytes:
    """LowCmd packet carrying ``cmd`` (values clamped to the field ranges)."""
    if not cmd.finite():
        raise ValueError("refusing to encode a non-finite motor command")
    rec = np.zeros(1, dtype=fmt.low_cmd)
    _header(rec, fmt)
    m = rec["motor"][0]
    m["mode"] = cmd.mode
    m["q"] = np.clip(cmd.q, -_F32_MAX, _F32_MAX)
    m["dq"] = np.clip(cmd.dq, -_F32_MAX, _F32_MAX)
    m["tau"] = np.clip(np.trunc(_f32(cmd.tau) * 256), -32768, 32767)
    m["kp"] = np.clip(np.trunc(_f32(cmd.kp) * 32), 0, 65535)
    m["kd"] = np.clip(np.trunc(_f32(cmd.kd) * 16), 0, 65535)
    rec["wireless_remote"] = np.void(bytes(wireless_remote))
    return bytes(crc.seal(bytearray(rec.tobytes())))


def decode_low_cmd(fmt: PacketFormat, packet: bytes) -> MotorCommand:
    """The command in a LowCmd packet; :class:`PacketError` if it is malformed."""
    m = _check(packet, fmt, fmt.low_cmd, "LowCmd")["motor"]
    return MotorCommand(mode=m["mode"].astype(np.uint8), q=m["q"].astype(float),
                        dq=m["dq"].astype(float), tau=m["tau"] / 256.0, kp=m["kp"] / 32.0,
                        kd=m["kd"] / 16.0)


def encode_low_state(fmt: PacketFormat, state: LowState) -> bytes:
    """LowState packet of ``state`` (what a robot sends)."""
    rec = np.zeros(1, dtype=fmt.low_state)
    _header(rec, fmt)
    imu = rec["imu"]
    imu["quaternion"] = state.quat
    imu["gyroscope"] = state.gyro
    imu["accelerometer"] = state.accel
    imu["rpy"] = state.rpy
    m = rec["motor"][0]
    m["mode"] = state.mode
    m["q"] = m["q_raw"] = state.q
    m["dq"] = m["dq_raw"] = state.dq
    m["tau"] = np.clip(np.trunc(_f32(state.tau_est) * 256), -32768, 32767)
    rec["foot_force"] = np.clip(np.round(state.foot_force), -32768, 32767)
    rec["foot_force_est"] = rec["foot_force"]
    rec["tick"] = state.tick & 0xFFFFFFFF
    rec["wireless_remote"] = np.void(bytes(state.wireless_remote))
    return bytes(crc.seal(bytearray(rec.tobytes())))


def decode_low_state(fmt: PacketFormat, packet: bytes) -> LowState:
    """The state in a LowState packet; :class:`PacketError` if it is malformed."""
    rec = _check(packet, fmt, fmt.low_state, "LowState")
    imu, m = rec["imu"], rec["motor"]
    return LowState(
        tick=int(rec["tick"]), quat=imu["quaternion"].astype(float),
        gyro=imu["gyroscope"].astype(float), accel=imu["accelerometer"].astype(float),
        rpy=imu["rpy"].astype(float), q=m["q"].astype(float), dq=m["dq"].astype(float),
        tau_est=m["tau"] / 256.0, mode=m["mode"].astype(np.uint8),
        foot_force=rec["foot_force"].astype(float),
        wireless_remote=bytes(rec["wireless_remote"]))
