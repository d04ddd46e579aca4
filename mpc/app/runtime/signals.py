"""Signals while a run ends: noted, not raised.

SIGINT and SIGTERM raise KeyboardInterrupt anywhere (mpc-run's handler, a hardware plant's
e-stop), which is how a run is stopped at any moment. Once it is stopping, a further signal must
not cut the ending short: closing the plant (damping the robot, ending its link process) and
writing the run's record. A further signal is common: a terminal's Ctrl-C reaches the robot's
link process too, which reports it, and a user may press Ctrl-C twice.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def held_signals() -> Iterator[list[str]]:
    """While the body runs, SIGINT and SIGTERM are only noted (their names, in the list this
    yields); the handlers in place before come back afterwards. Only the main thread handles
    signals: elsewhere this holds nothing."""
    noted: list[str] = []
    if threading.current_thread() is not threading.main_thread():
        yield noted
        return

    def note(signum: int, _frame) -> None:
        noted.append(signal.Signals(signum).name)

    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    for sig, handler in previous.items():
        if handler is not signal.SIG_IGN:
            signal.signal(sig, note)
    try:
        yield noted
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
