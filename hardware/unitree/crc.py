"""The checksum of Unitree packets: CRC-32/MPEG-2 over 32-bit words.

Polynomial 0x04C11DB7, initial value 0xFFFFFFFF, no reflection, no final xor. The data are read
as little-endian u32 words and each word enters the CRC most significant bit first. Only whole
words count, and the last word (where the CRC is stored, little-endian) is left out: a packet of
n bytes is checked over its first ``4 * (n // 4 - 1)`` bytes (Go1 LowCmd, 614 B: 608 B; the
SDK2 LowCmd C image, 812 B: 808 B).

Computed with zlib's table-driven CRC-32, which is the bit-reflected twin of this CRC: feeding
it the bit-reversed bytes of the word-swapped data and bit-reversing the result gives
CRC-32/MPEG-2 (zlib's pre- and post-inversion cancel the 0xFFFFFFFF initial value and the
missing final xor). That costs microseconds per packet instead of ~0.13 ms for a Python table
loop, which matters at 500 packets per second in each direction.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

_REVERSE_BITS = bytes(int(f"{b:08b}"[::-1], 2) for b in range(256))


def crc32_words(data: bytes | bytearray | memoryview) -> int:
    """CRC-32/MPEG-2 of ``data`` (length a multiple of 4) taken as little-endian u32 words."""
    if len(data) % 4:
        raise ValueError(f"CRC input must be whole 32-bit words, got {len(data)} bytes")
    swapped = np.frombuffer(data, "<u4").byteswap().tobytes()  # most significant byte first
    reflected = zlib.crc32(swapped.translate(_REVERSE_BITS)) ^ 0xFFFFFFFF
    return int.from_bytes(reflected.to_bytes(4, "little").translate(_REVERSE_BITS), "big")


def packet_crc(packet: bytes | bytearray | memoryview) -> int:
    """The CRC a packet (or C message image) of this length must carry in its last 4 bytes."""
    words = len(packet) // 4 - 1
    return crc32_words(bytes(packet[:4 * words]))


def seal(packet: bytearray) -> bytearray:
    """Write the CRC into the last 4 bytes of ``packet`` (little-endian) and return it."""
    packet[-4:] = struct.pack("<I", packet_crc(packet))
    return packet


def crc_ok(packet: bytes | bytearray | memoryview) -> bool:
    """Whether the CRC stored in the last 4 bytes of ``packet`` is right."""
    return struct.unpack_from("<I", packet, len(packet) - 4)[0] == packet_crc(packet)
