"""OptiTrack NatNet client: rigid-body frames from Motive (or the fake streamer) over UDP.

The client sends a connect request to the server's command port and learns the server's NatNet
version and clock frequency from the reply. Frames then arrive either on the multicast group's
data port (Motive's default; the group is joined on the interface of ``local``) or, in unicast
(``multicast_group=""``), on the command socket, at the address the connect came from; unicast
clients send a keep-alive every second so the server keeps streaming to them.

The receiving thread survives any bytes: a packet that does not decode, a frame whose number
is not newer than the last one's (repeated, reordered or replayed), a unicast packet from
another address than the server's, a message of a kind the client never asked for, and a
server description after the first (it would change the protocol version and the clock of the
stamps mid-run: the first one stays) are refused and counted (:attr:`NatNetClient.refused`),
with a warning at most once a second.
"""

from __future__ import annotations

import logging
import select
import socket
import threading
import time
from collections.abc import Callable

from hardware.mocap import natnet_packets as pk
from hardware.mocap.natnet_packets import FrameOfData, NatNetDecodeError, ServerInfo
from hardware.refusals import FOREIGN, UNDECODABLE, Refusals, counter_order

log = logging.getLogger(__name__)

KEEPALIVE_PERIOD = 1.0


class NatNetClient:
    """Receives frames on a background thread and passes each to ``on_frame(frame, received)``
    with ``received`` the local ``time.monotonic()`` at reception."""

    def __init__(self, server: str = "127.0.0.1", local: str = "127.0.0.1",
                 multicast_group: str = "239.255.42.99", command_port: int = 1510,
                 data_port: int = 1511,
                 on_frame: Callable[[FrameOfData, float], None] | None = None):
        self.server = (server, command_port)
        self.local = local
        self.multicast_group = multicast_group
        self.data_port = data_port
        self.on_frame = on_frame
        self.info: ServerInfo | None = None
        self.frames = 0
        #: Frames missing from the sequence of frame numbers.
        self.lost = 0
        #: Packets refused, by reason (see the module docstring).
        self.refused = Refusals(f"NatNet {server}:{command_port}", log)
        self._last_frame: int | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._command: socket.socket | None = None
        self._data: socket.socket | None = None
        self._server_ip = server

    def connect(self, timeout: float = 2.0) -> ServerInfo:
        """Open the sockets, ask the server for its description and start receiving."""
        self._server_ip = socket.gethostbyname(self.server[0])
        self._command = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._command.bind((self.local if not self.multicast_group else "", 0))
        if self.multicast_group:
            self._data = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self._data.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._data.bind((self.multicast_group, self.data_port))
            self._data.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                                  socket.inet_aton(self.multicast_group)
                                  + socket.inet_aton(self.local))
        deadline = time.monotonic() + timeout
        while self.info is None:
            if time.monotonic() > deadline:
                self.close()
                raise TimeoutError(f"no NatNet server answered at {self.server[0]}:"
                                   f"{self.server[1]} within {timeout:.1f} s")
            self._command.sendto(pk.encode_request(pk.CONNECT, "Ping"), self.server)
            self._receive(0.2)
        self._thread = threading.Thread(target=self._run, name="natnet", daemon=True)
        self._thread.start()
        return self.info

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
        for s in (self._command, self._data):
            if s is not None:
                s.close()

    def _run(self) -> None:
        next_keepalive = time.monotonic() + KEEPALIVE_PERIOD
        while not self._stop.is_set():
            self._receive(0.1)
            if not self.multicast_group and time.monotonic() >= next_keepalive:
                next_keepalive += KEEPALIVE_PERIOD
                self._command.sendto(pk.encode_request(pk.KEEPALIVE), self.server)

    def _receive(self, timeout: float) -> None:
        sockets = [s for s in (self._command, self._data) if s is not None]
        try:
            ready, _, _ = select.select(sockets, [], [], timeout)
        except (OSError, ValueError):  # closed under us
            return
        for s in ready:
            try:
                data, sender = s.recvfrom(65536)
            except OSError:
                return
            self.on_packet(data, sender, s is self._command, time.monotonic())

    def on_packet(self, data: bytes, sender: tuple[str, int], unicast: bool,
                  received: float) -> None:
        """Handle one packet (``unicast``: it came to the command socket); a bad one is
        refused and counted. Never raises."""
        if unicast and sender[0] != self._server_ip:
            self.refused.refuse(FOREIGN, f"from {sender[0]}:{sender[1]}")
            return
        try:
            self._handle(data, received)
        except NatNetDecodeError as e:
            self.refused.refuse(UNDECODABLE, str(e))
        except Exception as e:  # a bug downstream (on_frame): counted, never fatal
            self.refused.refuse("handler_error", f"{type(e).__name__}: {e}")

    def _handle(self, data: bytes, received: float) -> None:
        message_id, payload = pk.decode_packet(data)
        if message_id == pk.SERVER_INFO:
            info = pk.decode_server_info(payload)
            if self.info is None:
                self.info = info
            else:  # ignored: it would change the version and the stamps' clock mid-run
                self.refused.refuse("server_info", f"NatNet {info.natnet_version}, clock "
                                    f"{info.clock_frequency} Hz after NatNet "
                                    f"{self.info.natnet_version}, {self.info.clock_frequency}"
                                    " Hz")
        elif self.info is None:
            return  # frames streaming before the server has described itself (connecting)
        elif message_id != pk.FRAME_OF_DATA:
            self.refused.refuse("unexpected", f"message id {message_id}")
        else:
            frame = pk.decode_frame(payload, self.info.natnet_version)
            reason = counter_order(frame.frame, self._last_frame)
            if reason is not None:
                self.refused.refuse(reason, f"frame {frame.frame} after {self._last_frame}")
                return
            if self._last_frame is not None and frame.frame > self._last_frame + 1:
                self.lost += frame.frame - self._last_frame - 1
            self._last_frame = frame.frame
            self.frames += 1
            if self.on_frame is not None:
                self.on_frame(frame, received)
