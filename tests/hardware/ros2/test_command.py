"""The ``ros2`` command source over real DDS on loopback: what it accepts is exactly rosbags'
bytes of the values sent, and bad input (NaN, absurd values, a wrong type, a best-effort or
stale publisher, out-of-order stamps) is refused and counted while the dead man still stops
the robot."""

from __future__ import annotations

import time

import numpy as np
import pytest
from rosbags.typesys import Stores, get_typestore
from unitree_helpers import wait_for

from hardware.ros2 import dds
from hardware.ros2 import messages as m
from hardware.ros2.command import Ros2Command
from mpc.app.commands.filter import CommandFilter

STORE = get_typestore(Stores.ROS2_HUMBLE)
T = STORE.types


def twist_bytes(vx=0.0, vy=0.0, vz=0.0, wx=0.0, wy=0.0, wz=0.0) -> bytes:
    """geometry_msgs/Twist serialized by rosbags (not by this project)."""
    msg = T["geometry_msgs/msg/Twist"](T["geometry_msgs/msg/Vector3"](vx, vy, vz),
                                       T["geometry_msgs/msg/Vector3"](wx, wy, wz))
    return bytes(STORE.serialize_cdr(msg, "geometry_msgs/msg/Twist"))


def twist_stamped_bytes(stamp_ns: int, vx: float, frame: str = "base_link") -> bytes:
    header = T["std_msgs/msg/Header"](T["builtin_interfaces/msg/Time"](
        stamp_ns // 10**9, stamp_ns % 10**9), frame)
    msg = T["geometry_msgs/msg/TwistStamped"](header, T["geometry_msgs/msg/Twist"](
        T["geometry_msgs/msg/Vector3"](vx, 0.0, 0.0), T["geometry_msgs/msg/Vector3"](0, 0, 0)))
    return bytes(STORE.serialize_cdr(msg, "geometry_msgs/msg/TwistStamped"))


@pytest.fixture
def source(ros2_settings):
    made = []

    def make(**options):
        src = Ros2Command(ros2=ros2_settings, **options)
        made.append(src)
        return src

    yield make
    for src in made:
        src.close()


@pytest.fixture
def writer(ros2_settings):
    dp = dds.participant(ros2_settings.domain_id, "lo")

    def make(cls=m.Twist, profile="default", topic="/cmd_vel", source=None):
        w = dds.Writer(dp, topic, cls, profile)
        if source is not None:
            assert wait_for(lambda: source.reader.matched() >= 1 or profile != "default"
                            or cls is not source.cls, 3.0)
        return w

    return make


def accepted(src, n: int) -> bool:
    return wait_for(lambda: src.accepted >= n, 3.0)


def test_a_twist_is_taken_as_rosbags_encodes_it_and_read_as_a_command(source, writer):
    src = source()
    w = writer(source=src)
    w.write_bytes(twist_bytes(0.5, -0.2, 0.0, 0.0, 0.0, 0.7))
    assert accepted(src, 1)
    c = src.read(10.0)
    assert (c.vx, c.vy, c.yaw_rate) == (0.5, -0.2, 0.7)
    assert 9.0 < c.stamp <= 10.0  # arrived moments ago
    assert src.stats()["matched_publishers"] == 1
    assert src.stats()["latency_ms_median"] is not None


def test_twist_stamped_by_option(source, writer):
    src = source(stamped=True)
    w = writer(m.TwistStamped, source=src)
    w.write_bytes(twist_stamped_bytes(time.time_ns(), 0.3))
    assert accepted(src, 1)
    assert src.read(1.0).vx == 0.3
    w.write_bytes(twist_stamped_bytes(0, 0.4))  # an unset stamp: the DDS one is used
    assert accepted(src, 2)
    assert src.read(1.0).vx == 0.4


@pytest.mark.parametrize("values", [dict(vx=float("nan")), dict(wz=float("inf")),
                                    dict(vx=1e6), dict(vy=-50.0), dict(wx=float("nan"))],
                         ids=["nan", "inf", "1e6", "-50", "nan-angular-x"])
def test_nan_and_absurd_twists_are_refused_and_counted_and_the_dead_man_still_works(
        source, writer, values):
    src = source()
    w = writer(source=src)
    w.write_bytes(twist_bytes(vx=0.5))
    assert accepted(src, 1)
    filt = CommandFilter([1.0, 0.5, 1.0], [100.0, 100.0, 100.0], timeout=0.3)
    filt.update(0.0, src.read(0.0))
    assert filt.update(0.01, src.read(0.01))[0] == 0.5
    for _ in range(5):
        w.write_bytes(twist_bytes(**values))
    assert wait_for(lambda: src.refused.counts.get("invalid", 0) == 5, 3.0)
    assert src.read(0.1).vx == 0.5  # the last good command stays ...
    time.sleep(0.4)
    assert filt.update(0.2, src.read(0.2))[0] == 0.0 and filt.stale  # ... until the dead man
    assert src.stats()["refused"] == {"invalid": 5}


def test_a_publisher_of_another_type_is_counted_and_named(source, writer, caplog):
    src = source()
    w = writer(m.TwistStamped)  # teleop_twist_keyboard with stamped:=true, say
    assert wait_for(lambda: src.refused.counts.get("wrong_type") == 1, 5.0)
    w.write_bytes(twist_stamped_bytes(time.time_ns(), 0.5))
    time.sleep(0.3)
    assert src.accepted == 0 and src.read(1.0) is None  # nothing: the dead man holds zero
    assert any("TwistStamped" in r.message and "stamped: true" in r.message
               for r in caplog.records)


def test_a_best_effort_publisher_is_counted_and_heard_with_the_sensor_data_profile(
        source, writer):
    src = source()
    writer(profile="sensor_data")
    assert wait_for(lambda: src.refused.counts.get("incompatible_qos") == 1, 5.0)
    heard = source(qos="sensor_data")
    w = writer(profile="sensor_data")
    time.sleep(0.5)
    w.write_bytes(twist_bytes(vx=0.2))
    assert accepted(heard, 1) and heard.read(1.0).vx == 0.2


def test_a_stale_publisher_is_refused_and_the_dead_man_still_works(source, writer):
    src = source(max_age=0.5)
    w = writer(source=src)
    w.writer.write(m.Twist(m.Vector3(0.5, 0, 0)))
    assert accepted(src, 1)
    # a publisher whose messages were written 2 s ago (a queue, a replayed bag, a stuck node)
    for _ in range(3):
        w.writer.write(m.Twist(m.Vector3(0.9, 0, 0)), timestamp=time.time_ns() - 2 * 10**9)
    assert wait_for(lambda: src.refused.counts.get("stale") == 3, 3.0)
    stamped = source(stamped=True, max_age=0.5)
    ws = writer(m.TwistStamped, source=stamped)
    ws.write_bytes(twist_stamped_bytes(time.time_ns() - 3 * 10**9, 0.9))
    ws.write_bytes(twist_stamped_bytes(time.time_ns() + 3 * 10**9, 0.9))  # from the future
    assert wait_for(lambda: stamped.refused.counts.get("stale") == 2, 3.0)
    filt = CommandFilter([1.0, 0.5, 1.0], [100.0, 100.0, 100.0], timeout=0.3)
    filt.update(0.0, src.read(0.0))
    time.sleep(0.4)
    assert filt.update(0.1, src.read(0.1))[0] == 0.0 and filt.stale
    assert stamped.read(0.0) is None


def test_an_older_stamp_than_the_last_is_refused_as_out_of_order(source, writer):
    src = source(stamped=True)
    w = writer(m.TwistStamped, source=src)
    now = time.time_ns()
    w.write_bytes(twist_stamped_bytes(now, 0.3))
    assert accepted(src, 1)
    w.write_bytes(twist_stamped_bytes(now - 10**8, 0.8))
    assert wait_for(lambda: src.refused.counts.get("out_of_order") == 1, 3.0)
    assert src.read(1.0).vx == 0.3


def test_undecodable_bytes_are_refused(source):
    """Cyclone drops malformed samples itself; bytes it passes that do not decode as the type
    are counted here (the receiving thread's handler, called as it calls it)."""
    src = source()
    src.handle(b"\x00\x01\x00\x00\x01", time.time_ns())
    assert src.refused.counts == {"undecodable": 1}
    assert src.read(0.0) is None


def test_bad_options_are_one_line_errors():
    with pytest.raises(ValueError, match="not a ROS 2 topic name"):
        Ros2Command.check_options({"topic": "cmd vel"})
    with pytest.raises(ValueError, match="QoS profile"):
        Ros2Command.check_options({"qos": "fast"})
    with pytest.raises(ValueError, match="network interface"):
        Ros2Command(ros2=type("S", (), {"domain_id": 1, "interface": "eth9"})())
    assert np.isfinite(Ros2Command.RANGES["max_age"]["max"])
