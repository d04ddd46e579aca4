"""Network faults injected in user space, for tests and soak runs only (never on a robot).

The development machines' kernel has no ``netem`` qdisc, so a lossy link is made here, on the
real transports:

- :class:`UdpFaultProxy`: a UDP relay on loopback between a legacy-UDP bridge (its
  ``robot_port`` set to the proxy's port) and the fake robot, applying faults to each direction;
- :class:`FaultyDdsLink`: wraps a :class:`hardware.unitree.dds_link.DdsLink` (the fake robot's,
  ``mpc-fake-robot --net-faults``), so the samples it writes and takes go through the faults.

Faults (:class:`Faults`, seeded, one random stream per direction): loss, delay with jitter,
duplication, reordering (a packet held back behind its successors), corruption (one byte
flipped; the checksum is left as it was, so the receiver must notice), and silence (everything
dropped for a while, timed from the bridge's first packet, so that it falls in the run whatever
the start-up took). Every decision is counted (:class:`FaultInjector.counts`).
"""

from __future__ import annotations

import heapq
import itertools
import select
import socket
import threading
import time as _time
from dataclasses import dataclass, fields

import numpy as np

#: Extra hold-back of a reordered packet: a few of the 2 ms command/state periods.
REORDER_HOLD = 0.006


@dataclass(frozen=True)
class Faults:
    """What happens to each packet, independently: dropped with probability ``loss``; delayed by
    ``delay`` plus a uniform jitter in +-``jitter`` (s); sent twice with probability
    ``duplicate``; held back by :data:`REORDER_HOLD` with probability ``reorder``; one byte
    flipped with probability ``corrupt``; and everything dropped from ``silence_at`` for
    ``silence_for`` seconds after the bridge's first packet."""

    loss: float = 0.0
    delay: float = 0.0
    jitter: float = 0.0
    duplicate: float = 0.0
    reorder: float = 0.0
    corrupt: float = 0.0
    silence_at: float = 0.0
    silence_for: float = 0.0
    seed: int = 0

    def __post_init__(self):
        for name in ("loss", "duplicate", "reorder", "corrupt"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"fault {name} is a probability, got {getattr(self, name)}")
        for name, most in (("delay", 1.0), ("jitter", 1.0), ("silence_at", 3600.0),
                           ("silence_for", 60.0)):
            if not 0.0 <= getattr(self, name) <= most:
                raise ValueError(f"fault {name} must be within 0..{most:g} s, got "
                                 f"{getattr(self, name)}")

    @classmethod
    def parse(cls, spec: str) -> Faults:
        """``"loss=0.3,delay=0.02,jitter=0.01,seed=1"`` (empty: no faults)."""
        known = [f.name for f in fields(cls)]
        values: dict[str, float | int] = {}
        for item in filter(None, (s.strip() for s in spec.split(","))):
            key, sep, value = item.partition("=")
            if not sep or key not in known:
                raise ValueError(f"fault {item!r}: expected one of {', '.join(known)} as KEY=VALUE")
            values[key] = int(value) if key == "seed" else float(value)
        return cls(**values)


class FaultInjector:
    """One direction of a faulty link: :meth:`push` packets as they are sent, :meth:`due`
    returns those to deliver by now (in delivery order). ``clock`` (shared by the two
    directions) holds the time of the bridge's first packet, which the direction from the
    bridge (``from_bridge``) sets. Corruption spares the first ``keep`` bytes."""

    def __init__(self, faults: Faults, stream: int, clock: list[float], from_bridge: bool,
                 keep: int = 0):
        self.faults = faults
        self.keep = keep
        self.rng = np.random.default_rng([faults.seed, stream])
        self.clock = clock
        self.from_bridge = from_bridge
        self.queue: list[tuple[float, int, bytes]] = []
        self.order = itertools.count()
        self.counts = {"packets": 0, "lost": 0, "silenced": 0, "duplicated": 0,
                       "reordered": 0, "corrupted": 0, "delivered": 0}

    def silent(self, now: float) -> bool:
        f = self.faults
        return (f.silence_for > 0 and bool(self.clock)
                and 0 <= now - self.clock[0] - f.silence_at < f.silence_for)

    def push(self, packet: bytes, now: float) -> None:
        f, rng, c = self.faults, self.rng, self.counts
        c["packets"] += 1
        if self.from_bridge and not self.clock:
            self.clock.append(now)
        draws = rng.random(5)  # five draws a packet (two more to corrupt one)
        if self.silent(now):
            c["silenced"] += 1
            return
        if draws[0] < f.loss:
            c["lost"] += 1
            return
        corrupt = bool(draws[1] < f.corrupt and len(packet) > self.keep)
        if corrupt:
            at = int(rng.integers(self.keep, len(packet)))
            packet = packet[:at] + bytes([packet[at] ^ int(rng.integers(1, 256))]) + \
                packet[at + 1:]
        delay = f.delay + (f.jitter * (2 * draws[2] - 1) if f.jitter else 0.0)
        if draws[3] < f.reorder:
            delay += REORDER_HOLD
            c["reordered"] += 1
        copies = 2 if draws[4] < f.duplicate else 1
        c["duplicated"] += copies - 1
        c["corrupted"] += copies if corrupt else 0  # corrupted copies delivered
        for _ in range(copies):
            heapq.heappush(self.queue, (now + max(delay, 0.0), next(self.order), packet))

    def due(self, now: float) -> list[bytes]:
        out = []
        while self.queue and self.queue[0][0] <= now:
            out.append(heapq.heappop(self.queue)[2])
        self.counts["delivered"] += len(out)
        return out

    def next_due(self) -> float:
        return self.queue[0][0] if self.queue else np.inf


