"""Ctrl-C (and a robot's e-stop signals) while a run runs and while it closes.

Python turns SIGINT into a KeyboardInterrupt wherever the main thread happens to be: raised in
the middle of the control loop, of the recorder's bookkeeping or of the run's close, it
abandons what was half done (a second Ctrl-C while a run closed lost its summary, time series
and error log). While a run is in progress, :class:`InterruptGuard` handles SIGINT, and
SIGTERM when a Python handler holds it (a robot plant's e-stop), instead:

- the handler that was in place runs first (a robot's e-stop: damping at once);
- the first signal asks the session to stop (:meth:`Session.request_stop`): the loop ends at
  its next step and the run closes as at its end. Only before the first planner iteration is
  over (it compiles the kernels, minutes on a first run) does it raise KeyboardInterrupt, to
  leave at once;
- a later signal, and any signal once the run closes (:attr:`InterruptGuard.closing`), is
  logged and otherwise ignored: the run is writing its record. SIGKILL still ends it, and the
  incremental record (:mod:`mpc.record_store`) then keeps everything up to its last second.

Only the main thread can handle signals; in any other the guard does nothing.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mpc.runtime.session import Session

log = logging.getLogger(__name__)


class InterruptGuard:
    """Handles SIGINT and SIGTERM for ``session`` within a ``with`` block (module doc); the
    handlers in place before are restored at its end."""

    def __init__(self, session: Session):
        self.session = session
        #: Set once the run closes: every signal from then on is ignored.
        self.closing = False
        #: Signals received.
        self.received = 0
        self._previous: dict[int, object] = {}

    def __enter__(self) -> InterruptGuard:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
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
