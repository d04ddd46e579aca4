"""ROS 2 messages as cyclonedds types: the DDS types a ROS 2 node exchanges, without ROS.

ROS 2 maps a message ``pkg/msg/Type`` to the DDS type ``pkg::msg::dds_::Type_`` (a final
struct, CDR encoded: XCDR1 little endian behind the 4-byte encapsulation header). The classes
below carry those names and the fields of the ROS 2 message definitions (Humble and later;
the field lists are checked against the definitions ``rosbags`` ships, and the bytes against
its serializer, by ``tests/hardware/ros2``), so cyclonedds' own serializer produces exactly
the bytes ``rclcpp`` would. The same bytes go to the run's ``run.mcap``
(:mod:`hardware.ros2.mcap_log`), with the message definition text that :func:`msgdef` writes
from these classes (ROS 2's ``ros2msg`` schema encoding, read by Foxglove and rosbag2).

Constants of the definitions (``Marker.LINE_STRIP``, ``DiagnosticStatus.ERROR``) are module
constants here; the schema text leaves them out (they are not part of the bytes).

No ``from __future__ import annotations`` here: cyclonedds resolves the annotations.
"""

import math
import typing
from dataclasses import dataclass, field, fields

import cyclonedds.idl as idl
import cyclonedds.idl.annotations as annotate
import cyclonedds.idl.types as types

_DDS_SUFFIX = "_"


def _ros(name: str) -> str:
    """DDS type name of ROS 2 message ``pkg/msg/Type``."""
    pkg, msg, typ = name.split("/")
    return f"{pkg}::{msg}::dds_::{typ}{_DDS_SUFFIX}"


def _zeros36() -> list[float]:
    return [0.0] * 36


# --- builtin_interfaces, std_msgs -----------------------------------------------------------
@dataclass
@annotate.final
class Time(idl.IdlStruct, typename=_ros("builtin_interfaces/msg/Time")):
    sec: types.int32 = 0
    nanosec: types.uint32 = 0


@dataclass
@annotate.final
class Duration(idl.IdlStruct, typename=_ros("builtin_interfaces/msg/Duration")):
    sec: types.int32 = 0
    nanosec: types.uint32 = 0


@dataclass
@annotate.final
class Header(idl.IdlStruct, typename=_ros("std_msgs/msg/Header")):
    stamp: Time = field(default_factory=Time)
    frame_id: str = ""


@dataclass
@annotate.final
class ColorRGBA(idl.IdlStruct, typename=_ros("std_msgs/msg/ColorRGBA")):
    r: types.float32 = 0.0
    g: types.float32 = 0.0
    b: types.float32 = 0.0
    a: types.float32 = 0.0


# --- geometry_msgs ----------------------------------------------------------------------------
@dataclass
@annotate.final
class Vector3(idl.IdlStruct, typename=_ros("geometry_msgs/msg/Vector3")):
    x: types.float64 = 0.0
    y: types.float64 = 0.0
    z: types.float64 = 0.0


@dataclass
@annotate.final
class Point(idl.IdlStruct, typename=_ros("geometry_msgs/msg/Point")):
    x: types.float64 = 0.0
    y: types.float64 = 0.0
    z: types.float64 = 0.0


@dataclass
@annotate.final
class Quaternion(idl.IdlStruct, typename=_ros("geometry_msgs/msg/Quaternion")):
    x: types.float64 = 0.0
    y: types.float64 = 0.0
    z: types.float64 = 0.0
    w: types.float64 = 1.0


@dataclass
@annotate.final
class Pose(idl.IdlStruct, typename=_ros("geometry_msgs/msg/Pose")):
    position: Point = field(default_factory=Point)
    orientation: Quaternion = field(default_factory=Quaternion)


@dataclass
@annotate.final
class PoseStamped(idl.IdlStruct, typename=_ros("geometry_msgs/msg/PoseStamped")):
    header: Header = field(default_factory=Header)
    pose: Pose = field(default_factory=Pose)


@dataclass
@annotate.final
class PoseWithCovariance(idl.IdlStruct, typename=_ros("geometry_msgs/msg/PoseWithCovariance")):
    pose: Pose = field(default_factory=Pose)
    covariance: types.array[types.float64, 36] = field(default_factory=_zeros36)


@dataclass
@annotate.final
class Twist(idl.IdlStruct, typename=_ros("geometry_msgs/msg/Twist")):
    linear: Vector3 = field(default_factory=Vector3)
    angular: Vector3 = field(default_factory=Vector3)


@dataclass
@annotate.final
class TwistStamped(idl.IdlStruct, typename=_ros("geometry_msgs/msg/TwistStamped")):
    header: Header = field(default_factory=Header)
    twist: Twist = field(default_factory=Twist)


