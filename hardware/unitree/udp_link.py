"""A UDP socket to a legacy Unitree robot: datagrams out to the robot, datagrams in.

The robot (192.168.123.10:8007 for low level) streams its state to the client that last sent
it a command, so the client binds a fixed local port (8080 by convention) and sends first.

A client's link (``only_peer=True``) is a connected socket: the kernel delivers it the robot's
datagrams only (what was queued before the connect is dropped), and drops anyone else's
before they take room in its receive queue; so no one else on the network can feed the
controller and the trips a state. Without that a flood from another address fills the queue,
the robot's states are dropped with the rest, and the stale-state watchdog damps a robot that
is streaming (it did, in CI's flood test). A connected socket also hears the network's "port
unreachable" for a robot not yet listening, as a refused send or receive: counted, never fatal
(the stale-state watchdog judges a silent robot).

One :meth:`UdpLink.receive` returns at most ``max_batch`` datagrams: a flood the kernel lets
through (from the robot's own address; any address for the fake robot, which answers whoever
commands it) would otherwise keep the caller reading until the socket ran dry, which it never
does under a flood, and the bridge's command tick and watchdogs would stop. What is left waits
for the next call.
"""

from __future__ import annotations

import ipaddress
import select

from hardware.udp import bound_socket


class LinkError(OSError):
    """The link cannot be opened or used; the message is fit for one line."""


def check_addresses(peer_ip: str, peer_port: int, local_port: int, local_ip: str) -> None:
    """:class:`LinkError` unless the addresses are IPv4 addresses and the ports UDP ports."""
    for what, ip in (("robot address", peer_ip), ("local address", local_ip)):
        try:
            ipaddress.IPv4Address(ip)
        except ValueError:
            raise LinkError(f"{what} {ip!r} is not an IPv4 address") from None
    for what, port in (("robot port", peer_port), ("local port", local_port)):
        if not 0 <= port <= 65535:
            raise LinkError(f"{what} {port} is not a UDP port")


#: Datagrams read per :meth:`UdpLink.receive` at most: a 500 Hz robot sends one per tick, a
#: link thread starved for 60 ms finds 30.
MAX_BATCH = 32


class UdpLink:
    def __init__(self, peer_ip: str, peer_port: int, local_port: int, local_ip: str = "0.0.0.0",
                 bufsize: int = 2048, max_batch: int = MAX_BATCH, only_peer: bool = False):
        check_addresses(peer_ip, peer_port, local_port, local_ip)
        self.peer = (peer_ip, peer_port)
        self.bufsize = bufsize
        self.max_batch = max_batch
        try:
            self.sock = bound_socket(local_ip, local_port)
        except OSError as e:
            raise LinkError(f"cannot bind UDP {local_ip}:{local_port}: {e.strerror}") from None
        if only_peer:
            try:
                self.sock.connect(self.peer)
            except OSError as e:
                self.sock.close()
                raise LinkError(f"cannot reach {peer_ip}:{peer_port}: {e.strerror}") from None
            self._drain()  # queued between the bind and the connect, from anyone
        self.send_errors = 0

    def send(self, payload: bytes) -> None:
        """Send one datagram to the peer; :class:`LinkError` if the network refuses it."""
        try:
            self.sock.sendto(payload, self.peer)
        except (BlockingIOError, ConnectionRefusedError):  # full queue; robot not listening
            self.send_errors += 1
        except OSError as e:
            self.send_errors += 1
            raise LinkError(f"cannot send to {self.peer[0]}:{self.peer[1]}: {e.strerror}") \
                from None

    def receive(self, timeout: float) -> list[tuple[bytes, tuple[str, int]]]:
        """Datagrams waiting or arriving within ``timeout`` s, with their senders: at most
        ``max_batch`` of them (see the module docstring)."""
        out = []
        if timeout > 0:
            ready, _, _ = select.select([self.sock], [], [], timeout)
            if not ready:
                return out
        while len(out) < self.max_batch:
            try:
                out.append(self.sock.recvfrom(self.bufsize))
            except (BlockingIOError, ConnectionRefusedError):
                break
        return out

    def _drain(self) -> None:
        """Drop every datagram waiting (none of them answers a command of ours yet)."""
        while True:
            try:
                self.sock.recv(self.bufsize)
            except (BlockingIOError, ConnectionRefusedError):
                return

    def send_to(self, payload: bytes, addr: tuple[str, int]) -> None:
        """Send one datagram to ``addr`` (the fake robot answers whoever commands it)."""
        try:
            self.sock.sendto(payload, addr)
        except OSError:
            self.send_errors += 1

    def close(self) -> None:
        self.sock.close()
