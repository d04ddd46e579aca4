"""One LCM channel received in a thread of its own, for the sources that take messages from lab
software (velocity commands, terrain maps): the URL opened at start (a URL LCM cannot open is a
one-line error), each message handed to the source's handler as bytes, and nothing a message
holds ending the receiving thread (an exception in LCM's handling is refused and counted as
``handler_error``)."""

from __future__ import annotations

import threading
from collections.abc import Callable

import lcm

from hardware.lcm import DEFAULT_URL
from hardware.refusals import Refusals


def check_options(options: dict, section: str) -> None:
    """A config's ``lcm_url`` and ``channel`` (``section`` names where they are): neither
    empty, else ValueError (one line)."""
    if not options.get("lcm_url", DEFAULT_URL) or not options.get("channel", "x"):
        raise ValueError(f"{section}: lcm_url and channel must not be empty")


class Subscription:
    """Receives ``channel`` of ``lcm_url`` in a daemon thread named ``thread``, calling
    ``handler(data)`` for each message; ``refused`` counts the handler's failures."""

    def __init__(self, lcm_url: str, channel: str, handler: Callable[[bytes], None],
                 refused: Refusals, section: str, thread: str):
        try:
            #: The LCM instance (a test on ``memq://`` publishes through it).
            self.lcm = lcm.LCM(lcm_url)
        except Exception as e:  # the lcm module raises RuntimeError/OSError variants
            raise ValueError(f"{section}: cannot open LCM URL {lcm_url!r}: {e}") from None
        self._refused = refused
        self._stop = threading.Event()
        self._subscription = self.lcm.subscribe(channel, lambda _channel, data: handler(data))
        #: The receiving thread (alive until :meth:`close`, whatever the messages hold).
        self.thread = threading.Thread(target=self._receive, name=thread, daemon=True)
        self.thread.start()

    def _receive(self) -> None:
        while not self._stop.is_set():
            try:
                self.lcm.handle_timeout(50)
            except Exception as e:  # a bug in the handler: counted and logged, never fatal
                self._refused.refuse("handler_error", f"{type(e).__name__}: {e}")

    def close(self) -> None:
        self._stop.set()
        self.thread.join(1.0)
        self.lcm.unsubscribe(self._subscription)