@dataclass
@annotate.final
class TwistWithCovariance(idl.IdlStruct,
                          typename=_ros("geometry_msgs/msg/TwistWithCovariance")):
    twist: Twist = field(default_factory=Twist)
    covariance: types.array[types.float64, 36] = field(default_factory=_zeros36)


@dataclass
@annotate.final
class Transform(idl.IdlStruct, typename=_ros("geometry_msgs/msg/Transform")):
    translation: Vector3 = field(default_factory=Vector3)
    rotation: Quaternion = field(default_factory=Quaternion)


@dataclass
@annotate.final
class TransformStamped(idl.IdlStruct, typename=_ros("geometry_msgs/msg/TransformStamped")):
    header: Header = field(default_factory=Header)
    child_frame_id: str = ""
    transform: Transform = field(default_factory=Transform)


# --- nav_msgs, sensor_msgs, tf2_msgs ----------------------------------------------------------
@dataclass
@annotate.final
class Odometry(idl.IdlStruct, typename=_ros("nav_msgs/msg/Odometry")):
    header: Header = field(default_factory=Header)
    child_frame_id: str = ""
    pose: PoseWithCovariance = field(default_factory=PoseWithCovariance)
    twist: TwistWithCovariance = field(default_factory=TwistWithCovariance)


@dataclass
@annotate.final
class Path(idl.IdlStruct, typename=_ros("nav_msgs/msg/Path")):
    header: Header = field(default_factory=Header)
    poses: types.sequence[PoseStamped] = field(default_factory=list)


@dataclass
@annotate.final
class JointState(idl.IdlStruct, typename=_ros("sensor_msgs/msg/JointState")):
    header: Header = field(default_factory=Header)
    name: types.sequence[str] = field(default_factory=list)
    position: types.sequence[types.float64] = field(default_factory=list)
    velocity: types.sequence[types.float64] = field(default_factory=list)
    effort: types.sequence[types.float64] = field(default_factory=list)


@dataclass
@annotate.final
class CompressedImage(idl.IdlStruct, typename=_ros("sensor_msgs/msg/CompressedImage")):
    header: Header = field(default_factory=Header)
    format: str = ""
    data: types.sequence[types.uint8] = field(default_factory=list)


@dataclass
@annotate.final
class TFMessage(idl.IdlStruct, typename=_ros("tf2_msgs/msg/TFMessage")):
    transforms: types.sequence[TransformStamped] = field(default_factory=list)


# --- diagnostic_msgs, rcl_interfaces ----------------------------------------------------------
#: DiagnosticStatus levels.
DIAGNOSTIC_OK, DIAGNOSTIC_WARN, DIAGNOSTIC_ERROR, DIAGNOSTIC_STALE = 0, 1, 2, 3


@dataclass
@annotate.final
class KeyValue(idl.IdlStruct, typename=_ros("diagnostic_msgs/msg/KeyValue")):
    key: str = ""
    value: str = ""


@dataclass
@annotate.final
class DiagnosticStatus(idl.IdlStruct, typename=_ros("diagnostic_msgs/msg/DiagnosticStatus")):
    level: types.byte = 0
    name: str = ""
    message: str = ""
    hardware_id: str = ""
    values: types.sequence[KeyValue] = field(default_factory=list)


@dataclass
@annotate.final
class DiagnosticArray(idl.IdlStruct, typename=_ros("diagnostic_msgs/msg/DiagnosticArray")):
    header: Header = field(default_factory=Header)
    status: types.sequence[DiagnosticStatus] = field(default_factory=list)


#: rcl_interfaces/Log levels (what /rosout carries).
LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR, LOG_FATAL = 10, 20, 30, 40, 50


@dataclass
@annotate.final
class Log(idl.IdlStruct, typename=_ros("rcl_interfaces/msg/Log")):
    stamp: Time = field(default_factory=Time)
    level: types.uint8 = 0
    name: str = ""
    msg: str = ""
    file: str = ""
    function: str = ""
    line: types.uint32 = 0


# --- visualization_msgs -----------------------------------------------------------------------
#: Marker types and actions used here.
MARKER_SPHERE, MARKER_LINE_STRIP = 2, 4
MARKER_ADD, MARKER_DELETEALL = 0, 3


@dataclass
@annotate.final
class UVCoordinate(idl.IdlStruct, typename=_ros("visualization_msgs/msg/UVCoordinate")):
    u: types.float32 = 0.0
    v: types.float32 = 0.0


