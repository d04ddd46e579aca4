"""ROS 2 over plain DDS: topic names, QoS profiles, the participant, raw readers and writers.

ROS 2 (its DDS mapping, as every rmw implementation does it) puts topic ``/cmd_vel`` on the
DDS topic ``rt/cmd_vel`` with the type ``geometry_msgs::msg::dds_::Twist_``
(:mod:`hardware.ros2.messages`), in DDS domain ``ROS_DOMAIN_ID`` (0 unless set). QoS as
rclcpp's profiles:

- ``default``: reliable, volatile, keep-last 10 (``rclcpp::QoS(10)``, what publishers and
  most subscribers use);
- ``sensor_data``: best effort, volatile, keep-last 5 (``rclcpp::SensorDataQoS``).

A best-effort reader matches writers of either kind; a reliable reader does not match a
best-effort writer (:func:`matches` says why a publication is not heard).

The participant: with ``interface`` set, one network interface (on loopback with 127.0.0.1
as the discovery peer, the configuration :mod:`hardware.unitree.dds_link` makes, shared with
the Unitree DDS plant of the same domain in this process); with ``interface`` empty,
Cyclone's own configuration, which is ``CYCLONEDDS_URI`` when set, else its defaults (the
machine's interfaces, multicast discovery).
"""

from __future__ import annotations

import os
import re
import threading
import time

from cyclonedds._clayer import ddspy_take, ddspy_write
from cyclonedds.builtin import BuiltinDataReader, BuiltinTopicDcpsPublication
from cyclonedds.core import (
    DDSException,
    InstanceState,
    ReadCondition,
    SampleState,
    ViewState,
    WaitSet,
)
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.qos import Policy, Qos
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

from hardware.ros2 import cdr
from hardware.unitree import dds_link
from hardware.unitree.udp_link import LinkError

#: QoS profiles by name (see the module docstring).
PROFILES = ("default", "sensor_data")
#: The ROS 2 DDS mapping's prefix of topics (``rt/``: ROS topic).
TOPIC_PREFIX = "rt"
_NAME = re.compile(r"^/(?:[A-Za-z_][A-Za-z0-9_]*)(?:/[A-Za-z_][A-Za-z0-9_]*)*$")
_ANY = SampleState.Any | ViewState.Any | InstanceState.Any
_PARTICIPANTS: dict[int, DomainParticipant] = {}
_LOCK = threading.Lock()


