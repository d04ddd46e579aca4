"""A UDP socket bound to a local address, as every receiver on a UDP wire needs one."""

from __future__ import annotations

import socket


def bound_socket(host: str, port: int) -> socket.socket:
    """A non-blocking UDP socket bound to ``(host, port)`` (port 0: any free one). If the address
    cannot be had the socket is closed and the ``OSError`` raised, for the caller to name."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock
