"""The robot link in a process of its own.

A bridge's link thread must run every 2 ms. In the controller's process it competes for the
interpreter with the planner (and, while kernels compile, loses for hundreds of milliseconds),
so by default a hardware plant runs its bridge in a child process and the controller talks to
it through shared memory:

- state: the child publishes every state it receives (planning-model qpos/qvel, its receipt
  time and tick) under a sequence lock;
- commands: the controller writes each control (and the time and tick of the state it was
  computed from, and which feet the gait schedule wants down, the estimator's contact prior)
  under a sequence lock; the child picks it up at its next command tick, and keeps a copy only
  if the sequence is even and unchanged after the copy;
- damping: the controller raises a flag with a reason; the child's trips come back over a pipe;
- log: the child's warnings and errors (its refused packets, at most one line a second per
  reason set; its trips) come back over the pipe too and are logged by the controller, so they
  reach the run's events; its counts come back when it closes (:meth:`LinkProcessPlant.stats`).

The child owns every safety decision (watchdogs, trips, damping), runs at raised priority where
the system allows (``link_nice``; with ``link_priority`` under SCHED_FIFO instead, since a
niceness is a share of the processor, not a deadline: :mod:`mpc.app.runtime.priority`), and
puts the robot in damping if the controller's process disappears: at once through the
:class:`Lifeline` mutex the controller holds, and through the pipe and the parent's pid as a
backstop. Both processes share CLOCK_MONOTONIC, so times cross
the boundary unchanged.

The shared memory's layout is :mod:`hardware.unitree.shared_block`;
:class:`hardware.unitree.plant_base.UnitreePlant`, the base of the plants the configs name,
chooses the bridge in a child process behind a :class:`LinkProcessPlant` (``link_process``, the
default) or the bridge itself in this process (tests).
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import importlib
import logging
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time as _time
from multiprocessing.shared_memory import SharedMemory

import numpy as np

import robots
from hardware.safety.layer import install_estop
from hardware.unitree.shared_block import Lifeline, SharedBlock
from hardware.unitree.udp_link import LinkError
from mpc.app.plants.plant_base import Plant, PlantState
from mpc.app.runtime import priority
from mpc.app.runtime.signals import STOP_SIGNALS, held_signals
from robots.info import RobotInfo

log = logging.getLogger(__name__)

#: How long a link process that is still starting gets to end after SIGTERM before it is
#: killed: until the controller asks for the startup ramp it has sent nothing but damping, so
#: killing it is safe; the wait lets it close its link with damping when it can.
ABORT_WAIT = 0.5


#: Shared memory of closed plants, kept mapped (see :meth:`LinkProcessPlant._shutdown`).
_RETIRED: list[SharedMemory] = []

class LinkProcessPlant(Plant):
    """The controller's side of a bridge running in a child process."""

    realtime_only = True

    def __init__(self, bridge_cls: type, robot: RobotInfo, options: dict):
        self.robot = robot
        self.safety = options.get("safety")
        model = robots.load_planning_model(robot.name)
        self.na = model.na
        self.rate = float(options.get("rate", 500.0))
        feet = len(robot.feet)
        size = SharedBlock.size(model.nq, model.nv, model.nu, feet)
        self.pipe_lock = threading.Lock()
        self.local = threading.local()
        self._damping_reason: str | None = None
        #: The gait schedule's latest planned stance, sent with the next control.
        self._stance: np.ndarray | None = None
        self.closed = False
        self.final_stats: dict = {}
        #: The signal the link process got on its own (see Plant.interrupted_by).
        self.interrupted_by: str | None = None
        self.lifeline: Lifeline | None = None
        self.conn = self.proc = None
        self.shm = SharedMemory(create=True, size=size)
        try:  # whatever interrupts the start (Ctrl-C included) leaves nothing behind
            self._start(bridge_cls, robot, options, model, feet)
        except KeyboardInterrupt as e:
            self._abort(f"e-stop: {e}" if e.args else "e-stop: interrupted")
            raise
        except BaseException:
            self._shutdown()
            raise

    def _start(self, bridge_cls: type, robot: RobotInfo, options: dict, model, feet: int
               ) -> None:
        """Shared memory and lifeline set up, the link process started and ready."""
        self.block = SharedBlock(self.shm, model.nq, model.nv, model.nu, feet)
        self.block.state[:] = 0.0
        self.block.control[:] = 0.0
        self.block.damp_seq[:] = 0.0
        lifeline = Lifeline(self.shm, SharedBlock.lifeline_offset(model.nq, model.nv, model.nu,
                                                                   feet))
        lifeline.initialize()
        lifeline.hold()
        self.lifeline = lifeline
        ctx = multiprocessing.get_context("spawn")
        self.conn, child_conn = ctx.Pipe()
        target = f"{bridge_cls.__module__}:{bridge_cls.__name__}"
        self.proc = ctx.Process(target=serve, name="unitree-link", daemon=True,
                                args=(target, robot.name, options, self.shm.name, child_conn,
                                      os.getpid()))
        # The child inherits this thread's signal mask: it starts with SIGINT and SIGTERM
        # blocked and unblocks them once its own handlers are in place (see serve), so a
        # Ctrl-C while it imports is neither lost nor a traceback. The mask is this thread's
        # only: another thread (the run's record, the lifeline's holder) may take the signal
        # for the process, and Python then runs its handler here, inside start(). Between the
        # spawn and the write of the child's arguments that cut the child's input short (a
        # traceback from its bootstrap, and a child this plant did not know it had), so the
        # signal is only noted while start() runs and raised again once it has returned.
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            with held_signals() as noted:
                self.proc.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            child_conn.close()
        if noted:
            signal.raise_signal(signal.Signals[noted[0]])
        connect = float(options.get("connect_timeout", 3.0))
        self._expect("ready", connect + 60.0)  # the child imports and compiles first
        # A program that ends without closing the plant (an exception) closes it at its exit,
        # before multiprocessing's exit handler, which would SIGTERM the link process (it only
        # damps on a signal) and then wait for it forever.
        atexit.register(self.close)

    def _expect(self, what: str, timeout: float, errors: bool = True):
        """Wait for message ``what`` from the child, handling trips meanwhile; an error it
        reports raises, and a signal it got raises KeyboardInterrupt (or with ``errors``
        false, while closing, both are only noted)."""
        deadline = _time.monotonic() + timeout
        while _time.monotonic() < deadline:
            if not self.conn.poll(0.01):
                if not self.proc.is_alive():
                    raise LinkError("the robot link process ended unexpectedly")
                continue
            try:
                kind, *rest = self.conn.recv()
            except (EOFError, OSError):
                raise LinkError("the robot link process ended unexpectedly") from None
            if kind == what:
                return rest
            if kind == "error" and errors:
                raise (LinkError if rest[1] else ValueError)(rest[0])
            if kind == "interrupted" and errors:  # the link process got a signal too
                raise KeyboardInterrupt(rest[0])
            self._handle(kind, rest)
        raise LinkError(f"the robot link process did not answer ({what}) within {timeout:g} s")

    def _handle(self, kind: str, rest: list) -> None:
        if kind == "interrupted":
            self.interrupted_by = rest[0]
            if self._damping_reason is None:
                self._damping_reason = f"e-stop: {rest[0]}"
        elif kind == "tripped" and self._damping_reason is None:
            self._damping_reason = rest[0]  # logged there, forwarded here (events.log)
        elif kind == "closed":
            self.final_stats = rest[0]
        elif kind == "log":  # the link process's warning or error (see the module docstring)
            level, name, message = rest
            logging.getLogger(name).log(level, "%s", message)

    def _ended(self) -> None:
        """The link process ended unasked: the run's reason, logged here (where the run's
        events.log is), since the link process could not say so itself."""
        if self._damping_reason is None:
            self._damping_reason = "the robot link process ended"
            log.error("damping: the robot link process ended")

    def _drain(self) -> None:
        with self.pipe_lock:
            try:
                while self.conn.poll():
                    kind, *rest = self.conn.recv()
                    self._handle(kind, rest)
            except (EOFError, OSError):
                if not self.closed:
                    self._ended()

    @property
    def damping_reason(self) -> str | None:
        if not self.closed:
            self._drain()
            if self._damping_reason is None and not self.proc.is_alive():
                self._ended()
        return self._damping_reason

    @property
    def timestep(self) -> float:
        return 1.0 / self.rate

    def read_state(self) -> PlantState:
        state, receipt, tick = self.block.read_state()
        self.local.state = (receipt, tick)
        return PlantState(state.time, state.qpos, state.qvel, np.zeros(self.na))

    def wireless_remote(self) -> bytes:
        """The 40-byte wireless-remote block of the robot's latest state."""
        return self.block.read_remote()

    def send(self, ctrl: np.ndarray) -> None:
        ctrl = np.asarray(ctrl, dtype=float)
        if ctrl.shape != (self.block.nu,) or not np.all(np.isfinite(ctrl)):
            self.damp("non-finite or malformed command from the controller")
            return
        receipt, tick = getattr(self.local, "state", (np.nan, -1))
        self.block.write_control(ctrl, receipt, tick, self._stance)

    def set_planned_stance(self, stance: np.ndarray | None) -> None:
        self._stance = None if stance is None else np.asarray(stance, float)

    def damp(self, reason: str) -> None:
        if self.closed:
            return
        self.block.request_damping(reason)
        if self._damping_reason is None:
            self._damping_reason = reason
            log.error("damping: %s", reason)

    def prepare(self) -> None:
        install_estop(self.damp)
        with self.pipe_lock:
            self.conn.send(("prepare",))
            ramp = getattr(self.safety, "ramp_time", 3.0)
            self._expect("prepared", ramp + 10.0)

    def stats(self) -> dict:
        return dict(self.final_stats)

    def close(self) -> None:
        if self.closed:
            return
        try:
            with self.pipe_lock:
                self.conn.send(("close",))
                # an error first (a ramp stopped by damping) does not end the wait
                self._expect("closed_done", 10.0, errors=False)
        except (LinkError, OSError, EOFError):
            pass
        self._shutdown()
        log.info("robot link closed: %s", self.final_stats)

    def _abort(self, reason: str) -> None:
        """Stop a link process interrupted while it starts (importing, connecting), at once:
        damping requested through the shared memory (applied as soon as its bridge exists),
        the pipe's close, and SIGTERM, which ends a child still connecting and damps one that
        serves. Until the ramp is asked for it sends nothing but damping, so a child that has
        not ended after :data:`ABORT_WAIT` is killed."""
        with held_signals():  # the link process's own report of a Ctrl-C, a second Ctrl-C
            if self._started():
                self.block.request_damping(reason)
                with contextlib.suppress(OSError, ValueError):
                    self.conn.send(("close",))
                with contextlib.suppress(OSError):
                    self.proc.terminate()
                log.warning("robot link stopped while starting: %s", reason)
            self._shutdown(ABORT_WAIT)

    def _started(self) -> bool:
        return self.proc is not None and self.proc.pid is not None

    def _shutdown(self, wait: float = 5.0) -> None:
        self.closed = True
        atexit.unregister(self.close)
        if self._started():
            self.proc.join(timeout=wait)
            if self.proc.is_alive():
                self.proc.kill()
                self.proc.join(timeout=1.0)
        if self.conn is not None:
            self.conn.close()
        if self.lifeline is not None:
            self.lifeline.release()
        # Unlinked but left mapped until this process ends: a thread that outlives the run
        # (a planner iteration longer than the loop's join timeout, the lifeline's holder on a
        # starved machine) may still touch it, and unmapped memory would crash the process.
        _RETIRED.append(self.shm)
        with contextlib.suppress(FileNotFoundError):
            self.shm.unlink()

