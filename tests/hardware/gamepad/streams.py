"""Event streams of the supported pads, as their Linux drivers report them.

Each pad is its ``capabilities(absinfo=True)`` and a stream of (type, code, value) events with
a ``SYN_REPORT`` after each change, laid out as the drivers do (the axis codes, ranges, rest
values and button codes of ``xpad`` for Xbox pads and the Logitech F710 in XInput mode, of
``hid-playstation`` for the DualSense, of ``hid-generic`` for the F710 in DirectInput mode).
They are written from the drivers' layouts, not captured from a device (this machine has
none); ``scripts/check_gamepad_uinput.py`` drives a virtual pad through the kernel where
``/dev/uinput`` exists.

:class:`ReplayDevice` stands in for ``evdev.InputDevice`` (its ``fd`` is a pipe that
``select`` sees readable while events wait) so that the source's own reading thread runs.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
import time
from dataclasses import dataclass

from evdev import AbsInfo, InputEvent
from evdev import ecodes as e

STICK_XPAD = dict(min=-32768, max=32767, fuzz=16, flat=128, value=0)
STICK_HID = dict(min=0, max=255, fuzz=0, flat=15, value=128)


def _abs(code, min, max, fuzz=0, flat=0, value=0):
    return (code, AbsInfo(value, min, max, fuzz, flat, 0))


@dataclass(frozen=True)
class Pad:
    name: str
    capabilities: dict
    #: Role -> (code, value at full deflection in the direction the test names).
    left_x: int
    left_y: int
    right_x: int
    #: Raw value of an axis at deflection a in [-1, 1].
    minimum: int
    maximum: int
    stop: int = e.BTN_SOUTH
    estop: int = e.BTN_EAST

    def raw(self, a: float) -> int:
        return round(self.minimum + (a + 1.0) / 2.0 * (self.maximum - self.minimum))


XBOX = Pad("Microsoft X-Box One S pad", {
    e.EV_ABS: [_abs(e.ABS_X, **STICK_XPAD), _abs(e.ABS_Y, **STICK_XPAD),
               _abs(e.ABS_Z, 0, 1023), _abs(e.ABS_RX, **STICK_XPAD),
               _abs(e.ABS_RY, **STICK_XPAD), _abs(e.ABS_RZ, 0, 1023),
               _abs(e.ABS_HAT0X, -1, 1), _abs(e.ABS_HAT0Y, -1, 1)],
    e.EV_KEY: [e.BTN_SOUTH, e.BTN_EAST, e.BTN_NORTH, e.BTN_WEST, e.BTN_TL, e.BTN_TR,
               e.BTN_SELECT, e.BTN_START, e.BTN_MODE, e.BTN_THUMBL, e.BTN_THUMBR]},
    e.ABS_X, e.ABS_Y, e.ABS_RX, -32768, 32767)

F710_XINPUT = Pad("Logitech Gamepad F710", {
    e.EV_ABS: [_abs(e.ABS_X, **STICK_XPAD), _abs(e.ABS_Y, **STICK_XPAD),
               _abs(e.ABS_Z, 0, 255), _abs(e.ABS_RX, **STICK_XPAD),
               _abs(e.ABS_RY, **STICK_XPAD), _abs(e.ABS_RZ, 0, 255),
               _abs(e.ABS_HAT0X, -1, 1), _abs(e.ABS_HAT0Y, -1, 1)],
    e.EV_KEY: [e.BTN_SOUTH, e.BTN_EAST, e.BTN_NORTH, e.BTN_WEST, e.BTN_TL, e.BTN_TR,
               e.BTN_SELECT, e.BTN_START, e.BTN_MODE, e.BTN_THUMBL, e.BTN_THUMBR]},
    e.ABS_X, e.ABS_Y, e.ABS_RX, -32768, 32767)

DUALSENSE = Pad("Sony Interactive Entertainment DualSense Wireless Controller", {
    e.EV_ABS: [_abs(e.ABS_X, **STICK_HID), _abs(e.ABS_Y, **STICK_HID),
               _abs(e.ABS_Z, 0, 255), _abs(e.ABS_RX, **STICK_HID),
               _abs(e.ABS_RY, **STICK_HID), _abs(e.ABS_RZ, 0, 255),
               _abs(e.ABS_HAT0X, -1, 1), _abs(e.ABS_HAT0Y, -1, 1)],
    e.EV_KEY: [e.BTN_SOUTH, e.BTN_EAST, e.BTN_NORTH, e.BTN_WEST, e.BTN_TL, e.BTN_TR,
               e.BTN_TL2, e.BTN_TR2, e.BTN_SELECT, e.BTN_START, e.BTN_MODE, e.BTN_THUMBL,
               e.BTN_THUMBR]},
    e.ABS_X, e.ABS_Y, e.ABS_RX, 0, 255)

#: DirectInput mode: a generic HID joystick, the right stick on ABS_Z/ABS_RZ, the buttons
#: numbered (BTN_TRIGGER = "1" = X, BTN_THUMB = "2" = A, BTN_THUMB2 = "3" = B, ...).
F710_DIRECTINPUT = Pad("Logitech Logitech Cordless RumblePad 2", {
    e.EV_ABS: [_abs(e.ABS_X, **STICK_HID), _abs(e.ABS_Y, **STICK_HID),
               _abs(e.ABS_Z, **STICK_HID), _abs(e.ABS_RZ, **STICK_HID),
               _abs(e.ABS_HAT0X, -1, 1), _abs(e.ABS_HAT0Y, -1, 1)],
    e.EV_KEY: [e.BTN_TRIGGER, e.BTN_THUMB, e.BTN_THUMB2, e.BTN_TOP, e.BTN_TOP2, e.BTN_PINKIE,
               e.BTN_BASE, e.BTN_BASE2, e.BTN_BASE3, e.BTN_BASE4, e.BTN_BASE5, e.BTN_BASE6]},
    e.ABS_X, e.ABS_Y, e.ABS_Z, 0, 255, stop=e.BTN_THUMB, estop=e.BTN_THUMB2)

PADS = {"xbox": XBOX, "f710_xinput": F710_XINPUT, "dualsense": DUALSENSE,
        "f710_directinput": F710_DIRECTINPUT}


def report(*events: tuple[int, int, int]) -> list[tuple[int, int, int]]:
    """Events followed by SYN_REPORT, as a driver sends one change."""
    return [*events, (e.EV_SYN, e.SYN_REPORT, 0)]


class ReplayDevice:
    """An evdev device that replays events fed to it; :meth:`unplug` makes the next read
    fail as a removed device's does (ENODEV)."""

    def __init__(self, pad: Pad):
        self.pad = pad
        self.name = pad.name
        self.path = "/dev/input/replay"
        self._r, self._w = os.pipe()
        os.set_blocking(self._r, False)
        self.fd = self._r
        self._queue: list[InputEvent] = []
        self._lock = threading.Lock()
        self._unplugged = False
        self.values = {code: info.value for code, info in pad.capabilities[e.EV_ABS]}
        self.keys: set[int] = set()

    def capabilities(self, absinfo: bool = True) -> dict:
        return self.pad.capabilities

    def feed(self, events) -> None:
        now = time.time()
        with self._lock:
            for kind, code, value in events:
                self._queue.append(InputEvent(int(now), int(now % 1 * 1e6), kind, code, value))
                if kind == e.EV_ABS:
                    self.values[code] = value
                elif kind == e.EV_KEY:
                    (self.keys.add if value else self.keys.discard)(code)
        os.write(self._w, b"x")

    def unplug(self) -> None:
        self._unplugged = True
        os.write(self._w, b"x")

    def read(self):
        with contextlib.suppress(BlockingIOError):
            os.read(self._r, 4096)
        if self._unplugged:
            raise OSError(errno.ENODEV, "No such device")
        with self._lock:
            events, self._queue = self._queue, []
        if not events:
            raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")
        return iter(events)

    def absinfo(self, code: int) -> AbsInfo:
        info = dict(self.pad.capabilities[e.EV_ABS])[code]
        return info._replace(value=self.values[code])

    def active_keys(self) -> list[int]:
        return sorted(self.keys)

    def close(self) -> None:
        for fd in (self._r, self._w):
            with contextlib.suppress(OSError):
                os.close(fd)
