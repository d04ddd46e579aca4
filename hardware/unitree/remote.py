"""The Unitree wireless remote as a velocity command source (``command.source.type:
unitree_remote``), and its 40-byte block.

Layout of the block (the legacy ``wirelessRemote`` of A1/Go1 LowState and the SDK2
``wireless_remote`` of Go2/H1 LowState_ are the same 40 bytes; Unitree's SDKs describe them as
the struct ``xRockerBtnDataStruct`` in their joystick headers), little-endian:

    bytes  0-1   head (unused here)
    bytes  2-3   buttons, u16: bit i is ``REMOTE_BUTTONS[i]`` (R1, L1, start, select, R2, L2,
                 F1, F2, A, B, X, Y, up, right, down, left)
    bytes  4-7   lx, f32   left stick, right positive, in [−1, 1]
    bytes  8-11  rx, f32   right stick, right positive
    bytes 12-15  ry, f32   right stick, up positive
    bytes 16-19  L2, f32   left trigger, [0, 1]
    bytes 20-23  ly, f32   left stick, up positive
    bytes 24-39  unused

Driving, as on the robots' own walking mode: left stick up/down is forward speed, left stick
left/right sideways speed, right stick left/right the yaw rate:

    v_x = s_x dz(ly),   v_y = −s_y dz(lx),   ω_z = −s_ω dz(rx),
    dz(a) = sign(a) max(|a| − d, 0) / (1 − d)   (dead band d, then full range again)

with s the ``scale`` per axis. The command is stamped with the plant time it is read at: the
block arrives with every robot state, and a robot link that goes silent trips the bridge's
state timeout (damping) long before anything else. The e-stop buttons keep priority: the
bridge trips on them whatever the sticks say, and while they are held this source commands
zero. Like a radio transmitter's throttle check, the source obeys the sticks only once it has
seen all of them centred: a stick already pushed when the run starts (a thumb resting on it
through the startup ramp) would otherwise hand the planner a running command the moment it
takes over from a standing robot (on loopback a Go1 so started tripped on joint speed within
a second; started from centre, the same profile drove it 20 s). A block whose sticks are not
finite or beyond :data:`MAX_STICK` (no remote sends that; a state that passed its checksum
can still carry it) commands zero and is counted (``refused``); values just past ±1 are
clipped to it.
"""

from __future__ import annotations

import logging
import struct
from dataclasses import dataclass

import numpy as np

from hardware.lowlevel import REMOTE_BUTTONS, remote_mask
from hardware.refusals import INVALID, Refusals
from mpc.app.commands.command_base import CommandSource, VelocityCommand
from mpc.app.commands.sticks import Arming, check_stick_options, dead_band

log = logging.getLogger(__name__)

REMOTE_SIZE = 40
_STICKS = struct.Struct("<H5f")  # buttons, lx, rx, ry, L2, ly from byte 2
#: A stick reading beyond this magnitude is not a stick's (see the module docstring).
MAX_STICK = 1.5


@dataclass(frozen=True)
class RemoteState:
    """The decoded remote: button bits and stick/trigger values."""

    buttons: int
    lx: float
    rx: float
    ry: float
    l2: float
    ly: float

    def held(self) -> list[str]:
        """Names of the buttons held."""
        return [n for i, n in enumerate(REMOTE_BUTTONS) if self.buttons >> i & 1]


def decode_remote(block: bytes) -> RemoteState:
    """A 40-byte block (layout in the module docstring) decoded."""
    if len(block) != REMOTE_SIZE:
        raise ValueError(f"a wireless-remote block has {REMOTE_SIZE} bytes, got {len(block)}")
    return RemoteState(*_STICKS.unpack_from(block, 2))


def encode_remote(buttons=(), lx: float = 0.0, ly: float = 0.0, rx: float = 0.0,
                  ry: float = 0.0, l2: float = 0.0) -> bytes:
    """A 40-byte block with ``buttons`` held and the sticks at the given values."""
    block = bytearray(REMOTE_SIZE)
    _STICKS.pack_into(block, 2, remote_mask(buttons), lx, rx, ry, l2, ly)
    return bytes(block)


class RemoteCommand(CommandSource):
    name = "unitree_remote"

    def __init__(self, plant, scale: list[float] = (1.0, 0.5, 1.0), dead_band: float = 0.08,
                 estop_buttons: list[str] = ("L2", "B")):
        """``plant`` must expose the robot's remote (``wireless_remote()``: a Unitree plant)."""
        if not callable(getattr(plant, "wireless_remote", None)):
            raise ValueError("command.source.type unitree_remote needs a Unitree robot plant "
                             "(plant.type unitree_udp or unitree_dds), which reads the remote")
        self.check_options({"scale": scale, "dead_band": dead_band,
                            "estop_buttons": estop_buttons})
        self.plant = plant
        self.scale = np.asarray(scale, dtype=float)
        self.dead_band = float(dead_band)
        self.estop_mask = remote_mask(estop_buttons)
        #: The sticks have been seen centred since the start (until then: zero command).
        self.arming = Arming("remote", log)
        #: Blocks refused for their values.
        self.refused = Refusals("remote", log)

    @classmethod
    def check_options(cls, options: dict) -> None:
        check_stick_options(options)
        unknown = [b for b in options.get("estop_buttons", ()) if b not in REMOTE_BUTTONS]
        if unknown:
            raise ValueError(f"command.source.estop_buttons: unknown button(s) "
                             f"{', '.join(unknown)}; buttons: {', '.join(REMOTE_BUTTONS)}")

    def stats(self) -> dict:
        """Blocks refused, by reason."""
        return {"refused": self.refused.as_dict()}

    @classmethod
    def build(cls, options: dict, plant) -> RemoteCommand:
        return cls(plant, **options)

    def read(self, time: float) -> VelocityCommand:
        r = decode_remote(self.plant.wireless_remote())
        if self.estop_mask and r.buttons & self.estop_mask == self.estop_mask:
            return VelocityCommand(0.0, 0.0, 0.0, time)
        raw = np.array([r.ly, r.lx, r.rx])
        if not np.all(np.abs(raw) <= MAX_STICK):  # also NaN
            self.refused.refuse(INVALID, f"sticks {raw.tolist()}")
            return VelocityCommand(0.0, 0.0, 0.0, time)
        d = self.dead_band
        sticks = tuple(dead_band(a, d) for a in np.clip(raw, -1.0, 1.0))
        if not self.arming(sticks):
            return VelocityCommand(0.0, 0.0, 0.0, time)
        sx, sy, sw = self.scale
        return VelocityCommand(sx * sticks[0], -sy * sticks[1], -sw * sticks[2], time)
