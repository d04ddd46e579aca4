"""A virtual Xbox-like pad through the kernel: the gamepad source finds it by name and reads it.

    python scripts/check_gamepad_uinput.py

Needs ``/dev/uinput`` (the ``uinput`` kernel module, and the right to write it: root or the
``input`` group) and the ``gamepad`` extra. The test suite replays each pad's driver layout
without the kernel (``tests/hardware/gamepad``); this script adds the path through ``evdev``
and a real input device, on machines that have one to give. Exit code 0 when the source read
the stick, 1 when it did not, 2 when this machine has no ``/dev/uinput``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

NAME = "legged-mpc test pad"
STICK = (-32768, 32767)


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    if not os.path.exists("/dev/uinput"):
        print("check_gamepad_uinput: no /dev/uinput on this machine", file=sys.stderr)
        return 2
    from evdev import AbsInfo, UInput
    from evdev import ecodes as e

    from hardware.gamepad.source import GamepadCommand

    stick = AbsInfo(0, STICK[0], STICK[1], 16, 128, 0)
    caps = {e.EV_ABS: [(e.ABS_X, stick), (e.ABS_Y, stick), (e.ABS_RX, stick),
                       (e.ABS_RY, stick)],
            e.EV_KEY: [e.BTN_SOUTH, e.BTN_EAST, e.BTN_NORTH, e.BTN_WEST]}
    with UInput(caps, name=NAME) as ui:
        time.sleep(0.2)  # udev creates the event node
        source = GamepadCommand(None, device=NAME)
        try:
            for code in (e.ABS_X, e.ABS_Y, e.ABS_RX):
                ui.write(e.EV_ABS, code, 0)
            ui.syn()
            deadline = time.monotonic() + 2.0
            while source.counts["reports"] < 1 and time.monotonic() < deadline:
                time.sleep(0.01)
            source.read(0.0)  # the sticks seen centred: from now on they are obeyed
            ui.write(e.EV_ABS, e.ABS_Y, STICK[0])  # left stick fully forward (xpad: up is -)
            ui.syn()
            deadline = time.monotonic() + 2.0
            vx = 0.0
            while time.monotonic() < deadline and vx <= 0.9:
                vx = source.read(0.1).vx
                time.sleep(0.01)
        finally:
            source.close()
    ok = vx > 0.9
    print(f"check_gamepad_uinput: {'read' if ok else 'did not read'} the stick through the kernel "
          f"(forward command {vx:.2f} of 1)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
