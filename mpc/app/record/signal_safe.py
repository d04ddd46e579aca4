"""Log lines from signal handlers, without breaking the line being written.

A signal handler runs in the main thread between two bytecodes, possibly in the middle of a
log handler writing a line: a line it logs then re-enters that stream's write, which raises
``RuntimeError: reentrant call`` (and prints a logging traceback; a signal storm found one when
the e-stop logged its damping while ``events.log`` was being written).
:class:`SignalSafeHandler` holds such a line back and writes it as soon as the interrupted one
is written.
"""

from __future__ import annotations

import logging
import threading


class SignalSafeHandler(logging.Handler):
    """Passes every record to ``inner``; a record logged in the main thread while that thread
    is already inside ``inner`` (a signal handler that interrupted it) is passed on right after
    the interrupted record, in order. Other threads wait for the main thread's record as they
    would for ``inner``'s lock."""

    def __init__(self, inner: logging.Handler):
        super().__init__(inner.level)
        self.inner = inner
        self._main = threading.main_thread()
        self._writing = False  # the main thread is inside inner
        self._held: list[logging.LogRecord] = []

    def handle(self, record: logging.LogRecord) -> bool:
        if threading.current_thread() is not self._main:
            return bool(self.inner.handle(record))
        if self._writing:  # a signal handler interrupted the main thread's own record
            self._held.append(record)
            return True
        self._writing = True
        try:
            self.inner.handle(record)
            while self._held:
                self.inner.handle(self._held.pop(0))
        finally:
            self._writing = False
        return True

    def emit(self, record: logging.LogRecord) -> None:  # handle() does the work
        self.inner.emit(record)

    def close(self) -> None:
        self.inner.close()
        super().close()
