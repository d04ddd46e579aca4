"""NatNet packets (OptiTrack Motive's streaming protocol): encoding and decoding.

Wire format, little-endian and packed. Every packet: uint16 message id, uint16 payload size,
payload. Server info payload: char name[256], uint8 application version[4], uint8 NatNet
version[4]; NatNet 3+ servers append uint64 high-resolution clock frequency (ticks/s), uint16
data port, uint8 is-multicast, uint8 multicast group[4].

Frame of data, NatNet 3.0 to 4.1 (2.x streams carried markers inside each rigid body and are
not supported). From 4.1 on, every list's int32 count is followed by the int32 byte size of its
items, which lets a reader skip lists it does not need.
    int32 frame number
    marker sets        n x (name NUL-terminated, int32 m, m x float[3])
    legacy markers     n x float[3]
    rigid bodies       n x (int32 id, float[3] position, float[4] quaternion (x, y, z, w),
                            float mean marker error, int16 params, bit 0 = tracking valid)
    skeletons          n x (int32 id, int32 m, m rigid bodies)
    assets (4.1+)      skipped by size
    labeled markers    n x (int32 id, float[3], float size, int16 params, float residual)
    force plates       n x (int32 id, int32 channels, channels x (int32 k, k x float))
    devices            as force plates
    suffix             uint32 timecode, uint32 subframe, double timestamp (s),
                       uint64 camera mid-exposure, uint64 data received, uint64 transmit
                       (host clock ticks), [4.1+: uint32 precision s, uint32 fraction],
                       int16 params, int32 end of data (0)
System latency = (transmit - mid-exposure) / clock frequency: the time from the middle of the
camera exposure to the frame leaving the server.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

CONNECT, SERVER_INFO, REQUEST, RESPONSE = 0, 1, 2, 3
REQUEST_MODELDEF, MODELDEF, REQUEST_FRAME, FRAME_OF_DATA = 4, 5, 6, 7
MESSAGE_STRING, DISCONNECT, KEEPALIVE, UNRECOGNIZED = 8, 9, 10, 100

NAME_BYTES = 256
_HEADER = struct.Struct("<HH")
_SERVER_EXT = struct.Struct("<QH?4B")
_RIGID_BODY = struct.Struct("<i3f4ffh")
_LABELED_MARKER = struct.Struct("<i3ffhf")
_SUFFIX = struct.Struct("<IIdQQQ")
_INT = struct.Struct("<i")

Version = tuple[int, int, int, int]


class NatNetDecodeError(ValueError):
    """A packet that does not parse as the protocol version says."""


@dataclass(frozen=True)
class ServerInfo:
    app_name: str = "Motive"
    app_version: Version = (2, 3, 0, 0)
    natnet_version: Version = (3, 1, 0, 0)
    #: Ticks per second of the stamps in the frame suffix (0: not announced, NatNet < 3).
    clock_frequency: int = 0
    data_port: int = 1511
    multicast: bool = True
    multicast_group: str = "239.255.42.99"


@dataclass(frozen=True)
class RigidBody:
    id: int
    pos: np.ndarray
    #: (x, y, z, w), as streamed.
    quat_xyzw: np.ndarray
    error: float = 0.0
    tracking_valid: bool = True


@dataclass(frozen=True)
class FrameOfData:
    frame: int
    rigid_bodies: tuple[RigidBody, ...] = ()
    timestamp: float = 0.0
    stamp_mid_exposure: int = 0
    stamp_data_received: int = 0
    stamp_transmit: int = 0
    params: int = 0
    #: Rigid bodies inside skeletons (not searched by :meth:`body`).
    skeleton_bodies: tuple[RigidBody, ...] = ()

    def body(self, body_id: int) -> RigidBody | None:
        return next((b for b in self.rigid_bodies if b.id == body_id), None)

    def system_latency(self, clock_frequency: int) -> float | None:
        """Seconds from mid-exposure to transmission, when the server stamps both."""
        if clock_frequency <= 0 or self.stamp_mid_exposure == 0:
            return None
        return (self.stamp_transmit - self.stamp_mid_exposure) / clock_frequency


# --- packets -----------------------------------------------------------------------------------
def encode_packet(message_id: int, payload: bytes = b"") -> bytes:
    return _HEADER.pack(message_id, len(payload)) + payload


def decode_packet(data: bytes) -> tuple[int, memoryview]:
    if len(data) < _HEADER.size:
        raise NatNetDecodeError(f"packet of {len(data)} bytes has no header")
    message_id, size = _HEADER.unpack_from(data)
    if size > len(data) - _HEADER.size:
        raise NatNetDecodeError(f"payload says {size} bytes, packet carries "
                                f"{len(data) - _HEADER.size}")
    return message_id, memoryview(data)[_HEADER.size:_HEADER.size + size]


def encode_request(message_id: int, text: str = "") -> bytes:
    """A client request; connect carries "Ping", as Motive's own clients send."""
    return encode_packet(message_id, text.encode() + b"\0")


# --- server info -------------------------------------------------------------------------------
def encode_server_info(info: ServerInfo) -> bytes:
    name = info.app_name.encode()[:NAME_BYTES - 1].ljust(NAME_BYTES, b"\0")
    group = [int(x) for x in info.multicast_group.split(".")] if info.multicast else [0] * 4
    payload = (name + bytes(info.app_version) + bytes(info.natnet_version)
               + _SERVER_EXT.pack(info.clock_frequency, info.data_port, info.multicast, *group))
    return encode_packet(SERVER_INFO, payload)


