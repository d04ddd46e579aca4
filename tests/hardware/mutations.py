"""Hypothesis strategies for the receive-path fuzz tests: messages mutated from valid ones.

A drawn message is, one time in ten, random bytes; otherwise a valid message of the kind under
test changed by one to four operations (a bit flipped, a byte set, a float field made NaN,
infinite or huge, the message truncated or extended, a span deleted, repeated or overwritten
with random bytes, the head of one valid message spliced onto the tail of another) and then,
when the kind has a checksum, resealed half of the time, so that mutations also get past the
checksum to the field checks behind it.

Each operation is one drawn integer (its kind, place and argument packed together) and random
bytes are a drawn length and seed: hypothesis spends most of its time per draw, and these keep
a message at a handful of draws while every choice still shrinks towards the simplest one.
"""

from __future__ import annotations

import math
import random
import struct
from collections.abc import Callable, Sequence

from hypothesis import strategies as st

#: Values a float field is set to.
SPECIAL_FLOATS = (math.nan, math.inf, -math.inf, 1e30, -1e30, 0.0, 2.0**31)
OPERATIONS = ("flip", "set", "float32", "float64", "truncate", "extend", "delete", "repeat",
              "overwrite", "splice")


def noise(draw, max_size: int) -> bytes:
    """Random bytes: a drawn length and seed."""
    n = draw(st.integers(0, max_size))
    return random.Random(draw(st.integers(0, 2**32 - 1))).randbytes(n)


def _apply(data: bytearray, code: int, keep: int, valid: Sequence[bytes], draw) -> bytearray:
    """Operation ``code`` (kind, place and argument packed in one integer) applied to
    ``data``; the first ``keep`` bytes stay."""
    code, kind = divmod(code, len(OPERATIONS))
    op = OPERATIONS[kind]
    n = len(data)
    code, place = divmod(code, max(n - keep, 1))
    at = keep + place
    if op == "flip" and at < n:
        data[at] ^= 1 << code % 8
    elif op == "set" and at < n:
        data[at] = code % 256
    elif op in ("float32", "float64"):
        fmt = "<f" if op == "float32" else ">d"  # Unitree little-endian f32, LCM big f64
        if at + struct.calcsize(fmt) <= n:
            data[at:at + struct.calcsize(fmt)] = struct.pack(
                fmt, SPECIAL_FLOATS[code % len(SPECIAL_FLOATS)])
    elif op == "truncate":
        del data[at:]
    elif op == "extend":
        data += noise(draw, 64)
    elif op == "delete":
        del data[at:at + 1 + code % 16]
    elif op == "repeat":
        data[at:at] = data[at:at + 1 + code % 16]
    elif op == "overwrite":
        span = noise(draw, 32)
        data[at:at + len(span)] = span
    elif op == "splice":
        data = data[:at] + bytearray(valid[code % len(valid)][at:])
    return data


@st.composite
def mutated(draw, valid: Sequence[bytes], reseal: Callable[[bytes], bytes] | None = None,
            keep: int = 0) -> bytes:
    """A message from ``valid`` mutated (see the module docstring); the first ``keep`` bytes
    stay as they were (a DDS sample's encapsulation header, which cyclonedds itself checks)."""
    longest = max(len(v) for v in valid)
    if draw(st.integers(0, 9)) == 0:
        return bytes(valid[0][:keep]) + noise(draw, 2 * longest)
    data = bytearray(valid[draw(st.integers(0, len(valid) - 1))])
    for code in draw(st.lists(st.integers(0, 2**40), min_size=1, max_size=4)):
        data = _apply(data, code, keep, valid, draw)
    out = bytes(data)
    if reseal is not None and draw(st.booleans()):
        out = reseal(out)
    return out


def batches(messages: st.SearchStrategy[bytes], size: int = 20) -> st.SearchStrategy:
    """Lists of ``size`` messages: one hypothesis example carries several (its fixed cost per
    example is several messages' worth)."""
    return st.lists(messages, min_size=size, max_size=size)