def serve(target: str, robot_name: str, options: dict, shm_name: str, conn, parent: int
          ) -> None:
    """The child: build the bridge, run it until the controller closes it or disappears."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    nice = int(options.pop("link_nice", -10))
    realtime = int(options.pop("link_priority", 0))
    with contextlib.suppress(PermissionError, OSError):
        os.nice(nice)
    holder: dict = {}

    def on_signal(signum: int, _frame) -> None:
        """Serving: damp (lock-free) and leave the ending to the controller. Starting: stop
        at once; the bridge has sent nothing but damping (it ramps only when asked)."""
        name = signal.Signals(signum).name
        if "bridge" in holder:
            holder.setdefault("signal", name)
            holder["bridge"].request_damping(f"e-stop: {name}")
        elif "interrupted" not in holder:  # once: a second signal must not break the exit
            holder["interrupted"] = name
            raise KeyboardInterrupt(name)

    for sig in STOP_SIGNALS:
        signal.signal(sig, on_signal)
    shm = None
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)  # blocked since the spawn
        shm = SharedMemory(name=shm_name)
        module, cls_name = target.split(":")
        cls = getattr(importlib.import_module(module), cls_name)
        model = robots.load_planning_model(robot_name)
        feet = len(robots.info(robot_name).feet)
        block = SharedBlock(shm, model.nq, model.nv, model.nu, feet)
        try:
            if realtime:  # the threads imports started, and the bridge's, which inherit it
                priority.set_realtime(realtime, "plant.link_priority", every_thread=True)
            bridge = cls(robots.info(robot_name), **options)
        except Exception as e:  # every construction error goes to the controller as one line
            conn.send(("error", str(e), isinstance(e, OSError)))
            return
        latest = bridge.latest  # publish the first state, then let the link thread publish
        block.publish_state(bridge._plant_state(latest), latest[0], latest[1].tick,
                            latest[1].wireless_remote)
        bridge.shared = block
        holder["bridge"] = bridge
        lifeline = Lifeline(shm, SharedBlock.lifeline_offset(model.nq, model.nv, model.nu,
                                                             feet))
        forwarded = ForwardedLog.install()
        lifeline.watch(lambda: orphaned(bridge, forwarded))
        conn.send(("ready",))
        _serve_loop(bridge, conn, parent, forwarded, lambda: holder.get("signal"))
    except KeyboardInterrupt as e:  # a signal while starting: a bridge being built closes
        # itself at exit (atexit), with damping
        with contextlib.suppress(OSError, EOFError):
            conn.send(("interrupted", str(e)))
    finally:
        if shm is not None:
            shm.close()
        # this process ends next: its teardown need not collect what it built (1-2 s on a
        # busy machine, which the controller's close would wait for)
        gc.freeze()


class ForwardedLog(logging.Handler):
    """The link process's warnings and errors, queued (any thread may log) for
    :func:`_serve_loop` to send to the controller; on stderr once the controller is gone
    (:meth:`orphaned`: a message sent to a controller that is dying would be lost)."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.queue: queue.SimpleQueue[tuple[int, str, str]] = queue.SimpleQueue()
        self.orphan = False

    @classmethod
    def install(cls) -> ForwardedLog:
        """Replace the root logger's handlers (stderr) with a forwarding one."""
        root = logging.getLogger()
        for handler in list(root.handlers):
            root.removeHandler(handler)
        forwarded = cls()
        root.addHandler(forwarded)
        return forwarded

    def emit(self, record: logging.LogRecord) -> None:
        item = (record.levelno, record.name, record.getMessage())
        if self.orphan:
            self._print(*item)
        else:
            self.queue.put(item)

    @staticmethod
    def _print(level: int, name: str, message: str) -> None:
        print(f"{logging.getLevelName(level)} {name}: {message}", file=sys.stderr, flush=True)

    def orphaned(self) -> None:
        """The controller is gone: what is queued, and what is logged from now on, goes to
        stderr."""
        self.orphan = True
        while not self.queue.empty():
            self._print(*self.queue.get())

    def forward(self, conn) -> None:
        """Send what is queued; what cannot be sent goes to stderr (the controller is gone)."""
        while not self.queue.empty():
            item = self.queue.get()
            try:
                conn.send(("log", *item))
            except (OSError, EOFError, ValueError):
                self._print(*item)


