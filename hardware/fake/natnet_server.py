"""A fake OptiTrack Motive for tests and simulated robots: streams a simulated base pose as a
tracked rigid body over real NatNet UDP.

:class:`FakeNatNetServer` speaks the protocol: it answers connect requests with its server
description on the command port and sends frames of data to the multicast group (through the
interface of ``bind``, so loopback needs no multicast route) and to every unicast client.
:class:`MocapReplay` turns a simulated robot's base pose into what a mocap system would stream:
the rigid body's pose in the mocap frame (Y-up by default), sampled at ``rate``, with noise,
dropouts (frames lost, or sent with tracking invalid) and latency (a frame captured at t leaves
at t + latency, and its stamps say so).
"""

from __future__ import annotations

import logging
import select
import socket
import threading
from collections import deque
from dataclasses import dataclass

import numpy as np

from hardware.mocap import natnet_packets as pk
from hardware.mocap.frames import MocapFrame, base_to_mocap, wxyz_to_xyzw
from hardware.mocap.natnet_packets import FrameOfData, RigidBody, ServerInfo
from hardware.rotations import quat_exp, quat_mul

log = logging.getLogger(__name__)

#: Ticks per second of the fake server's stamps (Windows' QueryPerformanceCounter rate).
CLOCK_FREQUENCY = 10_000_000


class FakeNatNetServer:
    """Answers NatNet clients on ``command_port`` (0: any free port, see :attr:`command_port`)
    and streams the frames given to :meth:`send`."""

    def __init__(self, bind: str = "127.0.0.1", command_port: int = 1510, data_port: int = 1511,
                 multicast_group: str = "239.255.42.99",
                 natnet_version: pk.Version = (3, 1, 0, 0)):
        self.version = natnet_version
        self.multicast_group = multicast_group
        self.data_port = data_port
        self.info = ServerInfo("Motive (legged-mpc fake)", (2, 3, 0, 0), natnet_version,
                               CLOCK_FREQUENCY, data_port, bool(multicast_group),
                               multicast_group or "0.0.0.0")
        self._command = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._command.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._command.bind((bind, command_port))
        self._data = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._data.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(bind))
        self._data.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
        self._data.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 1)
        self.clients: set[tuple[str, int]] = set()
        #: Every address a connect request came from (unicast or not).
        self.connected: set[tuple[str, int]] = set()
        self.sent = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="fake-natnet", daemon=True)
        self._thread.start()

    @property
    def command_port(self) -> int:
        return self._command.getsockname()[1]

    def send(self, frame: FrameOfData) -> None:
        self.send_packet(pk.encode_frame(frame, self.version))
        self.sent += 1

    def send_packet(self, packet: bytes) -> None:
        """Stream ``packet`` as it is (a frame, or a fault: any bytes) to the clients."""
        with self._lock:
            targets = list(self.clients)
        if self.multicast_group:
            self._data.sendto(packet, (self.multicast_group, self.data_port))
        for client in targets:  # unicast: to the address each client connected from
            self._command.sendto(packet, client)

    def announce(self, info: ServerInfo) -> None:
        """A fault: a server description sent unasked to the clients (another NatNet version
        or clock rate mid-run, as a restarted or second Motive would describe itself)."""
        with self._lock:
            targets = list(self.connected)
        packet = pk.encode_server_info(info)
        for client in targets:  # their command sockets, where clients expect descriptions
            self._command.sendto(packet, client)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=1.0)
        self._command.close()
        self._data.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                ready, _, _ = select.select([self._command], [], [], 0.1)
                if not ready:
                    continue
                data, sender = self._command.recvfrom(65536)
                message_id, _ = pk.decode_packet(data)
            except (OSError, ValueError) as e:
                if not self._stop.is_set():
                    log.warning("fake NatNet server: bad request: %s", e)
                continue
            if message_id == pk.CONNECT:
                self._command.sendto(pk.encode_server_info(self.info), sender)
                with self._lock:
                    self.connected.add(sender)
                if not self.multicast_group:
                    with self._lock:
                        self.clients.add(sender)
            elif message_id == pk.KEEPALIVE and not self.multicast_group:
                with self._lock:
                    self.clients.add(sender)
            elif message_id == pk.DISCONNECT:
                with self._lock:
                    self.clients.discard(sender)


@dataclass(frozen=True)
class ReplaySettings:
    """What the fake mocap system does to the truth it streams."""

    rate: float = 100.0
    #: Seconds from capture (mid-exposure) to transmission.
    latency: float = 0.01
    #: Standard deviation of position noise (m, robot world) and orientation noise (rad).
    pos_noise: float = 0.0005
    rot_noise: float = 0.002
    #: Every ``dropout_every`` seconds (0: never) the body is lost for ``dropout_duration``:
    #: frames are not sent, or with ``dropout_untracked`` sent with tracking invalid.
    dropout_every: float = 0.0
    dropout_duration: float = 0.1
    dropout_untracked: bool = False
    rigid_body_id: int = 1
    seed: int = 0


class MocapReplay:
    """Captures a simulated base pose at the mocap rate and streams it after the latency.

    Call :meth:`tick` with the simulation's time and true base pose (world frame, quaternion
    (w, x, y, z)) at every physics step; the stream's clock is the simulation's, so its
    timestamps and stamps are in the robot's clock.
    """

    def __init__(self, server: FakeNatNetServer, frame: MocapFrame,
                 settings: ReplaySettings | None = None):
        self.server = server
        self.frame = frame
        self.settings = s = settings or ReplaySettings()
        self._rng = np.random.default_rng(s.seed)
        self._next_capture: float | None = None
        self._number = 0
        self._queue: deque[tuple[float, FrameOfData]] = deque()

    def dropped(self, t: float) -> bool:
        s = self.settings
        return s.dropout_every > 0 and t > s.dropout_every and (
            t % s.dropout_every) < s.dropout_duration

    def tick(self, time: float, pos: np.ndarray, quat: np.ndarray) -> None:
        s = self.settings
        if self._next_capture is None:
            self._next_capture = time
        if time + 1e-9 >= self._next_capture:
            self._next_capture += 1.0 / s.rate
            self._capture(time, pos, quat)
        while self._queue and self._queue[0][0] <= time + 1e-9:
            self.server.send(self._queue.popleft()[1])

    def _capture(self, time: float, pos: np.ndarray, quat: np.ndarray) -> None:
        s = self.settings
        self._number += 1
        lost = self.dropped(time)
        if lost and not s.dropout_untracked:
            return
        noisy_pos = np.asarray(pos) + s.pos_noise * self._rng.standard_normal(3)
        turn = quat_exp(s.rot_noise * self._rng.standard_normal(3))
        pos_m, quat_m = base_to_mocap(self.frame, noisy_pos, quat_mul(quat, turn))
        ticks = round(time * CLOCK_FREQUENCY)
        body = RigidBody(s.rigid_body_id, pos_m, wxyz_to_xyzw(quat_m), 0.0002, not lost)
        frame = FrameOfData(self._number, (body,), time, ticks, ticks,
                            ticks + round(s.latency * CLOCK_FREQUENCY))
        self._queue.append((time + s.latency, frame))
