"""Fixtures shared by the hardware tests: in-process fake Unitree robots, and the LCM transport.

Helpers (free ports, DDS domains, the fake robot as a process) are in ``unitree_helpers``,
importable from every test below this directory.

LCM's udpm:// multicast needs a route for the group; a test group (not LCM's default, so real
LCM traffic on this host is untouched) is routed through loopback when the tests may add routes
(root), and the route is removed afterwards. Without that, udpm:// is probed as the host is set
up (a default route also delivers multicast locally with ttl=0). Tests that can run in one
process fall back to memq:// when udpm:// does not work, and say so with a warning.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import time
import warnings
from dataclasses import dataclass

import lcm
import pytest
from unitree_helpers import domain_id, free_udp_port

import robots
from hardware.fake.server import FakeRobot

TEST_GROUP = "239.255.76.99"


@dataclass(frozen=True)
class LcmTransport:
    url: str
    #: False for memq:// (one process, one LCM instance).
    multicast: bool
    how: str


def _route_via_lo(group: str) -> bool:
    out = subprocess.run(["ip", "route", "get", group], capture_output=True, text=True)
    return out.returncode == 0 and " dev lo " in out.stdout


def _udpm_works(url: str) -> bool:
    """Two LCM instances (two sockets) exchange a message."""
    try:
        tx, rx = lcm.LCM(url), lcm.LCM(url)
    except Exception:  # the binding raises a bare RuntimeError when it cannot join
        return False
    got = []
    rx.subscribe("PROBE", lambda c, d: got.append(d))
    deadline = time.monotonic() + 1.0
    while not got and time.monotonic() < deadline:
        tx.publish("PROBE", b"probe")
        rx.handle_timeout(50)
    return bool(got)


@pytest.fixture(scope="session")
def lcm_transport():
    # A port of our own: concurrent test runs on this host do not hear each other. Above the
    # ports of the tests' DDS domains (7400-32200, unitree_helpers.domain_id).
    url = f"udpm://{TEST_GROUP}:{random.randint(33000, 60000)}?ttl=0"
    added = False
    if shutil.which("ip") and not _route_via_lo(TEST_GROUP) and os.geteuid() == 0:
        added = subprocess.run(["ip", "route", "add", f"{TEST_GROUP}/32", "dev", "lo"],
                               capture_output=True).returncode == 0
    try:
        if _udpm_works(url):
            how = "route via lo added by the tests" if added else (
                "route via lo" if shutil.which("ip") and _route_via_lo(TEST_GROUP)
                else "the host's multicast route")
            print(f"\nLCM tests over {url} ({how})")
            yield LcmTransport(url, True, how)
        else:
            warnings.warn(f"LCM udpm:// does not work here (no multicast route for {TEST_GROUP}"
                          " and no permission to add one): LCM tests run over memq:// in one "
                          "process; tests needing two processes fail", stacklevel=1)
            yield LcmTransport("memq://", False, "memq fallback")
    finally:
        if added:
            subprocess.run(["ip", "route", "del", f"{TEST_GROUP}/32", "dev", "lo"],
                           capture_output=True)


@pytest.fixture
def udpm_url(lcm_transport) -> str:
    """An LCM URL shared between processes; fails (never skips) without multicast."""
    assert lcm_transport.multicast, (
        "this test needs LCM between processes: add a multicast route, e.g. "
        f"'ip route add {TEST_GROUP}/32 dev lo' (root)")
    return lcm_transport.url


@pytest.fixture
def fake_robot():
    """``fake_robot(name, transport, **options)``: a started in-process fake robot."""
    started = []

    def start(name: str, transport: str = "udp", **options) -> FakeRobot:
        if transport == "udp":
            options.setdefault("port", free_udp_port())
        else:
            options.setdefault("domain_id", domain_id())
        fake = FakeRobot(robots.info(name), transport, **options)
        fake.port = options.get("port")
        started.append(fake)
        return fake.start()

    yield start
    for fake in started:
        fake.stop()
