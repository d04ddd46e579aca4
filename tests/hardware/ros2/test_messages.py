"""The ROS 2 message types against an independent oracle: the message definitions and the CDR
serializer that ``rosbags`` ships (not this project's code, not cyclonedds). Both encoders
are checked: the project's own (:mod:`hardware.ros2.cdr`, what is published and logged) and
cyclonedds' (which decodes what is received)."""

from __future__ import annotations

import dataclasses
import typing

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rosbags.typesys import Stores, get_typestore
from rosbags.typesys.base import Nodetype

from hardware.ros2 import cdr
from hardware.ros2 import messages as m

STORES = [Stores.ROS2_HUMBLE, Stores.ROS2_JAZZY]
#: Every message class the project sends, receives or logs.
CLASSES = [obj for obj in vars(m).values()
           if isinstance(obj, type) and issubclass(obj, m.idl.IdlStruct)
           and obj.__module__ == m.__name__]


def rosbags_spelling(node) -> str:
    """A rosbags field definition as the ROS 2 ``.msg`` spelling (``float64[36]``, ...)."""
    kind, rest = node
    if kind == Nodetype.BASE:
        return rest[0]
    if kind == Nodetype.NAME:
        return rest.replace("/msg/", "/")
    inner, size = rest
    return f"{rosbags_spelling(inner)}[{size if kind == Nodetype.ARRAY else ''}]"


def to_rosbags(value, store):
    """The project's message ``value`` as the rosbags message of the same type."""
    cls = type(value)
    kwargs = {}
    spelling = dict(m.fields_of(cls))
    for f in dataclasses.fields(cls):
        v = getattr(value, f.name)
        spelled = spelling[f.name]
        if isinstance(v, list):
            base = spelled.split("[")[0]
            if base in ("float64", "float32", "uint8"):
                v = np.array(v, dtype={"float64": np.float64, "float32": np.float32,
                                       "uint8": np.uint8}[base])
            elif base != "string":
                v = [to_rosbags(x, store) for x in v]
        elif dataclasses.is_dataclass(v):
            v = to_rosbags(v, store)
        kwargs[f.name] = v
    return store.types[m.ros_type(cls)](**kwargs)


def populated(cls, seed: int = 1):
    """An instance of ``cls`` with every field set to something other than its default."""
    rng = np.random.default_rng(seed)
    hints = typing.get_type_hints(cls, include_extras=True)
    kwargs = {}
    for f in dataclasses.fields(cls):
        kwargs[f.name] = _value(hints[f.name], dict(m.fields_of(cls))[f.name], rng)
    return cls(**kwargs)


def _value(annotation, spelled: str, rng):
    base, _, size = spelled.partition("[")
    if size:
        n = int(size[:-1]) if size[:-1] else int(rng.integers(0, 5))
        meta = typing.get_args(annotation)[1]
        return [_value(meta.subtype, base, rng) for _ in range(n)]
    if base in ("float64", "float32"):
        v = float(rng.normal())
        return float(np.float32(v)) if base == "float32" else v
    if base in ("int32",):
        return int(rng.integers(-1000, 1000))
    if base in ("uint32",):
        return int(rng.integers(0, 2**32 - 1))
    if base == "uint8":
        return int(rng.integers(0, 255))
    if base == "byte":  # rosbags packs ROS's byte as a signed char: the levels are 0..3
        return int(rng.integers(0, 127))
    if base == "bool":
        return True
    if base == "string":
        return "s" * int(rng.integers(0, 9))
    return populated(annotation, int(rng.integers(0, 1000)))


def test_every_message_class_is_checked():
    assert len(CLASSES) >= 27
    assert {m.Twist, m.TwistStamped, m.Odometry, m.JointState, m.TFMessage, m.Path,
            m.PoseStamped, m.DiagnosticArray, m.MarkerArray, m.Log} <= set(CLASSES)


@pytest.mark.parametrize("store_name", STORES, ids=str)
@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_type_names_and_field_layouts_match_the_ros2_definitions(cls, store_name):
    store = get_typestore(store_name)
    name = m.ros_type(cls)
    assert cls.__idl_typename__ == name.replace("/msg/", "::msg::dds_::") + "_"
    _, ros_fields = store.fielddefs[name]
    assert m.fields_of(cls) == [(n, rosbags_spelling(node)) for n, node in ros_fields]


@pytest.mark.parametrize("store_name", STORES, ids=str)
@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_cdr_bytes_equal_the_rosbags_serializer(cls, store_name):
    store = get_typestore(store_name)
    for value in (cls(), populated(cls, 1), populated(cls, 2)):
        ours = cdr.encode(value)
        theirs = bytes(store.serialize_cdr(to_rosbags(value, store), m.ros_type(cls)))
        assert ours == theirs
        assert value.serialize() == theirs
        back = store.deserialize_cdr(ours, m.ros_type(cls))
        assert bytes(store.serialize_cdr(back, m.ros_type(cls))) == ours


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_message_definitions_parse_as_rosbags_reads_them(cls):
    """The schema text written to run.mcap defines the same fields as ROS 2's own."""
    from rosbags.typesys import get_types_from_msg

    store = get_typestore(Stores.ROS2_HUMBLE)
    text = m.msgdef(cls)
    sections = text.split("=" * 80 + "\n")
    parsed = get_types_from_msg(sections[0], m.ros_type(cls))
    for section in sections[1:]:
        header, _, body = section.partition("\n")
        pkg, typ = header.removeprefix("MSG: ").split("/")
        parsed.update(get_types_from_msg(body, f"{pkg}/msg/{typ}"))
    for name, (_, defined) in parsed.items():
        assert [(n, rosbags_spelling(node)) for n, node in defined] == \
            [(n, rosbags_spelling(node)) for n, node in store.fielddefs[name][1]], name


finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@settings(max_examples=60, deadline=None)
@given(st.lists(finite, min_size=6, max_size=6), st.integers(0, 2**31 - 1),
       st.integers(0, 10**9 - 1), st.text(max_size=12))
def test_twist_stamped_and_odometry_bytes_for_any_values(v, sec, nsec, frame):
    store = get_typestore(Stores.ROS2_HUMBLE)
    header = m.Header(m.Time(sec, nsec), frame)
    twist = m.Twist(m.Vector3(*v[:3]), m.Vector3(*v[3:]))
    for value in (twist, m.TwistStamped(header, twist),
                  m.Odometry(header, frame[::-1], m.PoseWithCovariance(
                      m.Pose(m.Point(*v[:3]), m.Quaternion(*v[2:])), v * 6),
                      m.TwistWithCovariance(twist, v[::-1] * 6))):
        theirs = bytes(store.serialize_cdr(to_rosbags(value, store), m.ros_type(type(value))))
        assert cdr.encode(value) == theirs
        assert value.serialize() == theirs