def check_topic(name: str) -> None:
    """ValueError unless ``name`` is a fully qualified ROS 2 topic name (``/cmd_vel``,
    ``/robot1/odom``): tokens of letters, digits and underscores not starting with a digit."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"{name!r} is not a ROS 2 topic name: it must start with '/' and "
                         f"consist of tokens of letters, digits and '_' (e.g. /cmd_vel)")


def dds_topic(name: str) -> str:
    """The DDS topic of ROS 2 topic ``name``: ``/cmd_vel`` -> ``rt/cmd_vel``."""
    check_topic(name)
    return TOPIC_PREFIX + name


def qos(profile: str, depth: int | None = None) -> Qos:
    """The QoS of an rclcpp profile (``default`` or ``sensor_data``), keep-last ``depth``
    (the profile's own when None)."""
    if profile == "default":
        return Qos(Policy.Reliability.Reliable(max_blocking_time=100_000_000),
                   Policy.Durability.Volatile, Policy.History.KeepLast(depth or 10))
    if profile == "sensor_data":
        return Qos(Policy.Reliability.BestEffort, Policy.Durability.Volatile,
                   Policy.History.KeepLast(depth or 5))
    raise ValueError(f"unknown QoS profile {profile!r}; profiles: {', '.join(PROFILES)}")


def check_domain(domain_id: int, interface: str) -> None:
    """ValueError unless the domain id is valid and the interface ('' = Cyclone's
    configuration) exists here."""
    if not isinstance(domain_id, int) or not 0 <= domain_id <= 232:
        raise ValueError(f"ros2.domain_id must be within 0..232, got {domain_id!r}")
    if interface and interface not in dds_link.interfaces():
        raise ValueError(f"ros2.interface: no network interface {interface!r} here "
                         f"(available: {', '.join(dds_link.interfaces())})")


def participant(domain_id: int, interface: str) -> DomainParticipant:
    """The process's participant in ``domain_id``: on ``interface``, or ('') as Cyclone's
    configuration (``CYCLONEDDS_URI``) says."""
    check_domain(domain_id, interface)
    if interface:
        return dds_link.participant(domain_id, interface)
    with _LOCK:
        if domain_id not in _PARTICIPANTS:
            try:
                _PARTICIPANTS[domain_id] = DomainParticipant(domain_id)
            except DDSException as e:
                uri = os.environ.get("CYCLONEDDS_URI")
                raise LinkError(f"cannot join DDS domain {domain_id}"
                                f"{f' (CYCLONEDDS_URI={uri})' if uri else ''}: {e}") from None
        return _PARTICIPANTS[domain_id]


class Writer:
    """Publishes messages of one type on one ROS 2 topic."""

    def __init__(self, dp: DomainParticipant, topic: str, cls: type, profile: str = "default",
                 depth: int | None = None):
        self.topic = topic
        self.writer = DataWriter(dp, Topic(dp, dds_topic(topic), cls), qos=qos(profile, depth))
        self.published = 0

    def write(self, message) -> None:
        self.write_bytes(cdr.encode(message))

    def write_bytes(self, data: bytes) -> None:
        """Publish a serialized message (CDR with its encapsulation header)."""
        ret = ddspy_write(self.writer._ref, data)
        if ret < 0:
            raise LinkError(f"DDS write on {self.topic} failed ({ret})")
        self.published += 1

    def matched(self) -> int:
        return len(self.writer.get_matched_subscriptions())


class Reader:
    """Takes the serialized messages of one type on one ROS 2 topic, with the time each was
    written (the DDS source timestamp, ns since the epoch on the writer's clock) and the
    instance handle of its writer."""

    def __init__(self, dp: DomainParticipant, topic: str, cls: type, profile: str = "default",
                 depth: int | None = None):
        self.topic = topic
        self.cls = cls
        self.reader = DataReader(dp, Topic(dp, dds_topic(topic), cls), qos=qos(profile, depth))
        self.waitset = WaitSet(dp)
        self.condition = ReadCondition(self.reader, _ANY)
        self.waitset.attach(self.condition)
        self.depth = depth or 10

    def take(self, timeout: float) -> list[tuple[bytes, int, int]]:
        """(data, source timestamp ns, writer handle) of the samples waiting or arriving
        within ``timeout`` s."""
        self.waitset.wait(int(timeout * 1e9))
        ret = ddspy_take(self.reader._ref, _ANY, self.depth)
        if isinstance(ret, int):
            raise LinkError(f"DDS take on {self.topic} failed ({ret})")
        return [(data, info.source_timestamp, info.publication_handle)
                for data, info in ret if info.valid_data]

    def serve(self, handle, stop: threading.Event, refused, period: float) -> None:
        """Hand each sample's bytes to ``handle`` until ``stop`` is set (a receiving
        thread's loop): a failing take or a bug in ``handle`` is counted in ``refused``
        (:class:`hardware.refusals.Refusals`) as ``handler_error``, never fatal, and receiving
        goes on after ``period`` s."""
        while not stop.is_set():
            try:
                for data, _, _ in self.take(period):
                    handle(data)
            except Exception as e:  # a bug or a failing take: counted and logged, never fatal
                refused.refuse("handler_error", f"{type(e).__name__}: {e}")
                time.sleep(period)

    def matched(self) -> int:
        return len(self.reader.get_matched_publications())

    def close(self) -> None:
        if self.waitset is not None:
            self.waitset.detach(self.condition)
            self.condition = self.reader = self.waitset = None


class Publications:
    """Watches DDS discovery for the publications on one ROS 2 topic that a reader of type
    ``cls`` with QoS ``profile`` does not hear: another type (a ``TwistStamped`` publisher
    where ``Twist`` is read), or best-effort writers where the reader is reliable. DDS never
    delivers their messages, so each such publication is reported once by :meth:`poll`."""

    def __init__(self, dp: DomainParticipant, topic: str, cls: type, profile: str):
        self.dds_topic = dds_topic(topic)
        self.type_name = cls.__idl_typename__
        self.reliable = profile == "default"
        self.reader = BuiltinDataReader(dp, BuiltinTopicDcpsPublication)
        self._seen: set[str] = set()

    def poll(self) -> list[tuple[str, str]]:
        """(reason, detail) of each publication on the topic seen for the first time that
        does not match: ``wrong_type`` (detail: its type) or ``incompatible_qos``."""
        found = []
        for pub in self.reader.take(64):
            if getattr(pub, "topic_name", None) != self.dds_topic:
                continue
            key = str(pub.key)
            if key in self._seen:
                continue
            self._seen.add(key)
            if pub.type_name != self.type_name:
                found.append(("wrong_type", pub.type_name))
            elif self.reliable and not _reliable(pub.qos):
                found.append(("incompatible_qos", "a best-effort writer"))
        return found


def _reliable(q: Qos) -> bool:
    """Whether a discovered writer's QoS offers reliable delivery (DDS writers default to
    reliable when the policy is absent)."""
    if q is None or Policy.Reliability not in q:
        return True
    return isinstance(q[Policy.Reliability], Policy.Reliability.Reliable)
