"""Helpers of the Unitree hardware tests: free ports, DDS domains, what a fake robot received,
waiting, and the fake robot as a process of its own."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from hardware.fake.server import FakeRobot

ROOT = Path(__file__).resolve().parents[2]


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def domain_id() -> int:
    """A DDS domain id no other test run on this host is likely to use, 1-80, so that with the
    tests' offsets (up to +19) it stays under 100. Cyclone DDS binds UDP ports 7400 + 250·d + a
    few: under d = 100 they stay below Linux's ephemeral range (32768-60999), where any socket
    the kernel numbers (another test's, the system's) could hold one ("address in use"; ROS 2
    keeps domain ids at or under 101 on Linux for this reason). Not 0, a real robot's domain."""
    return 1 + os.getpid() % 80


def commands(fake: FakeRobot, after: float = -np.inf) -> dict[str, np.ndarray]:
    """What the fake robot received (monotonic time > ``after``), as arrays. The fake robot
    may be appending meanwhile: the rows all fields have are taken."""
    fields = ("t", "mode", "q", "dq", "tau", "kp", "kd")
    n = min(len(fake.log[f"cmd_{f}"]) for f in fields)
    rows = {f: np.array(fake.log[f"cmd_{f}"][:n]) for f in fields}
    keep = rows["t"] > after
    return {f: v[keep] if n else v for f, v in rows.items()}


def first_damping(fake: FakeRobot, after: float, kd: float) -> float:
    """Time of the first damping command (Kp 0, Kd ``kd`` on every used motor) received after
    ``after``; inf if none."""
    c = commands(fake, after)
    used = fake.sim.slots
    damping = (np.all(c["kp"][:, used] == 0, axis=1)
               & np.all(np.isclose(c["kd"][:, used], kd, atol=0.07), axis=1))
    hits = np.flatnonzero(damping)
    return float(c["t"][hits[0]]) if hits.size else float("inf")


def wait_for(predicate, timeout: float, step: float = 0.005) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def assert_stale_state_damps_within_50_ms(fake: FakeRobot, plant) -> None:
    """Stop the fake's state stream under a running bridge: the bridge trips on stale state and
    the fake receives damping within 50 ms of its last state."""
    stopped = fake.stop_publishing()
    assert wait_for(lambda: plant.damping_reason is not None, 1.0)
    assert plant.damping_reason.startswith("stale state")
    time.sleep(0.1)
    delay = first_damping(fake, stopped, plant.safety.damping_kd) - stopped
    assert delay < 0.050, (f"damping {delay * 1e3:.1f} ms after the state stopped (bridge "
                           f"tripped after {(plant.damping_time - stopped) * 1e3:.1f} ms)")


def group_alive(pgid: int) -> bool:
    """Whether any process of process group ``pgid`` is still alive."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def link_pid(pid: int) -> int | None:
    """The pid of the link process (a multiprocessing child) that process ``pid`` (a
    controller, mpc-run) started, or None. Other children (the resource tracker, programs its
    imports run) are told apart by their command line."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return None
    for child in children:
        with contextlib.suppress(OSError):
            if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                return int(child)
    return None


def start_fake_process(args: list[str]) -> subprocess.Popen:
    """``mpc-fake-robot`` in a process of its own, at raised priority where allowed: it stands
    in for hardware with a processor of its own."""
    def raise_priority():
        with contextlib.suppress(PermissionError):
            os.nice(-10)

    return subprocess.Popen([sys.executable, "-m", "hardware.fake.cli", "--quiet", *args],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=raise_priority)
