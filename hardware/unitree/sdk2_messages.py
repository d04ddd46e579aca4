"""Unitree SDK2 ``unitree_go`` LowCmd_ / LowState_ samples as bytes, with their CRC.

A sample on the wire is a 4-byte CDR encapsulation header (00 01 = XCDR1 little-endian, what
cyclonedds writes for these final types; 00 07 = XCDR2 little-endian is read too: without
8-byte members both bodies are laid out alike) followed by the CDR body. The CRC is not over
those bytes but over the message's C memory image (natural alignment, zero padding): LowCmd_
812 B, LowState_ 1180 B, the CRC in the last 4 bytes (see :mod:`hardware.unitree.crc`).

The bytes are written and taken with cyclonedds' raw calls (:mod:`hardware.unitree.dds_link`); the
layouts here are checked against cyclonedds' own serializer of :mod:`hardware.unitree.sdk2_types`
by the tests.
"""

from __future__ import annotations

import numpy as np

from hardware.lowlevel import HEAD, LEVEL_LOW, SLOTS, LowState, MotorCommand
from hardware.unitree import crc
from hardware.unitree.legacy_packets import PacketError
from hardware.unitree.struct_layout import Layout

U8, U16, U32, I16, I32, F32 = "u1", "<u2", "<u4", "<i2", "<i4", "<f4"

MOTOR_CMD = [("mode", U8), ("q", F32), ("dq", F32), ("tau", F32), ("kp", F32), ("kd", F32),
             ("reserve", (U32, 3))]
LOW_CMD = [("head", (U8, 2)), ("level_flag", U8), ("frame_reserve", U8), ("sn", (U32, 2)),
           ("version", (U32, 2)), ("bandwidth", U16), ("motor_cmd", (MOTOR_CMD, SLOTS)),
           ("bms_cmd", [("off", U8), ("reserve", (U8, 3))]), ("wireless_remote", (U8, 40)),
           ("led", (U8, 12)), ("fan", (U8, 2)), ("gpio", U8), ("reserve", U32), ("crc", U32)]
IMU_STATE = [("quaternion", (F32, 4)), ("gyroscope", (F32, 3)), ("accelerometer", (F32, 3)),
             ("rpy", (F32, 3)), ("temperature", U8)]
MOTOR_STATE = [("mode", U8), ("q", F32), ("dq", F32), ("ddq", F32), ("tau_est", F32),
               ("q_raw", F32), ("dq_raw", F32), ("ddq_raw", F32), ("temperature", U8),
               ("lost", U32), ("reserve", (U32, 2))]
BMS_STATE = [("version_high", U8), ("version_low", U8), ("status", U8), ("soc", U8),
             ("current", I32), ("cycle", U16), ("bq_ntc", (U8, 2)), ("mcu_ntc", (U8, 2)),
             ("cell_vol", (U16, 15))]
LOW_STATE = [("head", (U8, 2)), ("level_flag", U8), ("frame_reserve", U8), ("sn", (U32, 2)),
             ("version", (U32, 2)), ("bandwidth", U16), ("imu_state", IMU_STATE),
             ("motor_state", (MOTOR_STATE, SLOTS)), ("bms_state", BMS_STATE),
             ("foot_force", (I16, 4)), ("foot_force_est", (I16, 4)), ("tick", U32),
             ("wireless_remote", (U8, 40)), ("bit_flag", U8), ("adc_reel", F32),
             ("temperature_ntc1", U8), ("temperature_ntc2", U8), ("power_v", F32),
             ("power_a", F32), ("fan_frequency", (U16, 4)), ("reserve", U32), ("crc", U32)]

CDR_HEADER = b"\x00\x01\x00\x00"
_LE_HEADERS = (b"\x00\x01", b"\x00\x07")


class MessageLayout:
    """A message's CDR body and C image layouts, and the byte map from one to the other."""

    def __init__(self, spec, name: str):
        self.name = name
        self.cdr = Layout(spec, "cdr")
        self.c = Layout(spec, "c")
        paths = list(self.c.leaves)
        self._c_index = np.concatenate([self.c.leaves[p].bytes_index for p in paths])
        self._cdr_index = np.concatenate([self.cdr.leaves[p].bytes_index for p in paths])
        self._crc_index = self.cdr.leaves["crc"].bytes_index
        #: Body with the frame header and low-level flag set, the rest zero.
        self.template = bytes(self.cdr.pack({"head": HEAD, "level_flag": LEVEL_LOW}))

    @property
    def sample_size(self) -> int:
        """Bytes of a sample as written: header plus body padded to whole words."""
        return 4 + (self.cdr.size + 3) // 4 * 4

    def c_image(self, body: bytes | bytearray | memoryview) -> bytearray:
        image = bytearray(self.c.size)
        np.frombuffer(image, np.uint8)[self._c_index] = \
            np.frombuffer(body, np.uint8)[self._cdr_index]
        return image

    def seal(self, body: bytearray) -> bytes:
        """The sample of ``body``, its CRC computed and set."""
        value = np.array([crc.packet_crc(self.c_image(body))], "<u4")
        Layout.pack_group(body, self._crc_index, value)
        return CDR_HEADER + bytes(body) + bytes(self.sample_size - 4 - len(body))

    def stored_crc(self, sample: bytes) -> int:
        """The CRC word a sample carries (not checked)."""
        body = memoryview(sample)[4:4 + self.cdr.size]
        return int(Layout.unpack_group(body, self._crc_index, "<u4", (1,))[0])

    def body(self, sample: bytes) -> memoryview:
        """The CDR body of a sample whose header, size, CRC and low-level flags are right;
        :class:`PacketError` otherwise."""
        if len(sample) < 4 + self.cdr.size or bytes(sample[:2]) not in _LE_HEADERS:
            raise PacketError(f"{self.name}: not a little-endian CDR sample of this type")
        body = memoryview(sample)[4:4 + self.cdr.size]
        if not crc.crc_ok(self.c_image(body)):
            raise PacketError(f"{self.name}: bad checksum")
        if (tuple(self.cdr.unpack(body, "head")) != HEAD
                or int(self.cdr.unpack(body, "level_flag")) != LEVEL_LOW):
            raise PacketError(f"{self.name}: not a low-level message")
        return body