@dataclass
@annotate.final
class MeshFile(idl.IdlStruct, typename=_ros("visualization_msgs/msg/MeshFile")):
    filename: str = ""
    data: types.sequence[types.uint8] = field(default_factory=list)


@dataclass
@annotate.final
class Marker(idl.IdlStruct, typename=_ros("visualization_msgs/msg/Marker")):
    header: Header = field(default_factory=Header)
    ns: str = ""
    id: types.int32 = 0
    type: types.int32 = 0
    action: types.int32 = 0
    pose: Pose = field(default_factory=Pose)
    scale: Vector3 = field(default_factory=Vector3)
    color: ColorRGBA = field(default_factory=ColorRGBA)
    lifetime: Duration = field(default_factory=Duration)
    frame_locked: bool = False
    points: types.sequence[Point] = field(default_factory=list)
    colors: types.sequence[ColorRGBA] = field(default_factory=list)
    texture_resource: str = ""
    texture: CompressedImage = field(default_factory=CompressedImage)
    uv_coordinates: types.sequence[UVCoordinate] = field(default_factory=list)
    text: str = ""
    mesh_resource: str = ""
    mesh_file: MeshFile = field(default_factory=MeshFile)
    mesh_use_embedded_materials: bool = False


@dataclass
@annotate.final
class MarkerArray(idl.IdlStruct, typename=_ros("visualization_msgs/msg/MarkerArray")):
    markers: types.sequence[Marker] = field(default_factory=list)


# --- names and definitions --------------------------------------------------------------------
def ros_type(cls: type) -> str:
    """ROS 2 name ``pkg/msg/Type`` of a message class (its DDS name without ``::dds_``)."""
    pkg, msg, _, typ = cls.__idl_typename__.split("::")
    return f"{pkg}/{msg}/{typ.removesuffix(_DDS_SUFFIX)}"


#: cyclonedds field types to ROS 2 primitive names.
_PRIMITIVES = {types.float64: "float64", types.float32: "float32", types.int32: "int32",
               types.uint32: "uint32", types.uint8: "uint8", types.byte: "byte", bool: "bool",
               str: "string"}


def _field_type(annotation) -> tuple[str, type | None]:
    """The ROS 2 spelling of a field's type, and the message class it names (None: none)."""
    if annotation in _PRIMITIVES:
        return _PRIMITIVES[annotation], None
    if isinstance(annotation, type) and issubclass(annotation, idl.IdlStruct):
        return ros_type(annotation).replace("/msg/", "/"), annotation
    meta = typing.get_args(annotation)[1] if typing.get_origin(annotation) else None
    if isinstance(meta, (types.sequence, types.array)):
        inner, cls = _field_type(meta.subtype)
        size = f"{meta.length}" if isinstance(meta, types.array) else ""
        return f"{inner}[{size}]", cls
    raise TypeError(f"no ROS 2 spelling of field type {annotation!r}")


def fields_of(cls: type) -> list[tuple[str, str]]:
    """(name, ROS 2 type) of each field of a message class, in order."""
    hints = typing.get_type_hints(cls, include_extras=True)
    return [(f.name, _field_type(hints[f.name])[0]) for f in fields(cls)]


def msgdef(cls: type) -> str:
    """The message definition of ``cls`` as rosbag2 stores it (``ros2msg``): its fields, then
    every message type it uses, each once, under a separator line and ``MSG: pkg/Type``."""
    order: list[type] = []

    def visit(c: type) -> None:
        hints = typing.get_type_hints(c, include_extras=True)
        for f in fields(c):
            used = _field_type(hints[f.name])[1]
            if used is not None and used not in order:
                order.append(used)
                visit(used)

    visit(cls)
    parts = [_body(cls)]
    for used in order:
        parts.append("=" * 80 + f"\nMSG: {ros_type(used).replace('/msg/', '/')}\n"
                     + _body(used))
    return "\n".join(parts)


def _body(cls: type) -> str:
    return "".join(f"{typ} {name}\n" for name, typ in fields_of(cls))


# --- values -----------------------------------------------------------------------------------
def stamp(ns: int) -> Time:
    """builtin_interfaces/Time of ``ns`` nanoseconds since the epoch."""
    return Time(int(ns // 1_000_000_000), int(ns % 1_000_000_000))


def nanoseconds(t: Time) -> int:
    return t.sec * 1_000_000_000 + t.nanosec


def quaternion(wxyz) -> Quaternion:
    """A ROS quaternion (x, y, z, w) from MuJoCo's (w, x, y, z)."""
    w, x, y, z = (float(v) for v in wxyz)
    return Quaternion(x, y, z, w)


def finite(*values: float) -> bool:
    return all(math.isfinite(v) for v in values)
