"""A line logged by a signal handler that interrupted a line being written (the e-stop's
damping while events.log was written) is written after it, with no logging error."""

from __future__ import annotations

import io
import logging
import os
import signal

from mpc.app.record.signal_safe import SignalSafeHandler


class InterruptedStream(io.StringIO):
    """A stream whose first write is interrupted by SIGINT, as a signal may interrupt any."""

    def __init__(self):
        super().__init__()
        self.interrupted = False

    def write(self, text: str) -> int:
        # as io.BufferedWriter does when a signal handler re-enters it
        if getattr(self, "_inside", False):
            raise RuntimeError("reentrant call inside the stream")
        self._inside = True
        try:
            if not self.interrupted:
                self.interrupted = True
                os.kill(os.getpid(), signal.SIGINT)  # its handler runs before this returns
            return super().write(text)
        finally:
            self._inside = False


def test_a_line_logged_by_a_signal_handler_waits_for_the_interrupted_one(monkeypatch):
    stream = InterruptedStream()
    handler = SignalSafeHandler(logging.StreamHandler(stream))
    log = logging.getLogger("test_signal_safe")
    log.propagate = False
    log.addHandler(handler)
    errors: list[BaseException] = []
    monkeypatch.setattr(logging, "raiseExceptions", True)
    monkeypatch.setattr(logging.Handler, "handleError",
                        lambda self, record: errors.append(RuntimeError(record.msg)))
    previous = signal.signal(signal.SIGINT, lambda *_: log.error("damping: e-stop: SIGINT"))
    try:
        log.error("a line being written")
    finally:
        signal.signal(signal.SIGINT, previous)
        log.removeHandler(handler)
    assert not errors
    assert stream.getvalue() == "a line being written\ndamping: e-stop: SIGINT\n"
