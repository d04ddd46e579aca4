"""The packet CRC against a plain table-driven CRC-32/MPEG-2 written from its definition."""

import struct

import numpy as np
import pytest

from hardware.unitree import crc


def _table() -> list[int]:
    table = []
    for byte in range(256):
        c = byte << 24
        for _ in range(8):
            c = ((c << 1) ^ 0x04C11DB7) if c & 0x80000000 else c << 1
        table.append(c & 0xFFFFFFFF)
    return table


TABLE = _table()


def mpeg2_over_words(data: bytes) -> int:
    """Poly 0x04C11DB7, init 0xFFFFFFFF, no reflection, no final xor; each little-endian u32
    word fed most significant byte first."""
    c = 0xFFFFFFFF
    for (word,) in struct.iter_unpack("<I", data):
        for byte in word.to_bytes(4, "big"):
            c = ((c << 8) & 0xFFFFFFFF) ^ TABLE[(c >> 24) ^ byte]
    return c


def test_oracle_gives_the_standard_check_value():
    """The oracle is CRC-32/MPEG-2: its catalogue check value over "123456789" is 0x0376E6E7."""
    c = 0xFFFFFFFF
    for byte in b"123456789":
        c = ((c << 8) & 0xFFFFFFFF) ^ TABLE[(c >> 24) ^ byte]
    assert c == 0x0376E6E7


def test_word_order():
    """Each little-endian word enters most significant byte first: "4321" as a word is the
    byte stream "1234"."""
    c = 0xFFFFFFFF
    for byte in b"12345678":
        c = ((c << 8) & 0xFFFFFFFF) ^ TABLE[(c >> 24) ^ byte]
    assert crc.crc32_words(b"43218765") == c


@pytest.mark.parametrize("size", [4, 8, 608, 808, 1176])
def test_matches_table_driven_oracle(size):
    rng = np.random.default_rng(size)
    for _ in range(5):
        data = rng.integers(0, 256, size, dtype=np.uint8).tobytes()
        assert crc.crc32_words(data) == mpeg2_over_words(data)


def test_packet_crc_covers_whole_words_before_the_last():
    rng = np.random.default_rng(1)
    packet = bytearray(rng.integers(0, 256, 614, dtype=np.uint8).tobytes())
    crc.seal(packet)
    assert crc.crc_ok(packet)
    assert struct.unpack("<I", packet[-4:])[0] == mpeg2_over_words(bytes(packet[:608]))
    packet[100] ^= 0x01
    assert not crc.crc_ok(packet)


def test_rejects_partial_words():
    with pytest.raises(ValueError):
        crc.crc32_words(b"123")
