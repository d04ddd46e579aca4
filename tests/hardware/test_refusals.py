"""What receive paths refuse: counts by reason with rate-limited warnings, and the ordering rules
of robot ticks, frame numbers and (sequence, time stamp) streams."""

from __future__ import annotations

import logging

import pytest

from hardware.refusals import (
    DUPLICATE,
    IMPLAUSIBLE,
    MAX_TICK_STEP,
    OUT_OF_ORDER,
    Refusals,
    StreamOrder,
    counter_order,
    tick_order,
)

log = logging.getLogger("test.refusals")


def test_a_flood_of_refusals_is_counted_and_logged_once_a_period(caplog):
    refused = Refusals("test link", log, period=60.0)
    with caplog.at_level(logging.WARNING):
        for _ in range(1000):
            refused.refuse("undecodable", "16 B")
        refused.refuse("duplicate")
    assert refused.as_dict() == {"undecodable": 1000, "duplicate": 1}
    assert refused.total() == 1001 and refused.last_reason == "duplicate"
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["test link: refused a message (undecodable: 16 B); refused so far: "
                     "1 undecodable"]


def test_refusals_share_a_counts_dict_and_say_what_was_refused_meanwhile():
    counts = {"states": 5, "bad_checksum": 0}
    refused = Refusals("link", log, counts=counts)
    before = refused.total()
    assert refused.meanwhile(before) == ""
    for reason in ("bad_checksum", "duplicate", "duplicate"):
        refused.refuse(reason)
    assert counts == {"states": 5, "bad_checksum": 1, "duplicate": 2}
    assert refused.as_dict() == {"bad_checksum": 1, "duplicate": 2}  # not the other counters
    assert refused.meanwhile(before) == "; 3 refused meanwhile, the last as duplicate"
    assert refused.describe() == "1 bad_checksum, 2 duplicate"


def test_tick_order_wraps_and_refuses_repeats_the_past_and_restarted_counters():
    assert tick_order(5, None) is None  # the first state sets the reference
    assert tick_order(6, 5) is None
    assert tick_order(5, 5) == DUPLICATE
    assert tick_order(4, 5) == OUT_OF_ORDER  # reordered or replayed
    assert tick_order(3, 2**32 - 2) is None  # the 32-bit counter wrapped
    assert tick_order(5 + MAX_TICK_STEP, 5) is None
    assert tick_order(6 + MAX_TICK_STEP, 5) == OUT_OF_ORDER  # a leap no gap explains
    assert tick_order(0, 3_000_000_000) == OUT_OF_ORDER  # restarted from 0 after 50 minutes


def test_counter_order():
    assert counter_order(7, None) is None and counter_order(8, 7) is None
    assert counter_order(7, 7) == DUPLICATE and counter_order(6, 7) == OUT_OF_ORDER


@pytest.mark.parametrize("strict", [True, False])
def test_stream_order_follows_sequence_and_clock(strict):
    order = StreamOrder(strict_time=strict, max_rate=1000.0)
    assert order.check(10, 1.000) is None
    assert order.check(10, 1.002) == DUPLICATE
    assert order.check(9, 1.002) == OUT_OF_ORDER
    assert order.check(11, 0.998) == OUT_OF_ORDER  # the clock went back
    # the clock stood still: refused in real time, a lockstep poll's repeat otherwise
    assert order.check(11, 1.000) == (OUT_OF_ORDER if strict else None)
    order = StreamOrder(strict_time=strict, max_rate=1000.0)
    order.check(10, 1.000)
    assert order.check(50, 1.002) == IMPLAUSIBLE  # 40 messages in 2 ms at 1 kHz
    assert order.check(14, 1.002) == IMPLAUSIBLE  # 4 in 2 ms: 3 at most
    assert order.check(12, 1.002) is None  # a lost message is no reason
    # a receiver held up 300 ms handles the queue at once, the kernel having dropped what did
    # not fit: the sender's numbers alone are judged, so none of it is refused
    for k in range(1, 50):
        assert order.check(12 + k, 1.002 + 0.002 * k) is None
    assert order.check(12 + 150, 1.002 + 0.002 * 150) is None
