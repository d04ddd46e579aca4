"""What a receive path refuses: counts by reason, rate-limited warnings, and the ordering rule
for the sequence numbers and clocks that robot states carry.

Every receive path (the Unitree bridges' UDP and DDS links, the LCM plant's state and pose
subscriptions, the LCM velocity commands, the NatNet client, the wireless remote) survives any
bytes: a message that does not decode, does not check out, comes from the wrong sender, or is
stale or out of order is dropped and counted here, and the path keeps receiving and its
watchdogs keep watching. A warning names the reason and the totals at most once per
``period`` (a flood of bad packets is a few lines, not one per packet); the counts go to the
plant's statistics and from there to the run's ``summary.json``.

Ordering (:func:`tick_order`, :class:`StreamOrder`): a state is accepted only if its sequence
number is newer than the last accepted one. The same number again is a *duplicate*, an older
one *out of order*; both are refused. A robot whose counter stands still (a frozen tick) so
sends nothing that is accepted, and the stale-state watchdog trips after its limit, as for a
silent robot. A counter that restarts (a robot or bridge rebooted) is refused as out of order
and the stale-state trip follows: the reboot's own silence has already tripped it, and a
damped link never resumes.
"""

from __future__ import annotations

import logging
import time

#: Names of the reasons used by more than one receive path.
UNDECODABLE = "undecodable"      # not a message of the expected type (size, fingerprint, CRC)
INVALID = "invalid"              # decodes, but carries non-finite or impossible values
DUPLICATE = "duplicate"          # the sequence number of the last accepted message again
OUT_OF_ORDER = "out_of_order"    # older than the last accepted message (reordered, replayed)
IMPLAUSIBLE = "implausible"      # a counter leap no real stream makes
FOREIGN = "foreign"              # from another sender than the one this path follows

#: Largest forward step of a 32-bit robot tick taken as newer (2**24: 16.8 s of a microsecond
#: tick); anything further ahead is a restarted counter, refused as out of order.
TICK_MODULUS = 2**32
MAX_TICK_STEP = 2**24


class Refusals:
    """Counts, by reason, of the messages one receive path dropped; a warning at most once per
    ``period`` seconds names the latest reason and the totals. ``counts`` may be a dict that
    holds the path's other counters too (the bridges' ``counts``): the refusals are added to
    it under their reasons."""

    def __init__(self, what: str, logger: logging.Logger, period: float = 1.0,
                 counts: dict[str, int] | None = None):
        self.what = what
        self.log = logger
        self.period = period
        self.counts: dict[str, int] = {} if counts is None else counts
        #: The reason of the latest refusal (None: nothing refused yet).
        self.last_reason: str | None = None
        self._reasons: dict[str, None] = {}  # the reasons counted here, in order of appearance
        self._total = 0
        self._logged = -float("inf")

    def refuse(self, reason: str, detail: str = "") -> None:
        """Count one dropped message; warn if the last warning is ``period`` old."""
        self.counts[reason] = self.counts.get(reason, 0) + 1
        self._reasons[reason] = None
        self._total += 1
        self.last_reason = reason
        now = time.monotonic()
        if now - self._logged >= self.period:
            self._logged = now
            self.log.warning("%s: refused a message (%s%s); refused so far: %s", self.what,
                             reason, f": {detail}" if detail else "", self.describe())

    def total(self) -> int:
        return self._total

    def as_dict(self) -> dict[str, int]:
        """The refusals by reason (only reasons that occurred)."""
        return {reason: self.counts[reason] for reason in list(self._reasons)}

    def describe(self) -> str:
        """``"3 undecodable, 1 duplicate"`` (``"none"``)."""
        return ", ".join(f"{n} {reason}" for reason, n in self.as_dict().items()) or "none"

    def meanwhile(self, total_before: int) -> str:
        """``"; 57 refused meanwhile, the last as duplicate"`` if messages were refused since
        the total was ``total_before`` (for a stale-state reason: what the robot sent instead
        of an acceptable state), else ``""``."""
        n = self._total - total_before
        return f"; {n} refused meanwhile, the last as {self.last_reason}" if n > 0 else ""


def tick_order(tick: int, last: int | None) -> str | None:
    """None if the 32-bit robot ``tick`` is newer than ``last`` (None: nothing accepted yet),
    else why it is refused. Newer means 0 < (tick - last) mod 2**32 <= :data:`MAX_TICK_STEP`,
    so the counter may wrap around; an equal tick is a :data:`DUPLICATE`, any other one
    :data:`OUT_OF_ORDER` (behind, or a restarted counter)."""
    if last is None:
        return None
    step = (tick - last) % TICK_MODULUS
    if step == 0:
        return DUPLICATE
    return None if step <= MAX_TICK_STEP else OUT_OF_ORDER


def counter_order(number: int, last: int | None) -> str | None:
    """None if the frame or message ``number`` is newer than ``last`` (None: nothing accepted
    yet), else :data:`DUPLICATE` (the same) or :data:`OUT_OF_ORDER` (an older one)."""
    if last is None or number > last:
        return None
    return DUPLICATE if number == last else OUT_OF_ORDER


class StreamOrder:
    """The ordering rule of a stream whose messages carry a sequence number and a time stamp in
    the sender's clock (LCM robot states): with (s, t) the last accepted message, a message
    (s', t') is

    - a :data:`DUPLICATE` if s' = s, :data:`OUT_OF_ORDER` if s' < s or t' < t (or, when
      ``strict_time``, t' = t: a clock that stands still);
    - :data:`IMPLAUSIBLE` if s' - s > 1 + ``max_rate`` (t' - t): more messages than the
      sender can have sent in the time its clock says passed (a corrupted or forged number);
    - else accepted.

    Both rules use the sender's own numbers only: this computer's time of handling a message
    is not its time of arrival (a receiving thread that was held up handles a queue at once),
    so a lead of the sender's clock over this one's cannot tell a forged stamp from a queue. A
    stamp ahead of the sender's real clock is therefore taken, and the real messages that
    follow are refused as out of order until its clock passes the stamp: if that is longer
    than the stale-state limit, the stale-state watchdog trips."""

    def __init__(self, strict_time: bool = True, max_rate: float = 10_000.0):
        self.strict_time = strict_time
        self.max_rate = max_rate
        self.last: tuple[int, float] | None = None

    def check(self, seq: int, stamp: float) -> str | None:
        """None (and the message becomes the last accepted) or the reason to refuse it."""
        if self.last is not None:
            s, t = self.last
            if seq == s:
                return DUPLICATE
            if seq < s or stamp < t or (self.strict_time and stamp == t):
                return OUT_OF_ORDER
            if seq - s > 1 + self.max_rate * (stamp - t):
                return IMPLAUSIBLE
        self.last = (seq, stamp)
        return None