LOW_CMD_LAYOUT = MessageLayout(LOW_CMD, "LowCmd_")
LOW_STATE_LAYOUT = MessageLayout(LOW_STATE, "LowState_")
_F32_MAX = float(np.finfo(np.float32).max)

_CMD = LOW_CMD_LAYOUT.cdr
_CMD_FLOATS = _CMD.group([f"motor_cmd.{f}" for f in ("q", "dq", "tau", "kp", "kd")])
_CMD_MODE = _CMD.leaves["motor_cmd.mode"].bytes_index
_CMD_REMOTE = _CMD.leaves["wireless_remote"].bytes_index
_STATE = LOW_STATE_LAYOUT.cdr
_STATE_MOTOR = _STATE.group([f"motor_state.{f}" for f in ("q", "q_raw", "dq", "dq_raw",
                                                           "tau_est")])
_STATE_IMU = _STATE.group([f"imu_state.{f}" for f in ("quaternion", "gyroscope",
                                                       "accelerometer", "rpy")])
_STATE_MODE = _STATE.leaves["motor_state.mode"].bytes_index
_STATE_FOOT = _STATE.leaves["foot_force"].bytes_index
_STATE_TICK = _STATE.leaves["tick"].bytes_index
_STATE_REMOTE = _STATE.leaves["wireless_remote"].bytes_index


def encode_low_cmd(cmd: MotorCommand, wireless_remote: bytes = bytes(40)) -> bytes:
    """LowCmd_ sample carrying ``cmd``; refuses non-finite values."""
    floats = np.stack([cmd.q, cmd.dq, cmd.tau, cmd.kp, cmd.kd])
    if not np.all(np.isfinite(floats)):
        raise ValueError("refusing to encode a non-finite motor command")
    body = bytearray(LOW_CMD_LAYOUT.template)
    Layout.pack_group(body, _CMD_FLOATS, np.clip(floats, -_F32_MAX, _F32_MAX).astype("<f4"))
    Layout.pack_group(body, _CMD_MODE, np.asarray(cmd.mode, np.uint8))
    Layout.pack_group(body, _CMD_REMOTE, np.frombuffer(bytes(wireless_remote), np.uint8))
    return LOW_CMD_LAYOUT.seal(body)


@np.errstate(invalid="ignore")  # widening a signalling NaN: refused downstream
def decode_low_cmd(sample: bytes) -> MotorCommand:
    body = LOW_CMD_LAYOUT.body(sample)
    q, dq, tau, kp, kd = Layout.unpack_group(body, _CMD_FLOATS, "<f4", (5, SLOTS)).astype(float)
    return MotorCommand(mode=Layout.unpack_group(body, _CMD_MODE, np.uint8, (SLOTS,)).copy(),
                        q=q, dq=dq, tau=tau, kp=kp, kd=kd)


def encode_low_state(state: LowState) -> bytes:
    """LowState_ sample of ``state`` (what a robot publishes)."""
    body = bytearray(LOW_STATE_LAYOUT.template)
    Layout.pack_group(body, _STATE_MOTOR, np.stack(
        [state.q, state.q, state.dq, state.dq, state.tau_est]).astype("<f4"))
    Layout.pack_group(body, _STATE_IMU, np.concatenate(
        [state.quat, state.gyro, state.accel, state.rpy]).astype("<f4"))
    Layout.pack_group(body, _STATE_MODE, np.asarray(state.mode, np.uint8))
    Layout.pack_group(body, _STATE_FOOT,
                      np.clip(np.round(state.foot_force), -32768, 32767).astype("<i2"))
    Layout.pack_group(body, _STATE_TICK, np.array([state.tick & 0xFFFFFFFF], "<u4"))
    Layout.pack_group(body, _STATE_REMOTE, np.frombuffer(bytes(state.wireless_remote),
                                                         np.uint8))
    return LOW_STATE_LAYOUT.seal(body)


@np.errstate(invalid="ignore")  # widening a signalling NaN: refused downstream
def decode_low_state(sample: bytes) -> LowState:
    body = LOW_STATE_LAYOUT.body(sample)
    q, _, dq, _, tau = Layout.unpack_group(body, _STATE_MOTOR, "<f4", (5, SLOTS)).astype(float)
    imu = Layout.unpack_group(body, _STATE_IMU, "<f4", (13,)).astype(float)
    return LowState(
        tick=int(Layout.unpack_group(body, _STATE_TICK, "<u4", (1,))[0]),
        quat=imu[0:4], gyro=imu[4:7], accel=imu[7:10], rpy=imu[10:13], q=q, dq=dq,
        tau_est=tau, mode=Layout.unpack_group(body, _STATE_MODE, np.uint8, (SLOTS,)).copy(),
        foot_force=Layout.unpack_group(body, _STATE_FOOT, "<i2", (4,)).astype(float),
        wireless_remote=bytes(Layout.unpack_group(body, _STATE_REMOTE, np.uint8, (40,))))
