"""Statistics of a stream of numbers in bounded memory, for the run's summary.

A run measures something at every feedback step or planner iteration (policy ages at 300 Hz,
iteration times at up to 100 Hz): a day's run would hold tens of millions of numbers to take
their median at the end. A :class:`Tally` keeps the count, the sum and the extremes exactly,
and for quantiles a uniform random sample of at most ``capacity`` values (reservoir sampling,
Vitter's algorithm R, with a fixed seed so that a lockstep run stays reproducible): below
``capacity`` values it holds them all and its quantiles are exact; above, a quantile's rank is
off by about 1/(2 sqrt(capacity)) (0.2 % at the default 65 536), whatever the run's length.
"""

from __future__ import annotations

import random

import numpy as np

#: Values a tally keeps for its quantiles (8 bytes each).
CAPACITY = 65_536


class Tally:
    """Count, sum, min and max of the values added, and their quantiles from a bounded
    uniform sample (see the module doc). Not thread-safe: callers hold their own lock."""

    def __init__(self, capacity: int | None = None, seed: int = 0):
        """``capacity``: values kept for the quantiles (default :data:`CAPACITY`)."""
        capacity = CAPACITY if capacity is None else capacity
        if capacity < 1:
            raise ValueError("a tally keeps at least one value")
        self.capacity = int(capacity)
        self.count = 0
        self.total = 0.0
        self.low = np.inf
        self.high = -np.inf
        self._sample = np.empty(min(self.capacity, 1024))
        self._random = random.Random(seed)

    def add(self, value: float) -> None:
        value = float(value)
        self.count += 1
        self.total += value
        self.low = min(self.low, value)
        self.high = max(self.high, value)
        if self.count <= self.capacity:
            if self.count > len(self._sample):  # grow by doubling, up to the capacity
                grown = np.empty(min(2 * len(self._sample), self.capacity))
                grown[:len(self._sample)] = self._sample
                self._sample = grown
            self._sample[self.count - 1] = value
        else:  # keep the new value with probability capacity / count, in place of a random one
            j = self._random.randrange(self.count)
            if j < self.capacity:
                self._sample[j] = value

    def __len__(self) -> int:
        return self.count

    @property
    def kept(self) -> int:
        """How many values the tally holds (at most its capacity)."""
        return min(self.count, self.capacity)

    def mean(self) -> float | None:
        return self.total / self.count if self.count else None

    def max(self) -> float | None:
        return self.high if self.count else None

    def quantile(self, q: float) -> float | None:
        """The ``q`` quantile (0..1, linear interpolation as ``np.quantile``), None if empty."""
        if not self.count:
            return None
        return float(np.quantile(self._sample[:self.kept], q))

    def median(self) -> float | None:
        return self.quantile(0.5)
