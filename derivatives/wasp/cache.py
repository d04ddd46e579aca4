"""Per-knot WASP memory: what each horizon index has measured so far, for every input block.

Index t of the cache belongs to knot t of the planner's horizon. When the planner's start
time advances by k knots, the knot that was at t + k is now at t, so the cache shifts with it;
the k knots that enter at the end start from the cache of the last knot that was already in the
horizon. A planner reset forgets everything (the next call is a full finite-difference sweep).
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
        """cache[t] ← cache[t + knots]; each freed index at the tail gets a copy of the last
        index that was kept (cold only if nothing was kept).

        A knot entering the horizon has never been linearized, but its neighbour has, and
        neighbouring knots' Jacobians differ about as much as one knot's three planner
        iterations apart, which is what a warm knot reuses at ``derivative_skip`` 3 (Go2 trot,
        median relative Frobenius change of A / B: 16 % / 35 % between neighbours, 17 % / 35 %
        three iterations apart). So the new knot is a warm WASP knot, not a cold one: the
        agreement test, not a full sweep, decides how many JVPs it takes. A cold tail would
        cost a full forward-difference sweep at the last knot of every call (at
        ``derivative_skip`` 3: one knot in 14 at twice a warm knot's cost, all of it on one of
        the threads).
        """
        if knots <= 0:
            return
        keep = max(0, self.capacity - knots)
        for a in (self.F, self.D, self.filled, self.pointer):
            a[:keep] = a[knots : knots + keep]  # numpy buffers overlapping copies
            a[keep:] = a[keep - 1] if keep > 0 else 0

    def reset(self) -> None:
        """Forget everything."""
        for a in (self.F, self.D, self.filled, self.pointer):
            a[...] = 0
