"""The shared memory between the controller and its link process
(:mod:`hardware.unitree.link_process`).

One block per plant: a state record and a command record, each under a sequence lock (a writer
makes the sequence odd, writes, makes it even; a reader copies and keeps the copy only if the
sequence was even and unchanged), the damping reason, the remote's 40 bytes, and the
:class:`Lifeline` mutex through which the child learns at once that the controller's process
is gone. Both processes share CLOCK_MONOTONIC, so the times in it cross unchanged.
"""

from __future__ import annotations

import ctypes
import logging
import threading
from multiprocessing.shared_memory import SharedMemory

import numpy as np

from mpc.app.plants.plant_base import PlantState

log = logging.getLogger(__name__)

REASON_BYTES = 256
REMOTE_BYTES = 40

#: Bytes reserved for the lifeline's pthread mutex (40 on x86-64 and aarch64 glibc).
MUTEX_BYTES = 64
_EOWNERDEAD = 130  # Linux

class Lifeline:
    """A robust, process-shared pthread mutex in the shared memory that a thread of the
    controller's process holds for the whole run: when that process dies, however it dies, the
    kernel releases the mutex as its threads exit (before it tears down the process's memory)
    and wakes the link process waiting for it with EOWNERDEAD. Closing the controller's pipe
    and reparenting its children come only after that teardown, 100-200 ms for a process as
    large as ``mpc-run`` on a busy machine, longer than the command timeout; this comes at
    once."""

    def __init__(self, shm: SharedMemory, offset: int):
        self._libc = ctypes.CDLL(None, use_errno=True)
        cell = (ctypes.c_char * MUTEX_BYTES).from_buffer(shm.buf, offset)
        self._mutex = ctypes.addressof(cell)
        del cell  # no export is held, so the memory can always be closed: whoever closes it
        # must know that no thread still uses the mutex (see LinkProcessPlant._shutdown)
        self._release = threading.Event()
        self._holder: threading.Thread | None = None

    def initialize(self) -> None:
        """Controller side, before the link process starts: a robust, process-shared mutex."""
        attr = ctypes.create_string_buffer(64)
        libc = self._libc
        for call in (lambda: libc.pthread_mutexattr_init(attr),
                     lambda: libc.pthread_mutexattr_setpshared(attr, 1),  # PROCESS_SHARED
                     lambda: libc.pthread_mutexattr_setrobust(attr, 1),  # ROBUST
                     lambda: libc.pthread_mutex_init(ctypes.c_void_p(self._mutex), attr)):
            if call() != 0:
                raise OSError("cannot set up the link process's lifeline mutex")
        libc.pthread_mutexattr_destroy(attr)

    def hold(self) -> None:
        """Controller side: a thread takes the mutex and keeps it until :meth:`release`."""
        locked = threading.Event()

        def keep() -> None:
            self._libc.pthread_mutex_lock(ctypes.c_void_p(self._mutex))
            locked.set()
            self._release.wait()
            self._libc.pthread_mutex_unlock(ctypes.c_void_p(self._mutex))

        self._holder = threading.Thread(target=keep, name="link-lifeline", daemon=True)
        self._holder.start()
        locked.wait()

    def release(self) -> None:
        """Controller side, once the link process has ended: let go of the mutex."""
        self._release.set()
        if self._holder is not None:
            self._holder.join(timeout=1.0)

    def watch(self, on_death) -> None:
        """Link side: a thread waits for the mutex and calls ``on_death()`` if its holder's
        process died (an ordinary release, at the end of a run, calls nothing)."""
        def wait() -> None:
            if self._libc.pthread_mutex_lock(ctypes.c_void_p(self._mutex)) == _EOWNERDEAD:
                on_death()

        threading.Thread(target=wait, name="link-lifeline", daemon=True).start()


