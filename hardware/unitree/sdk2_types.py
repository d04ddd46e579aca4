"""The project's own DDS types for Unitree SDK2 ``unitree_go`` low-level messages and the
``unitree_api`` request/response used by the robot's services.

Member lists and order follow Unitree's IDL (final types, sequential member ids, type names
``unitree_go::msg::dds_::LowCmd_`` etc.). Every 8-bit unsigned member is declared ``byte``, not
``uint8``: the robots run Cyclone DDS 0.10.2, whose types carry u8 as TK_BYTE, and a 0.10.2 peer
that discovers a TK_UINT8 endpoint has crashed.

No ``from __future__ import annotations`` here: cyclonedds resolves the annotations.
"""
# Class names are Unitree's type names; array defaults are fresh per instance (helpers below).
# ruff: noqa: N801, RUF009

from dataclasses import dataclass, field

import cyclonedds.idl as idl
import cyclonedds.idl.annotations as annotate
import cyclonedds.idl.types as types


def _zeros(n: int):
    return field(default_factory=lambda: [0] * n)


def _bytes(n: int):
    return field(default_factory=lambda: bytearray(n))


@dataclass
@annotate.final
@annotate.autoid("sequential")
class MotorCmd_(idl.IdlStruct, typename="unitree_go.msg.dds_.MotorCmd_"):
    mode: types.byte = 0
    q: types.float32 = 0.0
    dq: types.float32 = 0.0
    tau: types.float32 = 0.0
    kp: types.float32 = 0.0
    kd: types.float32 = 0.0
    reserve: types.array[types.uint32, 3] = _zeros(3)


@dataclass
@annotate.final
@annotate.autoid("sequential")
class BmsCmd_(idl.IdlStruct, typename="unitree_go.msg.dds_.BmsCmd_"):
    off: types.byte = 0
    reserve: types.array[types.byte, 3] = _bytes(3)


@dataclass
@annotate.final
@annotate.autoid("sequential")
class LowCmd_(idl.IdlStruct, typename="unitree_go.msg.dds_.LowCmd_"):
    head: types.array[types.byte, 2] = _bytes(2)
    level_flag: types.byte = 0
    frame_reserve: types.byte = 0
    sn: types.array[types.uint32, 2] = _zeros(2)
    version: types.array[types.uint32, 2] = _zeros(2)
    bandwidth: types.uint16 = 0
    motor_cmd: types.array[MotorCmd_, 20] = field(
        default_factory=lambda: [MotorCmd_() for _ in range(20)])
    bms_cmd: BmsCmd_ = field(default_factory=BmsCmd_)
    wireless_remote: types.array[types.byte, 40] = _bytes(40)
    led: types.array[types.byte, 12] = _bytes(12)
    fan: types.array[types.byte, 2] = _bytes(2)
    gpio: types.byte = 0
    reserve: types.uint32 = 0
    crc: types.uint32 = 0


@dataclass
@annotate.final
@annotate.autoid("sequential")
class IMUState_(idl.IdlStruct, typename="unitree_go.msg.dds_.IMUState_"):
    quaternion: types.array[types.float32, 4] = _zeros(4)
    gyroscope: types.array[types.float32, 3] = _zeros(3)
    accelerometer: types.array[types.float32, 3] = _zeros(3)
    rpy: types.array[types.float32, 3] = _zeros(3)
    temperature: types.byte = 0


@dataclass
@annotate.final
@annotate.autoid("sequential")
class MotorState_(idl.IdlStruct, typename="unitree_go.msg.dds_.MotorState_"):
    mode: types.byte = 0
    q: types.float32 = 0.0
    dq: types.float32 = 0.0
    ddq: types.float32 = 0.0
    tau_est: types.float32 = 0.0
    q_raw: types.float32 = 0.0
    dq_raw: types.float32 = 0.0
    ddq_raw: types.float32 = 0.0
    temperature: types.byte = 0
    lost: types.uint32 = 0
    reserve: types.array[types.uint32, 2] = _zeros(2)