class UdpFaultProxy:
    """A UDP relay on 127.0.0.1: datagrams to ``port`` go to ``robot`` through the ``to_robot``
    faults, the robot's answers go back to the last sender through the ``to_bridge`` faults.
    ``port`` 0 picks a free one (:attr:`port`). Runs in a thread from :meth:`start` to
    :meth:`stop`."""

    def __init__(self, robot: tuple[str, int], to_robot: Faults, to_bridge: Faults,
                 port: int = 0):
        if robot[0] != "127.0.0.1":
            raise ValueError("the fault proxy relays on loopback only")
        self.robot = robot
        self.front = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.front.bind(("127.0.0.1", port))
        self.back = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.back.bind(("127.0.0.1", 0))
        self.port = self.front.getsockname()[1]
        clock: list[float] = []
        self.up = FaultInjector(to_robot, 0, clock, from_bridge=True)
        self.down = FaultInjector(to_bridge, 1, clock, from_bridge=False)
        self.bridge: tuple[str, int] | None = None
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="udp-fault-proxy", daemon=True)

    def start(self) -> UdpFaultProxy:
        self.thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.thread.join(timeout=2.0)
        self.front.close()
        self.back.close()

    def counts(self) -> dict[str, dict[str, int]]:
        return {"to_robot": dict(self.up.counts), "to_bridge": dict(self.down.counts)}

    def _run(self) -> None:
        while not self._stop.is_set():
            wake = min(self.up.next_due(), self.down.next_due(), _time.monotonic() + 0.05)
            ready, _, _ = select.select([self.front, self.back], [], [],
                                        max(0.0, wake - _time.monotonic()))
            now = _time.monotonic()
            if self.front in ready:
                data, self.bridge = self.front.recvfrom(4096)
                self.up.push(data, now)
            if self.back in ready:
                self.down.push(self.back.recvfrom(4096)[0], now)
            for data in self.up.due(now):
                self.back.sendto(data, self.robot)
            for data in self.down.due(now):
                if self.bridge is not None:
                    self.front.sendto(data, self.bridge)


class FaultyDdsLink:
    """A DDS link whose written samples (``outbound``) and taken samples (``inbound``) pass
    through faults; the samples still cross real cyclonedds. A delayed outbound sample leaves
    at the first :meth:`send` or :meth:`receive` after it is due (the fake robot calls both
    every 2 ms). Corruption spares the 4-byte encapsulation header: cyclonedds refuses to write
    a sample whose encoding it does not know, and checks it on receipt."""

    def __init__(self, link, outbound: Faults, inbound: Faults):
        self.link = link
        clock: list[float] = []
        self.outbound = FaultInjector(outbound, 2, clock, from_bridge=False, keep=4)
        self.inbound = FaultInjector(inbound, 3, clock, from_bridge=True, keep=4)

    def counts(self) -> dict[str, dict[str, int]]:
        return {"outbound": dict(self.outbound.counts), "inbound": dict(self.inbound.counts)}

    def _flush(self, now: float) -> None:
        for sample in self.outbound.due(now):
            self.link.send(sample)

    def send(self, sample: bytes) -> None:
        now = _time.monotonic()
        self.outbound.push(sample, now)
        self._flush(now)

    def receive(self, timeout: float) -> list[bytes]:
        deadline = _time.monotonic() + timeout
        while True:
            wait = min(deadline, self.inbound.next_due(), self.outbound.next_due())
            for sample in self.link.receive(max(0.0, wait - _time.monotonic())):
                self.inbound.push(sample, _time.monotonic())
            now = _time.monotonic()
            self._flush(now)
            out = self.inbound.due(now)
            if out or now >= deadline:
                return out

    def close(self) -> None:
        self.link.close()
