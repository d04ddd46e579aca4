"""DDS endpoints for Unitree SDK2 topics on cyclonedds, with raw sample I/O.

A participant is made for a domain id on one network interface (the robot: domain 0 on the
wired interface; tests: another id on ``lo``). Samples are written and taken as bytes (see
:mod:`hardware.unitree.sdk2_messages`) through cyclonedds' own C-layer calls, which skips its
generic Python serializer (~1.5 ms per 1 kB message, too slow for 500 Hz). The topics are still
created with the project's IDL types, so discovery and type matching are cyclonedds' own.
"""

from __future__ import annotations

import socket
import threading
from pathlib import Path

from cyclonedds._clayer import ddspy_take, ddspy_write
from cyclonedds.core import (
    DDSException,
    InstanceState,
    ReadCondition,
    SampleState,
    ViewState,
    WaitSet,
)
from cyclonedds.domain import Domain, DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.qos import Policy, Qos
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

from hardware.unitree.udp_link import LinkError

_DOMAINS: dict[int, tuple[str, Domain, DomainParticipant]] = {}
_LOCK = threading.Lock()
_ANY = SampleState.Any | ViewState.Any | InstanceState.Any


def interfaces() -> list[str]:
    return [name for _, name in socket.if_nameindex()]


def check_domain(domain_id: int, interface: str) -> None:
    """:class:`LinkError` unless the domain id is valid and the interface exists here."""
    if not 0 <= domain_id <= 232:
        raise LinkError(f"DDS domain id {domain_id} is outside 0..232")
    if interface not in interfaces():
        raise LinkError(f"no network interface {interface!r} (available: "
                        f"{', '.join(interfaces())})")


def is_loopback(interface: str) -> bool:
    """Whether ``interface`` is this host's loopback (Linux flags; by name elsewhere)."""
    try:
        flags = int(Path(f"/sys/class/net/{interface}/flags").read_text(), 16)
    except (OSError, ValueError):
        return interface in ("lo", "lo0")
    return bool(flags & 0x8)  # IFF_LOOPBACK


def domain_config(domain_id: int, interface: str) -> str:
    """The Cyclone DDS configuration of the participant: the one interface and, on loopback,
    discovery by unicast as well. Cyclone DDS 0.10.2 (Unitree's SDK, so also Unitree programs
    and simulators on this machine) turns multicast off on a loopback interface, which lacks the
    multicast flag, and looks for the other participants at the unicast ports of participant
    indices 0-9 on this host; cyclonedds 11 keeps multicast on loopback and, left alone, takes a
    random unicast port, so the two never meet (seen: no sample either way). Naming 127.0.0.1
    as a peer makes this side send discovery to every participant index's port and take an
    index port of its own, so each side finds the other."""
    discovery = ('<Discovery><Peers><Peer address="127.0.0.1"/></Peers></Discovery>'
                 if is_loopback(interface) else "")
    return (f'<CycloneDDS><Domain Id="{domain_id}"><General><Interfaces>'
            f'<NetworkInterface name="{interface}"/></Interfaces></General>{discovery}'
            f'</Domain></CycloneDDS>')


def participant(domain_id: int, interface: str) -> DomainParticipant:
    """The process's participant in ``domain_id``, bound to network ``interface``."""
    check_domain(domain_id, interface)
    with _LOCK:
        if domain_id in _DOMAINS:
            bound, _, dp = _DOMAINS[domain_id]
            if bound != interface:
                raise LinkError(f"DDS domain {domain_id} is already open on {bound!r}")
            return dp
        try:
            domain = Domain(domain_id, domain_config(domain_id, interface))
            dp = DomainParticipant(domain_id)
        except DDSException as e:
            raise LinkError(f"cannot join DDS domain {domain_id} on {interface!r}: {e}") from None
        _DOMAINS[domain_id] = (interface, domain, dp)
        return dp


class DdsLink:
    """Reads samples of ``read_topic`` and (unless ``write_topic`` is None) writes samples of
    ``write_topic``; the readers ask best-effort delivery of the latest samples, which any
    writer satisfies."""

    def __init__(self, domain_id: int, interface: str, read_topic: str, read_type,
                 write_topic: str | None, write_type=None, depth: int = 8):
        self.dp = participant(domain_id, interface)
        reader_qos = Qos(Policy.Reliability.BestEffort, Policy.History.KeepLast(depth))
        self.reader = DataReader(self.dp, Topic(self.dp, read_topic, read_type), qos=reader_qos)
        self.waitset = WaitSet(self.dp)
        self.condition = ReadCondition(self.reader, _ANY)
        self.waitset.attach(self.condition)
        self.writer = None
        if write_topic is not None:
            qos = Qos(Policy.Reliability.Reliable(0), Policy.History.KeepLast(1))
            self.writer = DataWriter(self.dp, Topic(self.dp, write_topic, write_type), qos=qos)
        self.depth = depth

    def send(self, sample: bytes) -> None:
        if self.writer is None:
            raise LinkError("this DDS link has no writer (dry run)")
        ret = ddspy_write(self.writer._ref, sample)
        if ret < 0:
            raise LinkError(f"DDS write failed ({ret})")

    def receive(self, timeout: float) -> list[bytes]:
        """Valid samples waiting or arriving within ``timeout`` s."""
        return [data for data, _ in self.receive_from(timeout)]

    def receive_from(self, timeout: float) -> list[tuple[bytes, int]]:
        """Valid samples waiting or arriving within ``timeout`` s (at most ``depth``), each with
        the instance handle of the writer that published it (the reader's handle of the
        matched publication, one per writer)."""
        if timeout > 0:
            self.waitset.wait(int(timeout * 1e9))
        ret = ddspy_take(self.reader._ref, _ANY, self.depth)
        if isinstance(ret, int):
            raise LinkError(f"DDS take failed ({ret})")
        return [(data, info.publication_handle) for data, info in ret if info.valid_data]

    def writer_guid(self, handle: int) -> str:
        """The GUID of the matched writer with instance handle ``handle`` ("?" if unknown)."""
        try:
            endpoint = self.reader.get_matched_publication_data(handle)
        except DDSException:
            return "?"
        return str(endpoint.key) if endpoint is not None else "?"

    def matched_writers(self) -> int:
        return len(self.reader.get_matched_publications())

    def close(self) -> None:
        """Detach and drop the endpoints (cyclonedds deletes an entity with its last reference);
        the participant stays for the process's other links."""
        if self.waitset is None:
            return
        self.waitset.detach(self.condition)
        self.condition = self.reader = self.writer = self.waitset = None
