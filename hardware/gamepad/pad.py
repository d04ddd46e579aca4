"""A gamepad's axes and buttons from its Linux input events, whatever its driver.

Which axis is which is read from the device's capabilities, not assumed: the left stick is
``ABS_X``/``ABS_Y`` on every pad; the right stick's horizontal axis is ``ABS_RX`` where the
device has it (Xbox pads and the Logitech F710 in XInput mode through ``xpad``, PlayStation
pads through ``hid-playstation``), else ``ABS_Z`` (generic HID pads: the F710 in DirectInput
mode), and the triggers (``ABS_Z``/``ABS_RZ`` on xpad, resting at their minimum) are not used.
Each axis is scaled by its own range (``absinfo``: xpad −32768..32767, hid-playstation and HID
pads 0..255 with the centre in the middle) to a ∈ [−1, 1]:

    a = 2 (v − min) / (max − min) − 1

with the kernel's convention that a stick pushed right or *down* is positive.

Events are taken as the kernel sends them: values accumulate and become the pad's state at
each ``SYN_REPORT``; after a ``SYN_DROPPED`` (the kernel's buffer overflowed) the events up to
the next report are discarded and the state is read back from the device (``resync``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evdev import ecodes

#: Roles of the axes the command uses, and the codes they are looked for under, in order.
AXIS_CANDIDATES = {"left_x": ("ABS_X",), "left_y": ("ABS_Y",),
                   "right_x": ("ABS_RX", "ABS_Z")}


@dataclass(frozen=True)
class Axis:
    code: int
    minimum: int
    maximum: int

    def scale(self, value: int) -> float:
        """a ∈ [−1, 1] of a raw value (clipped: a driver may report past its own range)."""
        span = self.maximum - self.minimum
        a = 2.0 * (value - self.minimum) / span - 1.0 if span > 0 else 0.0
        return min(1.0, max(-1.0, a))


def code_of(name: str) -> int:
    """The event code of a name (``ABS_RX``, ``BTN_SOUTH``); ValueError if there is none."""
    code = ecodes.ecodes.get(name)
    if code is None or not name.startswith(("ABS_", "BTN_", "KEY_")):
        raise ValueError(f"{name!r} is not an input event code (e.g. ABS_RX, BTN_SOUTH)")
    return code


def name_of(code: int, kind: int = ecodes.EV_KEY) -> str:
    """The name of an event code (the first, where the kernel has aliases: BTN_SOUTH/BTN_A)."""
    table = ecodes.ABS if kind == ecodes.EV_ABS else {**ecodes.KEY, **ecodes.BTN}
    name = table.get(code, str(code))
    return name[0] if isinstance(name, (list, tuple)) else name


def find_axes(capabilities: dict, overrides: dict[str, str] | None = None) -> dict[str, Axis]:
    """The axes of each role (:data:`AXIS_CANDIDATES`, or ``overrides`` {role: code name})
    from ``capabilities(absinfo=True)`` of an evdev device; ValueError naming what is
    missing."""
    ranges = {code: info for code, info in capabilities.get(ecodes.EV_ABS, [])}
    axes = {}
    for role, candidates in AXIS_CANDIDATES.items():
        names = (overrides[role],) if overrides and role in overrides else candidates
        code = next((code_of(n) for n in names if code_of(n) in ranges), None)
        if code is None:
            have = ", ".join(name_of(c, ecodes.EV_ABS) for c in sorted(ranges)) or "none"
            raise ValueError(f"the gamepad has no axis for the {role.replace('_', ' ')} "
                             f"stick ({' or '.join(names)}; it has: {have})")
        info = ranges[code]
        axes[role] = Axis(code, info.min, info.max)
    return axes


def is_gamepad(capabilities: dict) -> bool:
    """Whether a device looks like a gamepad: a left stick and gamepad or joystick buttons."""
    abs_codes = {code for code, _ in capabilities.get(ecodes.EV_ABS, [])}
    keys = set(capabilities.get(ecodes.EV_KEY, []))
    return ({ecodes.ABS_X, ecodes.ABS_Y} <= abs_codes
            and bool(keys & (set(range(ecodes.BTN_JOYSTICK, ecodes.BTN_JOYSTICK + 16))
                             | set(range(ecodes.BTN_GAMEPAD, ecodes.BTN_GAMEPAD + 16)))))


@dataclass
class PadState:
    """The pad's axes (raw values by code) and held buttons, as of the last ``SYN_REPORT``."""

    axes: dict[int, int] = field(default_factory=dict)
    buttons: frozenset[int] = frozenset()
    #: Reports taken so far.
    reports: int = 0
    _axes: dict[int, int] = field(default_factory=dict)
    _buttons: set[int] = field(default_factory=set)
    _dropped: bool = False

    def apply(self, kind: int, code: int, value: int) -> bool:
        """Take one event; True when it completed a report (the state changed to it)."""
        if kind == ecodes.EV_SYN:
            if code == ecodes.SYN_DROPPED:
                self._dropped = True
            elif code == ecodes.SYN_REPORT:
                if self._dropped:  # discard the partial report; the caller resyncs
                    return False
                self.axes = dict(self._axes)
                self.buttons = frozenset(self._buttons)
                self.reports += 1
                return True
            return False
        if self._dropped:
            return False
        if kind == ecodes.EV_ABS:
            self._axes[code] = value
        elif kind == ecodes.EV_KEY:
            if value:  # 1 pressed, 2 auto-repeat
                self._buttons.add(code)
            else:
                self._buttons.discard(code)
        return False

    @property
    def dropped(self) -> bool:
        """Events were lost: :meth:`resync` with the device's own state."""
        return self._dropped

    def resync(self, axes: dict[int, int], buttons: set[int]) -> None:
        """Replace the state by the device's (after ``SYN_DROPPED``)."""
        self._axes, self._buttons, self._dropped = dict(axes), set(buttons), False
        self.axes, self.buttons = dict(axes), frozenset(buttons)
        self.reports += 1