@dataclass
@annotate.final
@annotate.autoid("sequential")
class BmsState_(idl.IdlStruct, typename="unitree_go.msg.dds_.BmsState_"):
    version_high: types.byte = 0
    version_low: types.byte = 0
    status: types.byte = 0
    soc: types.byte = 0
    current: types.int32 = 0
    cycle: types.uint16 = 0
    bq_ntc: types.array[types.byte, 2] = _bytes(2)
    mcu_ntc: types.array[types.byte, 2] = _bytes(2)
    cell_vol: types.array[types.uint16, 15] = _zeros(15)


@dataclass
@annotate.final
@annotate.autoid("sequential")
class LowState_(idl.IdlStruct, typename="unitree_go.msg.dds_.LowState_"):
    head: types.array[types.byte, 2] = _bytes(2)
    level_flag: types.byte = 0
    frame_reserve: types.byte = 0
    sn: types.array[types.uint32, 2] = _zeros(2)
    version: types.array[types.uint32, 2] = _zeros(2)
    bandwidth: types.uint16 = 0
    imu_state: IMUState_ = field(default_factory=IMUState_)
    motor_state: types.array[MotorState_, 20] = field(
        default_factory=lambda: [MotorState_() for _ in range(20)])
    bms_state: BmsState_ = field(default_factory=BmsState_)
    foot_force: types.array[types.int16, 4] = _zeros(4)
    foot_force_est: types.array[types.int16, 4] = _zeros(4)
    tick: types.uint32 = 0
    wireless_remote: types.array[types.byte, 40] = _bytes(40)
    bit_flag: types.byte = 0
    adc_reel: types.float32 = 0.0
    temperature_ntc1: types.byte = 0
    temperature_ntc2: types.byte = 0
    power_v: types.float32 = 0.0
    power_a: types.float32 = 0.0
    fan_frequency: types.array[types.uint16, 4] = _zeros(4)
    reserve: types.uint32 = 0
    crc: types.uint32 = 0


# --- unitree_api: service requests (motion switcher) -------------------------------------------
@dataclass
@annotate.final
@annotate.autoid("sequential")
class RequestIdentity_(idl.IdlStruct, typename="unitree_api.msg.dds_.RequestIdentity_"):
    id: types.int64 = 0
    api_id: types.int64 = 0


@dataclass
@annotate.final
@annotate.autoid("sequential")
class RequestLease_(idl.IdlStruct, typename="unitree_api.msg.dds_.RequestLease_"):
    id: types.int64 = 0


@dataclass
@annotate.final
@annotate.autoid("sequential")
class RequestPolicy_(idl.IdlStruct, typename="unitree_api.msg.dds_.RequestPolicy_"):
    priority: types.int32 = 0
    noreply: bool = False


@dataclass
@annotate.final
@annotate.autoid("sequential")
class RequestHeader_(idl.IdlStruct, typename="unitree_api.msg.dds_.RequestHeader_"):
    identity: RequestIdentity_ = field(default_factory=RequestIdentity_)
    lease: RequestLease_ = field(default_factory=RequestLease_)
    policy: RequestPolicy_ = field(default_factory=RequestPolicy_)


@dataclass
@annotate.final
@annotate.autoid("sequential")
class Request_(idl.IdlStruct, typename="unitree_api.msg.dds_.Request_"):
    header: RequestHeader_ = field(default_factory=RequestHeader_)
    parameter: str = ""
    binary: types.sequence[types.byte] = field(default_factory=bytearray)


@dataclass
@annotate.final
@annotate.autoid("sequential")
class ResponseStatus_(idl.IdlStruct, typename="unitree_api.msg.dds_.ResponseStatus_"):
    code: types.int32 = 0


@dataclass
@annotate.final
@annotate.autoid("sequential")
class ResponseHeader_(idl.IdlStruct, typename="unitree_api.msg.dds_.ResponseHeader_"):
    identity: RequestIdentity_ = field(default_factory=RequestIdentity_)
    status: ResponseStatus_ = field(default_factory=ResponseStatus_)


@dataclass
@annotate.final
@annotate.autoid("sequential")
class Response_(idl.IdlStruct, typename="unitree_api.msg.dds_.Response_"):
    header: ResponseHeader_ = field(default_factory=ResponseHeader_)
    data: str = ""
    binary: types.sequence[types.byte] = field(default_factory=bytearray)