def orphaned(bridge, forwarded: ForwardedLog) -> None:
    """The controller's process is gone: damping, said on stderr."""
    forwarded.orphaned()
    bridge.damp("the controller's process is gone")


def _serve_loop(bridge, conn, parent: int, forwarded: ForwardedLog, signalled) -> None:
    """Serve the controller until it closes the link or disappears. The first damping is
    reported once: a trip with its reason, or, if this process got a signal (``signalled()``
    names it), the signal, which interrupts the run as if the controller had got it."""
    reported = False

    def report(error: str | None = None) -> None:
        nonlocal reported
        name = signalled()
        if name is not None:
            message = ("interrupted", name)
        elif error is not None:
            message = ("error", error, True)
        else:
            message = ("tripped", bridge.damping_reason)
        if not reported or error is not None:
            conn.send(message)
        reported = True

    try:
        while True:
            if os.getppid() != parent:
                orphaned(bridge, forwarded)
                break
            forwarded.forward(conn)
            if bridge.damping_reason is not None and not reported:
                report()
            if not conn.poll(0.02):
                continue
            kind, *_ = conn.recv()
            if kind == "prepare":
                try:
                    bridge.ramp()
                    conn.send(("prepared",))
                except LinkError as e:  # the ramp stopped: its answer is the reason
                    report(str(e))
            elif kind == "close":
                break
    except (EOFError, OSError):
        orphaned(bridge, forwarded)
    bridge.close()
    forwarded.forward(conn)
    with contextlib.suppress(OSError, EOFError):
        conn.send(("closed", bridge.stats()))
        conn.send(("closed_done",))
