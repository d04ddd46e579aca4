"""The bound UDP socket every UDP receiver opens, and the one line each names a taken address
with: the legacy Unitree link and the fake robot's truth stream."""

from __future__ import annotations

import select
import socket
from pathlib import Path

import pytest

import robots
from hardware.fake.sim_truth import SimTruth
from hardware.udp import bound_socket
from hardware.unitree.udp_link import LinkError, UdpLink


@pytest.fixture
def taken_port():
    """A loopback UDP port another socket holds."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


def open_sockets() -> int:
    return sum(1 for fd in Path("/proc/self/fd").iterdir()
               if fd.exists() and "socket:" in str(fd.readlink()))


def test_a_bound_socket_receives_without_blocking():
    with bound_socket("127.0.0.1", 0) as sock:
        assert not sock.getblocking()  # a receiver polls it: a read never waits
        with pytest.raises(BlockingIOError):
            sock.recv(16)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as out:
            out.sendto(b"ping", sock.getsockname())
        assert select.select([sock], [], [], 2.0)[0]
        assert sock.recv(16) == b"ping"


def test_a_taken_address_raises_and_leaves_no_socket_open(taken_port):
    before = open_sockets()
    with pytest.raises(OSError) as failed:
        bound_socket("127.0.0.1", taken_port)
    # closed at once, not left to the garbage collector (the traceback still holds it here)
    assert open_sockets() == before, failed.value


def test_the_udp_link_names_a_taken_port_in_one_line(taken_port):
    with pytest.raises(LinkError, match=rf"^cannot bind UDP 127\.0\.0\.1:{taken_port}: "
                                        r"Address already in use$"):
        UdpLink("127.0.0.1", 8007, taken_port, "127.0.0.1")


def test_the_truth_stream_names_a_taken_port_in_one_line(taken_port):
    with pytest.raises(ValueError, match=rf"^sim_truth: cannot listen on 127\.0\.0\.1:"
                                         rf"{taken_port}: Address already in use$"):
        SimTruth(robots.load_planning_model("go1"), robots.info("go1"), port=taken_port)
