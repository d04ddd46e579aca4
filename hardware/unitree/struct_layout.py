"""Byte layouts of nested message structs, and fast packing with numpy.

A spec is a list of ``(name, member)``; a member is a primitive numpy dtype string (``"<f4"``),
``(member, n)`` for a fixed array, or a nested spec (a struct). Two layout rules:

- ``"c"``: the C memory image with natural alignment (each primitive aligned to its size, a
  struct to its largest member, its size rounded up to that): what Unitree's CRC covers;
- ``"cdr"``: the CDR stream body (offsets from the start of the data, after the 4-byte
  encapsulation header): primitives aligned to their size (at most 4: XCDR2; XCDR1 differs only
  for 8-byte members, which the low-level messages do not have), structs without alignment or
  padding of their own.

Every primitive element gets a byte offset; :class:`Layout` packs and unpacks whole fields
(e.g. ``motor_cmd.q``: 20 floats at 20 offsets) with one fancy-indexed copy each, which keeps a
1 kB message at tens of microseconds instead of the milliseconds of a generic serializer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Leaf:
    """All elements of one primitive field: their byte offsets (shape = the field's array
    shape) and dtype."""

    offsets: np.ndarray
    dtype: np.dtype
    #: Offsets of every byte of every element, flattened (for one fancy-indexed copy).
    bytes_index: np.ndarray


def _walk(spec, rules: str, start: int, out: dict[str, list], prefix: str) -> tuple[int, int]:
    """Lay ``spec`` (a struct) out from ``start``; returns (end offset, alignment)."""
    pos = start
    align_max = 1
    if rules == "c":
        pos = _align(pos, _alignment(spec))
    for name, member in spec:
        pos, a = _member(member, rules, pos, out, f"{prefix}{name}", ())
        align_max = max(align_max, a)
    if rules == "c":
        pos = _align(pos, align_max)
    return pos, align_max


def _member(member, rules, pos, out, path, index) -> tuple[int, int]:
    if isinstance(member, str):
        dt = np.dtype(member)
        a = min(dt.itemsize, 4) if rules == "cdr" else dt.itemsize
        pos = _align(pos, a)
        out.setdefault(path, []).append((index, pos, dt))
        return pos + dt.itemsize, a
    if isinstance(member, tuple):
        inner, n = member
        a = 1
        for i in range(n):
            pos, a = _member(inner, rules, pos, out, path, (*index, i))
        return pos, a
    # a nested struct: its leaves are named path.leaf and indexed like the struct
    sub: dict[str, list] = {}
    end, a = _walk(member, rules, pos, sub, "")
    for leaf, entries in sub.items():
        out.setdefault(f"{path}.{leaf}", []).extend(
            ((*index, *i), off, dt) for i, off, dt in entries)
    return end, a


def _alignment(spec) -> int:
    best = 1
    for _, member in spec:
        while isinstance(member, tuple):
            member = member[0]
        best = max(best, np.dtype(member).itemsize if isinstance(member, str)
                   else _alignment(member))
    return best


def _align(pos: int, a: int) -> int:
    return (pos + a - 1) // a * a


class Layout:
    """Offsets of every primitive field of ``spec`` under ``rules`` ("c" or "cdr")."""

    def __init__(self, spec, rules: str):
        entries: dict[str, list] = {}
        self.size, _ = _walk(spec, rules, 0, entries, "")
        self.leaves: dict[str, Leaf] = {}
        for path, items in entries.items():
            dt = items[0][2]
            shape = tuple(max(i[k] for i, _, _ in items) + 1 for k in range(len(items[0][0])))
            offsets = np.empty(shape, dtype=np.intp)
            for i, off, _ in items:
                offsets[i] = off
            index = (offsets.reshape(-1, 1) + np.arange(dt.itemsize)).ravel()
            self.leaves[path] = Leaf(offsets, dt, index)

    def pack(self, values: dict[str, object], out: bytearray | None = None) -> bytearray:
        """Bytes with ``values`` (path -> scalar or array) at their offsets; other bytes zero
        (or as in ``out``)."""
        buf = bytearray(self.size) if out is None else out
        view = np.frombuffer(buf, dtype=np.uint8)
        for path, value in values.items():
            leaf = self.leaves[path]
            raw = np.empty(leaf.offsets.shape, leaf.dtype)
            raw[...] = value
            view[leaf.bytes_index] = raw.reshape(-1).view(np.uint8)
        return buf

    def group(self, paths: list[str]) -> np.ndarray:
        """Byte index of several fields of one dtype and shape, for :meth:`pack_group` and
        :meth:`unpack_group` (one copy for all of them)."""
        return np.concatenate([self.leaves[p].bytes_index for p in paths])

    @staticmethod
    def pack_group(buf: bytearray, index: np.ndarray, values: np.ndarray) -> None:
        """Write ``values`` (already of the fields' dtype, in group order) at ``index``."""
        np.frombuffer(buf, dtype=np.uint8)[index] = np.ascontiguousarray(values).view(
            np.uint8).reshape(-1)

    @staticmethod
    def unpack_group(data, index: np.ndarray, dtype, shape) -> np.ndarray:
        return np.frombuffer(data, dtype=np.uint8)[index].view(dtype).reshape(shape)

    def unpack(self, data: bytes | bytearray | memoryview, path: str) -> np.ndarray:
        """The values of field ``path`` in ``data``."""
        leaf = self.leaves[path]
        raw = np.frombuffer(data, dtype=np.uint8)[leaf.bytes_index]
        return raw.view(leaf.dtype).reshape(leaf.offsets.shape)
