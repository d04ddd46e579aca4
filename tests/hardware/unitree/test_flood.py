"""A UDP flood on the bridge's port: one receive call reads a bounded batch (the rest waits in
the socket for the next call), so the link thread keeps sending commands at its rate and its
watchdogs keep running while a second process floods the port faster than the link can read
(real UDP on loopback, the link in its own process, the fake robot in another). Before, one
receive call read until the socket ran dry, which under such a flood it never did: the command
tick and the stale-state watchdog stopped.

The first test is the mechanism, exactly; the second its effect, measured: the command rate
before and during the flood, side by side in one run (the flood must outrun the link, so the
flooder sends 512 datagrams per system call, at the link's raised priority where allowed; on a
machine whose other work starves the flooder, the unbounded reading keeps up with it, and only
the first test tells the two apart).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time

import numpy as np
from unitree_helpers import ROOT, free_udp_port, start_fake_process, wait_for

import robots
from hardware.safety.layer import SafetyConfig
from hardware.unitree.udp_link import MAX_BATCH, UdpLink
from hardware.unitree.udp_plant import UnitreeUdpPlant

#: The flooder: 64-byte datagrams to 127.0.0.1:PORT for SECONDS, 512 per sendmmsg(2) call, so
#: that the kernel, not Python, sets its pace; prints how many it sent.
FLOODER = """
import ctypes, socket, sys, time
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
class msghdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32),
                ("iov", ctypes.POINTER(iovec)), ("iovlen", ctypes.c_size_t),
                ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                ("flags", ctypes.c_int)]
class mmsghdr(ctypes.Structure):
    _fields_ = [("hdr", msghdr), ("len", ctypes.c_uint)]
libc = ctypes.CDLL(None, use_errno=True)
port, seconds, batch = int(sys.argv[1]), float(sys.argv[2]), 512
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.connect(("127.0.0.1", port))
payload = ctypes.create_string_buffer(64)
iov = iovec(ctypes.cast(payload, ctypes.c_void_p), 64)
messages = (mmsghdr * batch)()
for m in messages:
    m.hdr.iov, m.hdr.iovlen = ctypes.pointer(iov), 1
sent, end = 0, time.monotonic() + seconds
while time.monotonic() < end:
    sent += max(libc.sendmmsg(sock.fileno(), messages, batch, 0), 0)
print(sent)
"""
FLOOD_S = 5.0
WINDOW_S = 2.0
STATE_TIMEOUT = 0.5


def flood(port: int, seconds: float) -> subprocess.Popen:
    """The flooder in a process of its own, at the link process's raised priority where the
    system allows it (the flood must outrun the link's reading)."""
    def raise_priority():
        with contextlib.suppress(PermissionError):
            os.nice(-10)

    return subprocess.Popen([sys.executable, "-c", FLOODER, str(port), str(seconds)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=raise_priority)


def rate(times: np.ndarray, start: float, end: float) -> float:
    return float(np.count_nonzero((times >= start) & (times < end)) / (end - start))


def test_one_receive_reads_a_bounded_batch_and_leaves_the_rest_queued():
    link = UdpLink("127.0.0.1", 9, 0, "127.0.0.1")
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        for i in range(3 * MAX_BATCH + 5):
            sender.sendto(i.to_bytes(2, "little"), link.sock.getsockname())
        batches = [link.receive(0.1) for _ in range(5)]
    finally:
        sender.close()
        link.close()
    assert [len(b) for b in batches] == [MAX_BATCH] * 3 + [5, 0]
    got = [int.from_bytes(data, "little") for b in batches for data, _ in b]
    assert got == list(range(3 * MAX_BATCH + 5))  # nothing lost, in order


def test_the_link_keeps_its_rate_and_watchdogs_under_a_udp_flood(tmp_path):
    port, local = free_udp_port(), free_udp_port()
    fake = start_fake_process(["--robot", "a1", "--transport", "udp", "--port", str(port),
                               "--start", "standing", "--gantry"])
    log = tmp_path / "link.npz"
    plant = UnitreeUdpPlant(robots.info("a1"), robot_ip="127.0.0.1", robot_port=port,
                            local_port=local, log_file=str(log),
                            safety=SafetyConfig(ramp_time=0.2, state_timeout=STATE_TIMEOUT))
    flooder = None
    try:
        plant.prepare()  # holding the home pose: one command every 2 ms
        base = (time.monotonic(), time.monotonic() + WINDOW_S)
        time.sleep(WINDOW_S)
        flooder = flood(local, FLOOD_S)
        time.sleep(0.5)  # the flooder is up and the socket full
        flooded = (time.monotonic(), time.monotonic() + WINDOW_S)
        time.sleep(WINDOW_S)
        assert plant.damping_reason is None, plant.damping_reason
        os.kill(fake.pid, signal.SIGSTOP)  # the robot goes silent, the flood goes on
        silent = time.monotonic()
        tripped = wait_for(lambda: plant.damping_reason is not None, STATE_TIMEOUT + 1.0)
        trip_delay = time.monotonic() - silent
        still_flooding = flooder.poll() is None
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(fake.pid, signal.SIGCONT)
        sent = int(flooder.communicate(timeout=30)[0] or 0) if flooder is not None else 0
        plant.close()
        fake.send_signal(signal.SIGINT)
        fake.communicate(timeout=10)
    stats = plant.stats()
    sent_t = np.load(log)["cmd_t"]
    before, during = rate(sent_t, *base), rate(sent_t, *flooded)
    print(f"\nflood of {sent / FLOOD_S / 1e3:.0f} k datagrams/s, {stats['refused_packets']} "
          f"read and refused: commands {before:.0f} Hz before, {during:.0f} Hz during; "
          f"stale-state trip {trip_delay * 1e3:.0f} ms after the robot went silent")
    # the flood outran the link: the kernel dropped what it could not queue
    assert stats["refused_packets"] < sent, (stats, sent)
    # loose: the flooder takes a processor of this 2-core machine from everything else (a
    # link stuck reading the flood sends nothing, or a few per cent of its commands)
    assert during > 0.5 * before, (before, during)
    assert tripped and still_flooding, (plant.damping_reason, trip_delay)
    assert plant.damping_reason.startswith("stale state: none for"), plant.damping_reason
    assert trip_delay < STATE_TIMEOUT + 0.3
