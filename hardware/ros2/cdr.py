"""CDR bytes of the ROS 2 messages (:mod:`hardware.ros2.messages`), by an encoder compiled per
message class.

Why not cyclonedds' own serializer: it walks every element through several layers of generic
machinery, ~2 ms for one plan's markers (90 points) and ~0.15 ms for an Odometry on this
project's 2-core machine, which made run.mcap of a 10-minute run take minutes to write and
the live publishers cost more than their budget. This encoder reads the same class
definitions once and packs with :mod:`struct`, all-``float64`` structs (points, poses,
quaternions) and numeric sequences in one call each. Its bytes are checked against rosbags'
ROS 2 serializer (an independent implementation) and cyclonedds' for every class
(``tests/hardware/ros2/test_messages.py``); decoding (the few messages received) stays
cyclonedds'.

The encoding (XCDR1, little endian, what ROS 2's rmw implementations write for its final
message types): the encapsulation header ``00 01 00 00``, then the fields in order, each
primitive aligned to its size relative to the start of the body (after the header);
strings as a uint32 length (bytes + 1), the UTF-8 bytes and a NUL; sequences as a uint32
count and the elements; fixed arrays as the elements alone; nested messages inline.
"""

from __future__ import annotations

import operator
import struct
import typing
from collections.abc import Callable
from dataclasses import fields

import cyclonedds.idl as idl
import cyclonedds.idl.types as types
import numpy as np

#: XCDR1 little endian, no options.
HEADER = b"\x00\x01\x00\x00"
_U32 = struct.Struct("<I")
#: cyclonedds field types to (struct format, size).
_PRIMITIVES = {types.float64: ("d", 8), types.float32: ("f", 4), types.int32: ("i", 4),
               types.uint32: ("I", 4), types.uint8: ("B", 1), types.byte: ("B", 1),
               bool: ("?", 1)}
_NUMPY = {"d": "<f8", "f": "<f4", "i": "<i4", "I": "<u4", "B": "u1", "?": "?"}

Writer = Callable[[bytearray, object], None]
_ENCODERS: dict[type, Writer] = {}


def encode(message) -> bytes:
    """The CDR bytes (with the encapsulation header) of a message of
    :mod:`hardware.ros2.messages`."""
    buf = bytearray(HEADER)
    encoder(type(message))(buf, message)
    return bytes(buf)


def encoder(cls: type) -> Writer:
    """The compiled writer of message class ``cls``: appends an instance's body to a buffer
    that starts with the encapsulation header."""
    if cls not in _ENCODERS:
        hints = typing.get_type_hints(cls, include_extras=True)
        writers = [_field(f.name, hints[f.name]) for f in fields(cls)]

        def write(buf: bytearray, obj, writers=writers) -> None:
            for w in writers:
                w(buf, obj)

        _ENCODERS[cls] = write
    return _ENCODERS[cls]


def _align(buf: bytearray, size: int) -> None:
    pad = -(len(buf) - 4) % size
    if pad:
        buf.extend(bytes(pad))


def _string(buf: bytearray, value: str) -> None:
    data = value.encode()
    _align(buf, 4)
    buf.extend(_U32.pack(len(data) + 1))
    buf.extend(data)
    buf.append(0)


def _float_paths(cls: type, prefix: str = "") -> list[str] | None:
    """Dotted paths of the leaves of a struct made of float64 only (None if it is not)."""
    hints = typing.get_type_hints(cls, include_extras=True)
    paths: list[str] = []
    for f in fields(cls):
        t = hints[f.name]
        if t is types.float64:
            paths.append(prefix + f.name)
        elif isinstance(t, type) and issubclass(t, idl.IdlStruct):
            inner = _float_paths(t, f"{prefix}{f.name}.")
            if inner is None:
                return None
            paths.extend(inner)
        else:
            return None
    return paths


def _field(name: str, annotation) -> Writer:
    get = operator.attrgetter(name)
    if annotation in _PRIMITIVES:
        fmt, size = _PRIMITIVES[annotation]
        packer = struct.Struct("<" + fmt)

        def primitive(buf, obj):
            _align(buf, size)
            buf.extend(packer.pack(get(obj)))
        return primitive
    if annotation is str:
        return lambda buf, obj: _string(buf, get(obj))
    if isinstance(annotation, type) and issubclass(annotation, idl.IdlStruct):
        leaves = _float_paths(annotation)
        if leaves is not None:  # Point, Pose, Quaternion...: one pack of all its doubles
            values = operator.attrgetter(*leaves)
            packer = struct.Struct(f"<{len(leaves)}d")

            def flat(buf, obj):
                _align(buf, 8)
                buf.extend(packer.pack(*values(get(obj))))
            return flat
        nested = encoder(annotation)
        return lambda buf, obj: nested(buf, get(obj))
    meta = typing.get_args(annotation)[1]
    sub = meta.subtype
    if isinstance(meta, types.array):
        fmt, size = _PRIMITIVES[sub]
        packer = struct.Struct(f"<{meta.length}{fmt}")

        def array(buf, obj):
            _align(buf, size)
            buf.extend(packer.pack(*get(obj)))
        return array
    return _sequence(get, sub)


def _sequence(get, sub) -> Writer:
    """A sequence field: count, then the elements (aligned before the first)."""
    if sub in _PRIMITIVES:
        fmt, size = _PRIMITIVES[sub]
        dtype = _NUMPY[fmt]

        def numbers(buf, obj):
            values = get(obj)
            _align(buf, 4)
            buf.extend(_U32.pack(len(values)))
            if len(values):
                _align(buf, size)
                buf.extend(np.asarray(values, dtype=dtype).tobytes())
        return numbers
    if sub is str:
        def strings(buf, obj):
            values = get(obj)
            _align(buf, 4)
            buf.extend(_U32.pack(len(values)))
            for v in values:
                _string(buf, v)
        return strings
    leaves = _float_paths(sub)
    if leaves is not None:
        values_of = operator.attrgetter(*leaves)

        def flat_structs(buf, obj):
            items = get(obj)
            _align(buf, 4)
            buf.extend(_U32.pack(len(items)))
            if items:
                _align(buf, 8)
                buf.extend(np.array([values_of(e) for e in items], dtype="<f8").tobytes())
        return flat_structs
    element = encoder(sub)

    def structs(buf, obj):
        items = get(obj)
        _align(buf, 4)
        buf.extend(_U32.pack(len(items)))
        for e in items:
            element(buf, e)
    return structs
