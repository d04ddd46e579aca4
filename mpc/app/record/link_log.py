"""The robot link's log: what a hardware bridge received and sent, column by column, in bounded
memory; part of a hardware run's directory (``plant.log_file``, relative to the run directory).

A hardware run with ``plant.log_file`` keeps, at the link's own rate (500 Hz):

- per accepted state: its arrival time (``state_t``, CLOCK_MONOTONIC) and tick, the joint
  encoders, speeds and estimated torques of the used motor slots (``state_q``, ``state_dq``,
  ``state_tau``), the IMU (``state_quat`` w x y z, ``state_gyro``, ``state_accel``) and the
  foot-force sensors (``state_foot``);
- per base estimate: the state tick it belongs to and the estimated base pose and velocity
  (``est_tick``, ``est_qpos``, ``est_qvel``);
- per command sent: its departure time, checksum, the tick of the state it was computed from
  (-1: a repeat or not the controller's), the link's phase, and the command itself as it left
  (after the safety clamp): target angle, speed, gains and torque of the used slots
  (``cmd_q``, ``cmd_dq``, ``cmd_kp``, ``cmd_kd``, ``cmd_tau``);
- ``slots``: the used slots, the columns' order (the robot's motor order).

This is what system identification reads (``mpc-sysid``, :func:`read`): commands and encoders
of the same link, timed on one clock. The bridges of the hardware layer write it
(:mod:`hardware.unitree.bridge`), and so does the fake robot as a simulated plant
(:mod:`hardware.fake.motor_plant`, stamped with simulation time). Each column keeps its newest
``max_rows`` rows (ten minutes at 500 Hz by default): a long run cannot exhaust the link
process's memory, and rows are stored in preallocated blocks of numbers rather than one Python
object each.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

#: Rows per storage block.
BLOCK = 4096


class Column:
    """One column: rows of a fixed width and dtype, the newest ``max_rows`` kept."""

    def __init__(self, max_rows: int, width: int = 0, dtype: str = "f8"):
        self.max_rows = max_rows
        self.shape = (width,) if width else ()
        self.dtype = np.dtype(dtype)
        self._blocks: list[np.ndarray] = []
        self._start = 0  # rows of the first block already dropped
        self._fill = BLOCK  # rows used in the last block

    def append(self, row) -> None:
        if self._fill == BLOCK:
            self._blocks.append(np.empty((BLOCK, *self.shape), self.dtype))
            self._fill = 0
        self._blocks[-1][self._fill] = row
        self._fill += 1
        if len(self) > self.max_rows:
            self._start += 1
            if self._start == BLOCK:
                self._blocks.pop(0)
                self._start = 0

    def __len__(self) -> int:
        if not self._blocks:
            return 0
        return (len(self._blocks) - 1) * BLOCK + self._fill - self._start

    def array(self) -> np.ndarray:
        if not self._blocks:
            return np.empty((0, *self.shape), self.dtype)
        parts = list(self._blocks)
        parts[-1] = parts[-1][:self._fill]
        parts[0] = parts[0][self._start:]
        return np.concatenate(parts)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = self.array()
        return out if dtype is None else out.astype(dtype)


class LinkLog(dict):
    """The bridge's columns by name (module docstring)."""

    #: Rows kept per column by default: ten minutes at 500 Hz.
    MAX_ROWS = 300_000

    def __init__(self, max_rows: int, slots: np.ndarray, feet: int = 4):
        super().__init__()
        n = len(slots)
        self.slots = np.asarray(slots)
        spec = {"state_t": (0, "f8"), "state_tick": (0, "i8"),
                "state_q": (n, "f8"), "state_dq": (n, "f4"), "state_tau": (n, "f4"),
                "state_quat": (4, "f8"), "state_gyro": (3, "f4"), "state_accel": (3, "f4"),
                "state_foot": (feet, "f4"),
                "est_tick": (0, "i8"), "est_qpos": (7, "f8"), "est_qvel": (6, "f8"),
                "cmd_t": (0, "f8"), "cmd_crc": (0, "i8"), "cmd_tick": (0, "i8"),
                "cmd_phase": (0, "U10"),
                "cmd_q": (n, "f8"), "cmd_dq": (n, "f4"), "cmd_kp": (n, "f4"),
                "cmd_kd": (n, "f4"), "cmd_tau": (n, "f4")}
        for name, (width, dtype) in spec.items():
            self[name] = Column(max_rows, width, dtype)

    def state(self, time: float, st) -> None:
        """A state ``st`` accepted at ``time`` (a low-level state: tick, per-slot q, dq, tau_est,
        quat, gyro, accel, foot_force)."""
        used = self.slots
        self["state_t"].append(time)
        self["state_tick"].append(st.tick)
        self["state_q"].append(st.q[used])
        self["state_dq"].append(st.dq[used])
        self["state_tau"].append(st.tau_est[used])
        self["state_quat"].append(st.quat)
        self["state_gyro"].append(st.gyro)
        self["state_accel"].append(st.accel)
        self["state_foot"].append(st.foot_force)

    def command(self, time: float, cmd, tick: int, phase: str, crc: int = 0) -> None:
        """A command ``cmd`` (a motor command: per-slot q, dq, kp, kd, tau) that left at
        ``time`` (as clamped), with the tick of the state it was computed from (-1: a repeat,
        or not the controller's), the link's phase and the packet's checksum."""
        used = self.slots
        self["cmd_t"].append(time)
        self["cmd_crc"].append(crc)
        self["cmd_tick"].append(tick)
        self["cmd_phase"].append(phase)
        self["cmd_q"].append(cmd.q[used])
        self["cmd_dq"].append(cmd.dq[used])
        self["cmd_kp"].append(cmd.kp[used])
        self["cmd_kd"].append(cmd.kd[used])
        self["cmd_tau"].append(cmd.tau[used])

    def write(self, path: str | Path) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, slots=self.slots, **{k: c.array() for k, c in self.items()})


class LinkLogError(ValueError):
    """A link log that cannot be read (the message is one line naming the file)."""


#: Columns a log must have for :func:`read` (older logs lack the per-slot ones).
REQUIRED = ("slots", "state_t", "state_tick", "state_q", "state_dq", "state_quat",
            "state_gyro", "state_accel", "cmd_t", "cmd_phase", "cmd_q", "cmd_dq", "cmd_kp",
            "cmd_kd", "cmd_tau")


def read(path: str | Path) -> dict[str, np.ndarray]:
    """The columns of the link log ``path``; LinkLogError naming the file and what it lacks."""
    path = Path(path)
    if not path.is_file():
        raise LinkLogError(f"{path}: no such link log")
    try:
        with np.load(path) as z:
            columns = {k: z[k] for k in z.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as e:
        raise LinkLogError(f"{path}: unreadable link log ({e})") from None
    missing = [k for k in REQUIRED if k not in columns]
    if missing:
        raise LinkLogError(f"{path}: not a link log with commands and encoders (no "
                           f"{', '.join(missing)})")
    if len(columns["state_t"]) < 2 or len(columns["cmd_t"]) < 2:
        raise LinkLogError(f"{path}: the link log holds no states or commands")
    return columns
