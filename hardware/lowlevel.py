"""Low-level command and state of a Unitree robot, independent of the wire format.

Everything is indexed by motor slot (``SLOTS`` = 20, as on every Unitree low-level message; a
robot uses the first 12 (quadrupeds) or 19 of them (H1)). Units: rad, rad/s, N m, N m/rad,
N m s/rad.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

SLOTS = 20

#: "Ignore this term" sentinels of the Unitree SDKs: a position target of POS_STOP turns the
#: position term off, a velocity target of VEL_STOP the velocity term.
POS_STOP = 2.146e9
VEL_STOP = 16000.0

#: Motor modes. Legacy motors (A1, Go1) and H1's hip/knee/torso motors servo in mode 0x0A;
#: Go2 motors and H1's ankle and arm motors in 0x01; 0x00 switches a motor off.
MODE_OFF = 0x00
MODE_SERVO = 0x0A
MODE_FOC = 0x01

#: Frame header of legacy Go1 and all SDK2 messages, and the low-level flag.
HEAD = (0xFE, 0xEF)
LEVEL_LOW = 0xFF


@dataclass
class MotorCommand:
    """Targets for every slot: ``tau = kp (q - q_m) + kd (dq - dq_m) + tau_ff`` in the motor."""

    mode: np.ndarray = field(default_factory=lambda: np.zeros(SLOTS, np.uint8))
    q: np.ndarray = field(default_factory=lambda: np.full(SLOTS, POS_STOP))
    dq: np.ndarray = field(default_factory=lambda: np.full(SLOTS, VEL_STOP))
    tau: np.ndarray = field(default_factory=lambda: np.zeros(SLOTS))
    kp: np.ndarray = field(default_factory=lambda: np.zeros(SLOTS))
    kd: np.ndarray = field(default_factory=lambda: np.zeros(SLOTS))

    def copy(self) -> MotorCommand:
        return MotorCommand(self.mode.copy(), self.q.copy(), self.dq.copy(), self.tau.copy(),
                            self.kp.copy(), self.kd.copy())

    def finite(self) -> bool:
        return bool(np.all(np.isfinite(self.q)) and np.all(np.isfinite(self.dq))
                    and np.all(np.isfinite(self.tau)) and np.all(np.isfinite(self.kp))
                    and np.all(np.isfinite(self.kd)))


@dataclass
class LowState:
    """One decoded state message. IMU quaternion (w, x, y, z); gyro (rad/s) and accelerometer
    (m/s^2) in the body frame; rpy (rad); foot force raw sensor counts."""

    tick: int
    quat: np.ndarray
    gyro: np.ndarray
    accel: np.ndarray
    rpy: np.ndarray
    q: np.ndarray
    dq: np.ndarray
    tau_est: np.ndarray
    mode: np.ndarray
    foot_force: np.ndarray
    wireless_remote: bytes = bytes(40)


#: Buttons of the wireless remote: bit of the u16 at bytes 2-3 of ``wireless_remote``.
REMOTE_BUTTONS = ("R1", "L1", "start", "select", "R2", "L2", "F1", "F2",
                  "A", "B", "X", "Y", "up", "right", "down", "left")


def remote_bits(wireless_remote: bytes) -> int:
    """The button bits (see ``REMOTE_BUTTONS``) of a 40-byte wireless-remote block."""
    return struct.unpack_from("<H", wireless_remote, 2)[0]


def remote_mask(buttons) -> int:
    """The button bits of ``buttons`` held together."""
    bits = 0
    for name in buttons:
        bits |= 1 << REMOTE_BUTTONS.index(name)
    return bits


def remote_block(buttons=()) -> bytes:
    """A 40-byte wireless-remote block with ``buttons`` held (sticks centred)."""
    block = bytearray(40)
    struct.pack_into("<H", block, 2, remote_mask(buttons))
    return bytes(block)