class SharedBlock:
    """The shared-memory layout (float64 words): state block, control block, damping request.

    state: seq, time (plant clock), receipt time (monotonic), tick, qpos[nq], qvel[nv]
    control: seq, state receipt time, tick, ctrl[nu], planned stance[feet] (1 down, 0 swing,
        NaN: no schedule)
    damp: seq, then the reason as UTF-8 bytes
    remote: the wireless-remote block of the latest state (written under the state's seq)
    """

    def __init__(self, shm: SharedMemory, nq: int, nv: int, nu: int, feet: int = 0):
        self.shm = shm
        self.nq, self.nv, self.nu, self.feet = nq, nv, nu, feet
        words = np.ndarray((self.words(nq, nv, nu, feet),), np.float64, shm.buf)
        s, c = 4 + nq + nv, 3 + nu + feet
        self.state = words[:s]
        self.control = words[s:s + c]
        self.damp_seq = words[s + c:s + c + 1]
        self.reason = np.ndarray((REASON_BYTES,), np.uint8, shm.buf,
                                 offset=8 * (s + c + 1))
        self.remote = np.ndarray((REMOTE_BYTES,), np.uint8, shm.buf,
                                 offset=8 * (s + c + 1) + REASON_BYTES)
        self._ctrl_seen = 0.0
        self._damp_seen = 0.0

    @staticmethod
    def words(nq: int, nv: int, nu: int, feet: int = 0) -> int:
        return 4 + nq + nv + 3 + nu + feet + 1

    @classmethod
    def size(cls, nq: int, nv: int, nu: int, feet: int = 0) -> int:
        return cls.lifeline_offset(nq, nv, nu, feet) + MUTEX_BYTES

    @classmethod
    def lifeline_offset(cls, nq: int, nv: int, nu: int, feet: int = 0) -> int:
        """Where the :class:`Lifeline` mutex lives (8-byte aligned, after the reason and the
        remote's bytes)."""
        return 8 * cls.words(nq, nv, nu, feet) + REASON_BYTES + REMOTE_BYTES

    # --- child side (the bridge's link thread) ------------------------------------------------
    def publish_state(self, state: PlantState, receipt: float, tick: int,
                      remote: bytes = bytes(REMOTE_BYTES)) -> None:
        b = self.state
        b[0] += 1  # odd: being written
        b[1], b[2], b[3] = state.time, receipt, tick
        b[4:4 + self.nq] = state.qpos
        b[4 + self.nq:] = state.qvel
        self.remote[:] = np.frombuffer(bytes(remote), np.uint8)
        b[0] += 1

    def poll(self, bridge) -> None:
        """Hand a new control or a damping request of the controller to ``bridge``."""
        if self.damp_seq[0] != self._damp_seen:
            self._damp_seen = self.damp_seq[0]
            bridge.damp(bytes(self.reason).rstrip(b"\0").decode(errors="replace")
                        or "damping requested by the controller")
        c = self.read_control()
        if c is not None:
            stance = c[3 + self.nu:]
            if self.feet:  # before the control: the estimator's prior for the coming states
                bridge.set_planned_stance(None if np.isnan(stance).any() else stance > 0.5)
            bridge.accept(c[3:3 + self.nu], float(c[1]), int(c[2]))

    def read_control(self, tries: int = 3) -> np.ndarray | None:
        """The controller's newest control block if it is new and whole, else None.

        The sequence is read before and again after the copy: a write that began during the
        copy changes it (or leaves it odd), and that copy may mix two controls, so it is thrown
        away and the read retried (at worst the control waits for the next tick)."""
        for _ in range(tries):
            seq = self.control[0]
            if seq == self._ctrl_seen:
                return None
            if seq % 2:
                continue
            c = self.control.copy()
            if self.control[0] == seq:
                self._ctrl_seen = seq
                return c
        return None

    # --- controller side -----------------------------------------------------------------------
    def read_state(self) -> tuple[PlantState, float, int]:
        while True:
            b = self.state.copy()
            if b[0] % 2 == 0 and b[0] == self.state[0]:
                qpos = b[4:4 + self.nq].copy()
                qvel = b[4 + self.nq:].copy()
                return PlantState(float(b[1]), qpos, qvel, np.zeros(0)), float(b[2]), int(b[3])

    def read_remote(self) -> bytes:
        """The wireless-remote block published with the latest state."""
        while True:
            seq = self.state[0]
            block = self.remote.tobytes()
            if seq % 2 == 0 and seq == self.state[0]:
                return block

    def write_control(self, ctrl: np.ndarray, receipt: float, tick: int,
                      stance: np.ndarray | None = None) -> None:
        c = self.control
        c[0] += 1
        c[1], c[2] = receipt, tick
        c[3:3 + self.nu] = ctrl
        c[3 + self.nu:] = np.nan if stance is None else stance
        c[0] += 1

    def request_damping(self, reason: str) -> None:
        data = reason.encode()[:REASON_BYTES]
        self.reason[:] = 0
        self.reason[:len(data)] = np.frombuffer(data, np.uint8)
        self.damp_seq[0] += 1
