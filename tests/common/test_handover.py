"""Knots handed between threads (common.handover): every entry goes to exactly one
consumer, a consumer sees what the producer wrote before publishing, and a producer that
stops ends the waits."""

from __future__ import annotations

import threading

import numpy as np
from numba import njit

from common.handover import (
    CLAIMED,
    READY,
    SCHED_YIELD,
    STOPPED,
    claim,
    new_progress,
    publish,
    wait_for,
)


@njit(nogil=True)
def _produce(progress, data, stop_at):
    """Record data[i] = i² (after some work), publishing each; stop early at ``stop_at``."""
    for i in range(data.shape[0]):
        if i == stop_at:
            publish(progress, STOPPED)
            return
        x = 0.0
        for k in range(2000):
            x += np.sin(k * 1e-3)
        data[i] = i * i + 0.0 * x
        publish(progress, i + 1)


@njit(nogil=True)
def _consume(sched_yield, progress, data, seen, owner, me):
    """Claim entries until none is left; seen[i] = data[i] once recorded, owner[me, i] = 1."""
    while True:
        i = claim(progress)
        if i >= data.shape[0]:
            return
        owner[me, i] = 1
        if wait_for(sched_yield, progress, i):
            seen[i] = data[i]


def _run(n: int, consumers: int, stop_at: int):
    progress = new_progress()
    data = np.full(n, -1.0)
    seen = np.full(n, -2.0)
    owner = np.zeros((consumers, n), dtype=np.int64)
    threads = [threading.Thread(target=_consume, args=(SCHED_YIELD, progress, data, seen,
                                                       owner, c)) for c in range(consumers)]
    for t in threads:
        t.start()
    _produce(progress, data, stop_at)
    for t in threads:
        t.join(timeout=30)
        assert not t.is_alive(), "a consumer is still waiting"
    return progress, seen, owner


def test_every_entry_is_claimed_once_and_seen_as_written():
    n = 3000
    progress, seen, owner = _run(n, consumers=3, stop_at=-1)
    assert progress[READY] == n
    assert progress[CLAIMED] >= n  # each consumer's last claim overshoots by one
    np.testing.assert_array_equal(owner.sum(axis=0), 1)
    np.testing.assert_array_equal(seen, np.arange(n) ** 2)


def test_a_stopped_producer_ends_every_wait():
    progress, seen, owner = _run(500, consumers=2, stop_at=200)
    assert progress[READY] == STOPPED
    np.testing.assert_array_equal(owner.sum(axis=0), 1)
    # a stopped trajectory is discarded: an entry is either seen as written or not at all
    # (STOPPED replaces the count, so a consumer that looks late skips even recorded knots),
    # and nothing past the stop is ever read
    early = seen[:200]
    assert np.all((early == np.arange(200) ** 2) | (early == -2.0))
    assert np.all(seen[200:] == -2.0)


def test_knots_already_recorded_need_no_producer():
    progress = new_progress(ready=4)
    data = np.arange(4.0)
    seen = np.zeros(4)
    _consume(SCHED_YIELD, progress, data, seen, np.zeros((1, 4), dtype=np.int64), 0)
    np.testing.assert_array_equal(seen, data)
