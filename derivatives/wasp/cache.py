"""Per-knot WASP memory: what each horizon index has measured so far, for every input block.

Index t of the cache belongs to knot t of the planner's horizon. When the planner's start
time advances by k knots, the knot that was at t + k is now at t, so the cache shifts with it;
a planner reset forgets everything (the next call is a full finite-difference sweep).
"""

from __future__ import annotations

import numpy as np


class WaspCache:
    """F̂, D̂ (capacity, m, N), filled (capacity, N) and round-robin pointers (capacity, blocks).

    m = 2nv + na + nsensordata outputs (next state, then sensors); N = 2nv + na + nu inputs in
    the packed block layout of :mod:`derivatives.wasp.basis`. Invariant at every index:
    D̂ = F̂ Qᵀ, and ``filled[:, c]`` says whether column c of F̂ holds a measured JVP (until then
    every agreement test on it fails: a cold cache predicts nothing).
    """

    def __init__(self, outputs: int, inputs: int, blocks: int, capacity: int = 0):
        self.outputs, self.inputs, self.blocks = outputs, inputs, blocks
        self.F = np.zeros((capacity, outputs, inputs))
        self.D = np.zeros((capacity, outputs, inputs))
        self.filled = np.zeros((capacity, inputs), dtype=np.bool_)
        self.pointer = np.zeros((capacity, blocks), dtype=np.int64)

    @property
    def capacity(self) -> int:
        return self.F.shape[0]

    def reserve(self, capacity: int) -> None:
        """Grow to at least ``capacity`` knots, keeping what is cached (never shrinks, so the
        cache always fits the longest horizon seen)."""
        extra = capacity - self.capacity
        if extra <= 0:
            return
        self.F = np.concatenate([self.F, np.zeros((extra, *self.F.shape[1:]))])
        self.D = np.concatenate([self.D, np.zeros((extra, *self.D.shape[1:]))])
        self.filled = np.concatenate([self.filled, np.zeros((extra, self.inputs), np.bool_)])
        self.pointer = np.concatenate([self.pointer, np.zeros((extra, self.blocks), np.int64)])

    def shift(self, knots: int) -> None:
        """cache[t] ← cache[t + knots]; the freed tail starts cold."""
        if knots <= 0:
            return
        keep = max(0, self.capacity - knots)
        for a in (self.F, self.D, self.filled, self.pointer):
            a[:keep] = a[knots : knots + keep]  # numpy buffers overlapping copies
            a[keep:] = 0

    def reset(self) -> None:
        """Forget everything."""
        for a in (self.F, self.D, self.filled, self.pointer):
            a[...] = 0