def decode_server_info(payload: memoryview) -> ServerInfo:
    if len(payload) < NAME_BYTES + 8:
        raise NatNetDecodeError(f"server info of {len(payload)} bytes")
    name = bytes(payload[:NAME_BYTES]).split(b"\0", 1)[0].decode(errors="replace")
    app = tuple(payload[NAME_BYTES:NAME_BYTES + 4])
    natnet = tuple(payload[NAME_BYTES + 4:NAME_BYTES + 8])
    if len(payload) < NAME_BYTES + 8 + _SERVER_EXT.size:
        return ServerInfo(name, app, natnet, 0, 0, False, "")
    freq, port, multicast, *group = _SERVER_EXT.unpack_from(payload, NAME_BYTES + 8)
    return ServerInfo(name, app, natnet, freq, port, multicast, ".".join(map(str, group)))


# --- frames of data ----------------------------------------------------------------------------
def _sized(version: Version) -> bool:
    return tuple(version[:2]) >= (4, 1)


def _check_version(version: Version) -> None:
    if tuple(version[:2]) < (3, 0):
        raise NatNetDecodeError(f"NatNet {'.'.join(map(str, version))} frames are not supported "
                                "(3.0 or newer: Motive 2.0+)")


def _list(version: Version, items: list[bytes]) -> bytes:
    body = b"".join(items)
    size = _INT.pack(len(body)) if _sized(version) else b""
    return _INT.pack(len(items)) + size + body


def _encode_body(b: RigidBody) -> bytes:
    return _RIGID_BODY.pack(b.id, *np.asarray(b.pos, float), *np.asarray(b.quat_xyzw, float),
                            b.error, int(b.tracking_valid))


def encode_frame(frame: FrameOfData, version: Version) -> bytes:
    """A frame of data with rigid bodies only (no markers, skeletons, devices)."""
    _check_version(version)
    empty = _list(version, [])
    suffix = _SUFFIX.pack(0, 0, frame.timestamp, frame.stamp_mid_exposure,
                          frame.stamp_data_received, frame.stamp_transmit)
    if _sized(version):
        suffix += struct.pack("<II", 0, 0)
    payload = b"".join([
        _INT.pack(frame.frame),
        empty, empty,                                                 # marker sets, legacy
        _list(version, [_encode_body(b) for b in frame.rigid_bodies]),
        empty,                                                        # skeletons
        empty if _sized(version) else b"",                            # assets
        empty, empty, empty,                                          # labeled, plates, devices
        suffix, struct.pack("<hi", frame.params, 0),
    ])
    return encode_packet(FRAME_OF_DATA, payload)


class _Reader:
    def __init__(self, data: memoryview):
        self.data, self.at = data, 0

    def unpack(self, s: struct.Struct) -> tuple:
        if self.at + s.size > len(self.data):
            raise NatNetDecodeError(f"frame ends at byte {len(self.data)}, "
                                    f"needed {self.at + s.size}")
        out = s.unpack_from(self.data, self.at)
        self.at += s.size
        return out

    def int(self) -> int:
        return self.unpack(_INT)[0]

    def skip(self, n: int) -> None:
        if n < 0 or self.at + n > len(self.data):
            raise NatNetDecodeError(f"cannot skip {n} bytes at {self.at} of {len(self.data)}")
        self.at += n

    def string(self) -> str:
        end = bytes(self.data[self.at:]).find(b"\0")
        if end < 0:
            raise NatNetDecodeError("unterminated string")
        text = bytes(self.data[self.at:self.at + end]).decode(errors="replace")
        self.at += end + 1
        return text

    def bodies(self, n: int) -> tuple[RigidBody, ...]:
        out = []
        for _ in range(n):
            i, x, y, z, qx, qy, qz, qw, err, params = self.unpack(_RIGID_BODY)
            out.append(RigidBody(i, np.array([x, y, z]), np.array([qx, qy, qz, qw]), err,
                                 bool(params & 1)))
        return tuple(out)


def decode_frame(payload: memoryview, version: Version) -> FrameOfData:
    """Rigid bodies (top level and inside skeletons) and the timing suffix of a frame."""
    _check_version(version)
    r = _Reader(payload)
    sized = _sized(version)

    def count() -> tuple[int, int]:
        n = r.int()
        return n, (r.int() if sized else -1)

    number = r.int()
    n, size = count()                                   # marker sets
    if sized:
        r.skip(size)
    else:
        for _ in range(n):
            r.string()
            r.skip(12 * r.int())
    n, size = count()                                   # legacy markers
    r.skip(size if sized else 12 * n)
    n, _ = count()
    bodies = r.bodies(n)
    n, size = count()                                   # skeletons
    skeleton_bodies: list[RigidBody] = []
    for _ in range(n):
        r.int()
        skeleton_bodies += r.bodies(r.int())
    if sized:
        _, size = count()                               # assets
        r.skip(size)
    n, size = count()                                   # labeled markers
    r.skip(size if sized else n * _LABELED_MARKER.size)
    for _ in range(2):                                  # force plates, devices
        n, size = count()
        if sized:
            r.skip(size)
            continue
        for _ in range(n):
            r.int()
            for _ in range(r.int()):
                r.skip(4 * r.int())
    _, _, timestamp, mid, received, transmit = r.unpack(_SUFFIX)
    if sized:
        r.skip(8)
    (params,) = r.unpack(struct.Struct("<h"))
    return FrameOfData(number, bodies, timestamp, mid, received, transmit, params,
                       tuple(skeleton_bodies))
