"""A gamepad as the velocity command source (``command.source.type: gamepad``).

Xbox pads, PlayStation pads and the Logitech F710 (XInput mode: the switch on its back at
"X"; in DirectInput mode name the buttons, see docs/ros2.md) through the Linux input
subsystem (``evdev``, the ``gamepad`` extra). Driving as with the Unitree remote
(:mod:`hardware.unitree.remote`): left stick up/down is forward speed, left stick left/right
sideways speed, right stick left/right the yaw rate,

    v_x = −s_x dz(a_ly),   v_y = −s_y dz(a_lx),   ω_z = −s_ω dz(a_rx)

(a ∈ [−1, 1] from each axis's own range, the kernel's "down and right positive", see
:mod:`hardware.gamepad.pad`; dz the remote's dead band; s the ``scale``). As with the remote,
the sticks are obeyed only once they have been seen centred.

Buttons (event code names, e.g. ``BTN_SOUTH``: A on an Xbox pad, cross on a PlayStation pad):

- ``stop_button`` (default ``BTN_SOUTH``): stand still. The command is zero from the press
  until the button is released *and* the sticks have been centred again (as at the start).
- ``estop_buttons`` (default ``[BTN_EAST]``: B / circle; held together when several): the
  e-stop. The reading thread puts the plant in damping at once (``plant.damp``: on a robot
  the bridge's damping, the same path as the remote's e-stop buttons and SIGINT), and the
  command is zero from then on.

The pad sends events only when something changes, so a connected pad's command is fresh
whenever it is read (stamp = the read's time). Unplugged (the device read fails), its last
command keeps the time of the unplugging as its stamp: the command filter's dead man brings
the robot to a stop after ``command.timeout``; a warning says so. Nothing from the device
ends the run's threads.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import select
import threading
import time as _time

import numpy as np
from evdev import InputDevice, ecodes, list_devices

from hardware.gamepad.pad import (
    AXIS_CANDIDATES,
    PadState,
    code_of,
    find_axes,
    is_gamepad,
    name_of,
)
from mpc.app.commands.command_base import CommandSource, VelocityCommand
from mpc.app.commands.sticks import Arming, check_stick_options, dead_band

log = logging.getLogger(__name__)


def open_device(device: str) -> InputDevice:
    """The input device at path ``device`` or, by name, the first whose name contains it;
    ('') the first that looks like a gamepad. ValueError naming what was found otherwise."""
    if device.startswith("/"):
        try:
            return InputDevice(device)
        except OSError as e:
            raise ValueError(f"command.source.device {device}: {e.strerror}") from None
    seen = []
    for path in list_devices():
        try:
            dev = InputDevice(path)
        except OSError:
            continue
        if (device and device.lower() in dev.name.lower()) or (
                not device and is_gamepad(dev.capabilities())):
            return dev
        seen.append(f"{path} ({dev.name})")
        dev.close()
    what = f"named like {device!r}" if device else "that looks like a gamepad"
    raise ValueError(f"command.source gamepad: no input device {what} (seen: "
                     f"{', '.join(seen) or 'no readable /dev/input/event* device'}); plug one "
                     f"in, or name it with command.source.device")


class GamepadCommand(CommandSource):
    name = "gamepad"

    def __init__(self, plant=None, device: str = "", scale: list[float] = (1.0, 0.5, 1.0),
                 dead_band: float = 0.08, stop_button: str = "BTN_SOUTH",
                 estop_buttons: list[str] = ("BTN_EAST",), axes: dict | None = None, *,
                 input_device=None):
        """``plant``: what the e-stop damps; ``input_device``: an open evdev device (else
        ``device`` is opened, see :func:`open_device`)."""
        self.check_options({"scale": scale, "dead_band": dead_band, "stop_button": stop_button,
                            "estop_buttons": estop_buttons, "axes": axes or {}})
        self.plant = plant
        self.device = input_device if input_device is not None else open_device(device)
        caps = self.device.capabilities(absinfo=True)
        self.axes = find_axes(caps, axes)
        keys = set(caps.get(ecodes.EV_KEY, []))
        self.stop_code = code_of(stop_button)
        self.estop_codes = frozenset(code_of(b) for b in estop_buttons)
        missing = [b for b in (stop_button, *estop_buttons) if code_of(b) not in keys]
        if missing:
            raise ValueError(f"command.source: the gamepad {self.device.name!r} has no "
                             f"button {', '.join(missing)}")
        self.scale = np.asarray(scale, dtype=float)
        self.dead_band = float(dead_band)
        self.state = PadState()
        #: The sticks have been seen centred (and the stop button released) since the start
        #: or the last stop.
        self.arming = Arming("gamepad", log)
        self.estopped = False
        #: Monotonic time of the unplugging, or None while connected.
        self.unplugged_at: float | None = None
        self.counts = {"reports": 0, "dropped": 0}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._receive, name="gamepad", daemon=True)
        self._thread.start()
        log.info("gamepad: %s (%s)", self.device.name, getattr(self.device, "path", "?"))

    @classmethod
    def check_options(cls, options: dict) -> None:
        check_stick_options(options)
        try:
            for name in (options.get("stop_button", "BTN_SOUTH"),
                         *options.get("estop_buttons", ("BTN_EAST",))):
                code_of(name)
            for role, name in (options.get("axes") or {}).items():
                if role not in AXIS_CANDIDATES:
                    raise ValueError(f"command.source.axes: unknown role {role!r}; roles: "
                                     f"{', '.join(AXIS_CANDIDATES)}")
                code_of(name)
        except ValueError as e:
            raise ValueError(f"command.source: {e}") from None
        if not options.get("estop_buttons", ("BTN_EAST",)):
            raise ValueError("command.source.estop_buttons must name at least one button")

    @classmethod
    def build(cls, options: dict, plant) -> GamepadCommand:
        return cls(plant, **options)

    # --- the reading thread ---------------------------------------------------------------
    def _receive(self) -> None:
        while not self._stop.is_set():
            try:
                ready, _, _ = select.select([self.device.fd], [], [], 0.05)
                if not ready:
                    continue
                for event in self.device.read():
                    self.handle(event.type, event.code, event.value)
            except BlockingIOError:
                continue
            except OSError as e:  # ENODEV: unplugged; anything else ends reading the same way
                self._unplugged(e)
                return
            except Exception as e:  # a bug: never let it end silently
                log.exception("gamepad: reading failed (%s): the dead man takes over", e)
                self._unplugged(e)
                return

    def _unplugged(self, error: OSError | Exception) -> None:
        with self._lock:
            self.unplugged_at = _time.monotonic()
        what = "unplugged" if getattr(error, "errno", None) == errno.ENODEV else f"lost ({error})"
        log.warning("gamepad %s: no more commands; the dead man stops the robot", what)

    def handle(self, kind: int, code: int, value: int) -> None:
        """Take one input event, as the reading thread does."""
        with self._lock:
            done = self.state.apply(kind, code, value)
            if self.state.dropped and kind == ecodes.EV_SYN and code == ecodes.SYN_REPORT:
                self.counts["dropped"] += 1
                self.state.resync({a.code: self.device.absinfo(a.code).value
                                   for a in self.axes.values()},
                                  set(self.device.active_keys()))
                done = True
            if not done:
                return
            self.counts["reports"] += 1
            held = self.state.buttons
            trip = bool(self.estop_codes) and self.estop_codes <= held and not self.estopped
            if trip:
                self.estopped = True
        if trip:
            names = "+".join(sorted(name_of(c) for c in self.estop_codes))
            if self.plant is not None:
                self.plant.damp(f"e-stop: gamepad {names}")
            else:
                log.error("e-stop: gamepad %s (no plant to damp)", names)

    # --- the command ----------------------------------------------------------------------
    def sticks(self) -> tuple[float, float, float]:
        """(dz(a_ly), dz(a_lx), dz(a_rx)) of the last report (0 for an axis not yet seen)."""
        d = self.dead_band
        with self._lock:
            raw = self.state.axes
        return tuple(dead_band(axis.scale(raw[axis.code]), d) if axis.code in raw else 0.0
                     for axis in (self.axes["left_y"], self.axes["left_x"],
                                  self.axes["right_x"]))

    def read(self, time: float) -> VelocityCommand:
        with self._lock:
            unplugged_at, estopped = self.unplugged_at, self.estopped
            stopping = self.stop_code in self.state.buttons
        stamp = time if unplugged_at is None else time - (_time.monotonic() - unplugged_at)
        ly, lx, rx = self.sticks()
        if estopped or stopping:
            self.arming.disarm()
            return VelocityCommand(0.0, 0.0, 0.0, stamp)
        if not self.arming((ly, lx, rx)):
            return VelocityCommand(0.0, 0.0, 0.0, stamp)
        sx, sy, sw = self.scale
        return VelocityCommand(-sx * ly, -sy * lx, -sw * rx, stamp)

    def stats(self) -> dict:
        """Reports taken, event losses (the kernel's SYN_DROPPED), unplugged, e-stopped."""
        return {**self.counts, "unplugged": self.unplugged_at is not None,
                "estopped": self.estopped}

    def close(self) -> None:
        self._stop.set()
        self._thread.join(1.0)
        with contextlib.suppress(OSError):
            self.device.close()
