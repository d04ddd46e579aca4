"""SIGINT (Ctrl-C) and SIGTERM at any moment of a run: how it stops, and that its close is not
cut short.

Before a run exists (imports, compiling, connecting, the startup ramp) a signal raises
KeyboardInterrupt wherever the main thread is (``mpc-run``'s handler, a hardware plant's
e-stop), which abandons the start: what was built is closed (a robot link damps) and the run
directory says so (``"started": false``).

While a run is in progress, :class:`InterruptGuard` handles them instead: raised in the middle
of the control loop, of the recorder's bookkeeping or of the run's close, a KeyboardInterrupt
would abandon what was half done (a second Ctrl-C while a run closed lost its summary, time
series and error log). Under the guard:

- the handler that was in place runs first (a robot's e-stop: damping at once);
- the first signal asks the session to stop (:meth:`Session.request_stop`): the loop ends at
  its next step and the run closes as at its end. Only before the first planner iteration is
  over (it compiles the kernels, minutes on a first run) does it raise KeyboardInterrupt, to
  leave at once;
- a later signal, and any signal once the run closes (:attr:`InterruptGuard.closing`), is
  logged and otherwise ignored: the run is writing its record. SIGKILL still ends it, and the
  incremental record (:mod:`mpc.app.record.store`) then keeps everything up to its last second.

:func:`held_signals` only notes them, for the steps that must not be cut short outside the
guard (closing a start that was abandoned, a robot link stopped while it starts). A further
signal is common: a terminal's Ctrl-C reaches the robot's link process too, which reports it,
and a user may press Ctrl-C twice. Only the main thread can handle signals; in any other
these do nothing.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

log = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stoppable(Protocol):
    """What :class:`InterruptGuard` needs of a run (a :class:`~mpc.app.runtime.session.Session`)."""

    @property
    def planning_started(self) -> bool:
        """Whether the first planner iteration (it compiles the kernels) is over."""

    def request_stop(self, reason: str) -> None:
        """End the run at the loop's next step; safe in a signal handler."""


@contextmanager
def held_signals(doing: str | None = None) -> Iterator[list[str]]:
    """While the body runs, SIGINT and SIGTERM are only noted (their names, in the list this
    yields, and with ``doing`` a warning saying what they would have cut short); the handlers
    in place before come back afterwards. Only the main thread handles signals: elsewhere
    this holds nothing."""
    noted: list[str] = []
    if threading.current_thread() is not threading.main_thread():
        yield noted
        return

    def note(signum: int, _frame) -> None:
        noted.append(signal.Signals(signum).name)
        if doing is not None:
            log.warning("%s ignored: %s", noted[-1], doing)

    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    for sig, handler in previous.items():
        if handler is not signal.SIG_IGN:
            signal.signal(sig, note)
    try:
        yield noted
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)


class InterruptGuard:
    """Handles SIGINT and SIGTERM for ``session`` within a ``with`` block (module doc); the
    handlers in place before are restored at its end."""

    def __init__(self, session: Stoppable):
        self.session = session
        #: Set once the run closes: every signal from then on is ignored.
        self.closing = False
        #: Signals received.
        self.received = 0
        self._previous: dict[int, object] = {}

    def __enter__(self) -> InterruptGuard:
        if threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                previous = signal.getsignal(sig)
                if callable(previous):  # SIGTERM's default (end the process) is left alone
                    self._previous[sig] = previous
                    signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)
        self._previous.clear()

    def _handle(self, signum: int, frame) -> None:
        name = signal.Signals(signum).name
        previous = self._previous.get(signum)
        if previous is not signal.default_int_handler and callable(previous):
            # a robot's e-stop: damping first; the KeyboardInterrupt it raises would end the
            # run wherever it is, the stop below ends it at the loop's next step
            with contextlib.suppress(KeyboardInterrupt):
                previous(signum, frame)
        self.received += 1
        if self.closing or self.received > 1:
            log.warning("%s ignored: the run is %s and writing its record (SIGKILL keeps the "
                        "record up to its last second)", name,
                        "closing" if self.closing else "stopping")
            return
        self.session.request_stop(name)
        if not self.session.planning_started:
            raise KeyboardInterrupt(name)
