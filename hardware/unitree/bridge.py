"""A hardware plant for Unitree low-level control, whatever the transport.

One link thread owns the robot link. It waits for state messages until the next command tick,
decodes them, feeds the base-state source, checks the trips (tilt, joint speed, non-finite data,
e-stop buttons), and at every tick (``rate`` Hz) checks the watchdogs (stale state, silent
controller) and sends one command:

- connecting: the safe state (legacy UDP robots only stream state to a client that sends;
  DDS robots get nothing), from construction until :meth:`UnitreeBridge.ramp` is called: the
  constructor only connects, so a controller stopped before it starts never moves the robot;
- ramp: from the joint angles measured when :meth:`UnitreeBridge.ramp` is called to the home
  pose over ``ramp_time``;
- hold: the home pose, until the controller's first command;
- run: the controller's latest command (joint targets with PD gains, or torques), the joints
  the planner does not see held at home; a command computed from a state older than
  ``safety.max_command_age`` when it would first be sent is refused, counted, and damps;
- damping (latched; every trip ends here): Kp 0, Kd ``damping_kd``, tau 0 on every motor.

The link thread must get the interpreter within a fraction of its period, while the planner's
threads compute; every socket call releases and re-takes the GIL, and each re-take waits up to
the interpreter's switch interval (5 ms by default), which held the link to ~25 Hz under a busy
planner. A hardware plant therefore sets the switch interval to ``SWITCH_INTERVAL``.

What the link refuses is dropped and counted by reason (:attr:`UnitreeBridge.refused`, in
:meth:`UnitreeBridge.stats` and a warning at most once a second): a bad checksum
(``bad_checksum``), any other malformed packet (``bad_packets``), a packet from another sender
than the robot (``refused_packets``: another DDS writer of rt/lowstate; the UDP link's
connected socket leaves other addresses to the kernel, which drops them unread),
and a state whose tick is not newer than the last accepted one (``duplicate``,
``out_of_order``; :func:`hardware.refusals.tick_order`). Only accepted states reset the
stale-state watchdog, so a robot whose tick stands still trips it like a silent one, and its
reason says what was refused meanwhile.

Receiving and watchdog share the thread on purpose: if the process is starved, states queue
in the socket and are drained before their age is judged, so starvation alone does not trip
the stale-state watchdog, while a robot that stopped talking does.

Subclasses provide the wire: :mod:`hardware.unitree.udp_plant` (A1, Go1),
:mod:`hardware.unitree.dds_plant` (Go2, H1). A bridge runs its link thread in the process that
builds it; the plants the configs name (:class:`hardware.unitree.plant_base.UnitreePlant`)
build it there, or by default in a child process out of reach of the planner's hold on the
interpreter (``link_process``).
"""

from __future__ import annotations

import atexit
import logging
import sys
import threading
import time as _time
from collections import deque

import numpy as np

import robots
from hardware.estimation.base_state import ImuSample
from hardware.estimation.sources import make_source
from hardware.lowlevel import LowState, MotorCommand, remote_bits, remote_mask
from hardware.refusals import Refusals, tick_order
from hardware.safety.layer import (
    ClampLog,
    CommandLimits,
    SafetyConfig,
    clamp_command,
    install_estop,
    smoothstep,
    stale_command_reason,
    tilt_trip,
)
from hardware.unitree.legacy_packets import PacketError
from hardware.unitree.motor_map import MotorMap
from hardware.unitree.udp_link import LinkError
from mpc.app.plants.plant_base import Plant, PlantState
from mpc.app.record.link_log import LinkLog
from robots.info import RobotInfo

log = logging.getLogger(__name__)

CONNECTING, RAMP, HOLD, RUN, DAMPING = "connecting", "ramp", "hold", "run", "damping"
#: Damping reason of an ordinary end of run (not a trip).
RUN_ENDED = "run ended"
SWITCH_INTERVAL = 2e-4


class UnitreeBridge(Plant):
    """Base of the Unitree hardware plants; see the module docstring."""

    realtime_only = True
    #: Shared memory with the controller when this bridge runs in a process of its own (see
    #: :mod:`hardware.unitree.link_process`); None when the controller is in this process.
    shared = None
    #: The largest |tau|, Kp and Kd the wire's fields carry (None: float fields, no bound).
    WIRE_LIMITS: tuple[float, float, float] | None = None
    #: Rows kept per log column while ``log_file`` is set: the newest ten minutes at 500 Hz
    #: (older rows are dropped), so a long run cannot exhaust the link process's memory.
    log_rows = LinkLog.MAX_ROWS

    def __init__(self, robot: RobotInfo, *, servo_family: str, rate: float,
                 connect_timeout: float, kp: list[float] | None, kd: list[float] | None,
                 base_state: dict | None, log_file: str, safety: SafetyConfig | None,
                 send_while_connecting: bool):
        if not 50.0 <= rate <= 2000.0:
            raise ValueError(f"plant.rate must be within 50..2000 Hz, got {rate}")
        self.robot = robot
        self.safety = safety or SafetyConfig()
        self.model = robots.load_planning_model(robot.name)
        self.map = MotorMap.build(robot, self.model, servo_family)
        self.kp, self.kd = self.map.command_gains(kp, kd)
        self.limits = CommandLimits(self.map.used, self.map.servo_mode, self.map.lower,
                                    self.map.upper, self.map.torque_limit, self.safety,
                                    self.WIRE_LIMITS)
        self.source = make_source(base_state or {"type": "kalman"}, self.model, robot)
        self.period = 1.0 / rate
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL))
        self.send_while_connecting = send_while_connecting
        self.clamps = ClampLog()
        self.estop_mask = remote_mask(self.safety.estop_buttons)
        self.lock = threading.Lock()
        self.send_lock = threading.Lock()
        self.packet: bytes | None = None
        self.packet_cmd: MotorCommand | None = None
        self.packet_key: object = None
        self.local = threading.local()
        self.phase = CONNECTING
        self._damping_reason: str | None = None
        #: A damping request not yet applied (see :meth:`request_damping`).
        self.damp_request: str | None = None
        self.damping_time = np.inf
        self.closed = False
        self.error: str | None = None
        self.t0 = _time.monotonic()
        self.latest: tuple[float, LowState, object] | None = None
        self.last_state_time = -np.inf
        self.ctrl: np.ndarray | None = None
        self.ctrl_time = -np.inf
        self.ctrl_state_time = np.nan
        self.ctrl_tick = -1
        self.ctrl_sent = True
        self.ramp_start = 0.0
        self.ramp_from = self.map.home.copy()
        self.counts = {"states": 0, "bad_checksum": 0, "bad_packets": 0, "commands": 0,
                       "controller_commands": 0, "nonfinite_commands": 0,
                       "refused_packets": 0, "duplicate": 0, "out_of_order": 0,
                       "stale_commands": 0}  # refused: computed from too old a state
        #: Refused packets, counted in ``counts`` under their reasons (module docstring).
        self.refused = Refusals(f"robot link {self.describe_peer()}", log, counts=self.counts)
        #: Tick of the newest accepted state, and the refusal total then.
        self.last_tick: int | None = None
        self._refused_at_state = 0
        self.latencies: deque[float] = deque(maxlen=100_000)
        self.log_file = log_file
        #: What the link received and sent (:mod:`mpc.app.record.link_log`), with log_file.
        self.log = LinkLog(self.log_rows, self.map.used)
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._link_loop, name="unitree-link", daemon=True)
        self.thread.start()
        atexit.register(self.close)
        self._await_first_state(connect_timeout)

    # --- the wire: provided by subclasses -----------------------------------------------------
    def _encode(self, cmd: MotorCommand) -> bytes | None:
        """The packet that carries ``cmd`` (None: nothing is to be sent, a dry run)."""
        raise NotImplementedError

    def _write(self, packet: bytes) -> None:
        raise NotImplementedError

    def _packet_crc(self, packet: bytes) -> int:
        """The checksum word of ``packet`` (logged to match commands at the robot)."""
        return int.from_bytes(packet[-4:], "little")

    def _receive(self, timeout: float) -> list[bytes]:
        raise NotImplementedError

    def _decode(self, raw: bytes) -> LowState:
        raise NotImplementedError

    def _close_link(self) -> None:
        raise NotImplementedError

    def describe_peer(self) -> str:
        raise NotImplementedError

    # --- Plant ----------------------------------------------------------------------------
    @property
    def timestep(self) -> float:
        return self.period

    @property
    def damping_reason(self) -> str | None:
        """Why the robot is in damping, or will be at the link thread's next tick (a pending
        :meth:`request_damping`); None while it is not."""
        reason = self._damping_reason
        return reason if reason is not None else self.damp_request

    def read_state(self) -> PlantState:
        with self.lock:
            latest = self.latest
        self.local.state = (latest[0], latest[1].tick)
        return self._plant_state(latest)

    def wireless_remote(self) -> bytes:
        """The 40-byte wireless-remote block of the latest state."""
        with self.lock:
            latest = self.latest
        return latest[1].wireless_remote if latest is not None else bytes(40)

    def _plant_state(self, latest) -> PlantState:
        """The planner's state (planning-model layout) of a (receipt time, LowState, base
        estimate) triple."""
        t, st, est = latest
        qpos = np.zeros(self.model.nq)
        qvel = np.zeros(self.model.nv)
        qpos[0:3], qpos[3:7] = est.pos, est.quat
        qvel[0:3], qvel[3:6] = est.linvel, est.angvel
        self.map.to_planning(qpos, qvel, st.q, st.dq)
        return PlantState(t - self.t0, qpos, qvel, np.zeros(self.model.na))

    def send(self, ctrl: np.ndarray) -> None:
        state_time, tick = getattr(self.local, "state", (np.nan, -1))
        self.accept(ctrl, state_time, tick)

    def set_planned_stance(self, stance: np.ndarray | None) -> None:
        """The gait schedule's planned stance, the estimator's contact prior (read by the link
        thread at its next state: one reference swapped, no lock needed)."""
        self.source.set_planned_stance(stance)

    def accept(self, ctrl: np.ndarray, state_time: float, tick: int) -> None:
        """Take ``ctrl``, computed from the state received at ``state_time`` (monotonic) with
        ``tick``; a non-finite or malformed one puts the robot in damping instead."""
        ctrl = np.asarray(ctrl, dtype=float)
        if ctrl.shape != (self.model.nu,) or not np.all(np.isfinite(ctrl)):
            self.counts["nonfinite_commands"] += 1
            self.damp("non-finite or malformed command from the controller")
            return
        now = _time.monotonic()
        with self.lock:
            if self.phase == DAMPING:
                return
            self.ctrl = ctrl.copy()
            self.ctrl_time = now
            self.ctrl_state_time = state_time
            self.ctrl_tick = tick
            self.ctrl_sent = False
            self.counts["controller_commands"] += 1
            if self.phase in (RAMP, HOLD):
                if self.phase == RAMP:
                    log.warning("controller started before the ramp finished; ramp cut short")
                self.phase = RUN

    def damp(self, reason: str) -> None:
        with self.lock:
            first = self.phase != DAMPING
            if first:
                self.phase = DAMPING
                self._damping_reason = reason
                self.damping_time = _time.monotonic()
        if first:
            log.log(logging.INFO if reason == RUN_ENDED else logging.ERROR, "damping: %s", reason)
            if not self.closed:
                self._send(DAMPING, self._damping_command, _time.monotonic())

    def request_damping(self, reason: str) -> None:
        """Damping at the link thread's next tick (within one period), or at :meth:`close`
        or :meth:`ramp` if they come first. Safe in a signal handler, which may run while its
        thread holds the bridge's (non-reentrant) lock: it takes no lock."""
        if self.damp_request is None:
            self.damp_request = reason

    def _apply_request(self) -> None:
        """Damp now if damping was requested (the first request's reason is kept)."""
        reason = self.damp_request
        if reason is not None:
            self.damp(reason)

    def prepare(self) -> None:
        """E-stop on SIGINT/SIGTERM, then the startup ramp (skipped in a dry run). The
        e-stop only requests damping: the handler runs in the main thread, which may hold the
        bridge's lock at that moment."""
        install_estop(self.request_damping)
        self.ramp()

    def ramp(self) -> None:
        """Start the startup ramp from the joint angles measured now and wait for it to reach
        the home pose. A dry run holds at once (nothing is sent to the robot)."""
        self._apply_request()
        with self.lock:
            if self.phase == CONNECTING:
                if self.safety.dry_run:
                    self.phase = HOLD
                else:
                    q = self.latest[1].q
                    self.ramp_from = np.where(np.isin(np.arange(len(q)), self.map.used), q, 0.0)
                    self.ramp_start = _time.monotonic()
                    self.phase = RAMP
        if self.safety.dry_run:
            log.warning("dry run: nothing is sent to the robot; startup ramp skipped")
            return
        deadline = _time.monotonic() + self.safety.ramp_time + 5.0
        while _time.monotonic() < deadline:
            with self.lock:
                phase = self.phase
            if phase in (HOLD, RUN):
                return
            if phase == DAMPING:
                raise LinkError(f"startup ramp stopped: {self.damping_reason}")
            _time.sleep(0.01)
        raise LinkError("startup ramp did not finish")

    def close(self) -> None:
        if self.closed:
            return
        self._apply_request()  # a pending e-stop, not the run's end, is why it damps
        self.damp(RUN_ENDED)
        _time.sleep(0.1)  # let the robot see a steady stream of damping commands
        self.closed = True
        self._stop.set()
        self.thread.join(timeout=2.0)
        self._close_link()
        self.source.close()
        log.info("bridge closed: %s", self.stats())
        if self.log_file:
            self._write_log()

    # --- link thread ------------------------------------------------------------------------
    def _await_first_state(self, timeout: float) -> None:
        deadline = _time.monotonic() + timeout
        while _time.monotonic() < deadline:
            if self.error is not None:
                break
            with self.lock:
                if self.latest is not None:
                    return
            _time.sleep(0.005)
        reason = self.error or (f"no state from the robot at {self.describe_peer()} within "
                                f"{timeout:g} s")
        self.closed = True
        self._stop.set()
        self.thread.join(timeout=2.0)
        self._close_link()
        self.source.close()
        raise LinkError(reason)

    def _link_loop(self) -> None:
        next_tick = _time.monotonic()
        last_error = 0.0
        while not self._stop.is_set():
            try:
                for raw in self._receive(max(0.0, next_tick - _time.monotonic())):
                    self._on_state(raw, _time.monotonic())
                now = _time.monotonic()
                if now >= next_tick:
                    self._tick(now)
                    next_tick += self.period
                    if now - next_tick > self.period:
                        next_tick = now + self.period
            except LinkError as e:
                if self.latest is None:  # cannot even connect: report and stop
                    self.error = str(e)
                    return
                if _time.monotonic() - last_error > 1.0:
                    last_error = _time.monotonic()
                    log.error("robot link: %s", e)
                self.damp(f"robot link failed: {e}")
            except Exception as e:  # never let the link thread die silently
                if _time.monotonic() - last_error > 1.0:
                    last_error = _time.monotonic()
                    log.exception("bridge link thread")
                self.damp(f"bridge error: {type(e).__name__}: {e}")

    def _on_state(self, raw: bytes, now: float) -> None:
        try:
            st = self._decode(raw)
        except PacketError as e:
            self.refused.refuse("bad_checksum" if "checksum" in str(e) else "bad_packets",
                                str(e))
            return
        reason = tick_order(st.tick, self.last_tick)
        if reason is not None:
            self.refused.refuse(reason, f"tick {st.tick} after {self.last_tick}")
            return
        self.last_tick = st.tick
        self._refused_at_state = self.refused.total()
        self.counts["states"] += 1
        m = self.map
        if self.log_file:
            self._log_state(now, st)
        if not (np.isfinite(np.concatenate((st.q[m.used], st.dq[m.used], st.quat,
                                            st.gyro))).all() and st.quat @ st.quat > 0.25):
            self.damp("non-finite or invalid robot state")
            return
        self.source.observe_feet(st.foot_force)
        self.source.update(ImuSample(now - self.t0, st.quat, st.gyro, st.accel),
                           st.q[m.actuator_slots], st.dq[m.actuator_slots])
        est = self.source.estimate()
        if est is None:
            return
        if self.log_file:  # the estimate, to compare with a fake robot's logged truth
            self.log["est_tick"].append(st.tick)
            self.log["est_qpos"].append(np.r_[est.pos, est.quat])
            self.log["est_qvel"].append(np.r_[est.linvel, est.angvel])
        with self.lock:
            self.latest = (now, st, est)
            self.last_state_time = now
        if self.shared is not None:
            self.shared.publish_state(self._plant_state((now, st, est)), now, st.tick,
                                      st.wireless_remote)
        reason = tilt_trip(st.quat, self.safety.max_tilt)
        speed = np.abs(st.dq[m.used])
        if reason is None and speed.max() > self.safety.max_joint_speed:
            slot = m.used[int(np.argmax(speed))]
            reason = (f"joint speed {speed.max():.1f} rad/s at motor {slot} beyond "
                      f"{self.safety.max_joint_speed:g} rad/s")
        buttons = self.safety.estop_buttons
        if reason is None and self.estop_mask and (
                remote_bits(st.wireless_remote) & self.estop_mask == self.estop_mask):
            reason = f"e-stop: remote buttons {'+'.join(buttons)}"
        if reason is not None:
            self.damp(reason)

    def _tick(self, now: float) -> None:
        self._apply_request()
        if self.shared is not None:
            self.shared.poll(self)
        with self.lock:
            phase = self.phase
            state_age = now - self.last_state_time
            ctrl_age = now - self.ctrl_time
        if phase in (RAMP, HOLD, RUN) and state_age > self.safety.state_timeout:
            self.damp(f"stale state: none for {state_age * 1e3:.0f} ms (limit "
                      f"{self.safety.state_timeout * 1e3:.0f} ms)"
                      + self.refused.meanwhile(self._refused_at_state))
        elif phase == RUN and ctrl_age > self.safety.command_timeout:
            self.damp(f"controller silent for {ctrl_age * 1e3:.0f} ms (limit "
                      f"{self.safety.command_timeout * 1e3:.0f} ms)")
        with self.lock:
            phase = self.phase
            if phase == RAMP and now - self.ramp_start >= self.safety.ramp_time:
                self.phase = phase = HOLD
                log.info("startup ramp done: holding the home pose")
        if phase == CONNECTING:
            if self.send_while_connecting:
                self._send(DAMPING, self._damping_command, now)
        elif phase == RAMP:
            s = smoothstep((now - self.ramp_start) / max(self.safety.ramp_time, 1e-9))
            q = self.ramp_from + s * (self.map.home - self.ramp_from)
            self._send(None, lambda: self.map.hold_command(q), now)
        elif phase == RUN:
            with self.lock:  # the age at this instant, not at the tick's clock reading: a
                # command accepted while this thread waited between the two (a loaded machine)
                # would otherwise read younger than its state, or negative, and go out
                ctrl, version = self.ctrl, self.counts["controller_commands"]
                new, age = not self.ctrl_sent, _time.monotonic() - self.ctrl_state_time
            if new and not age <= self.safety.max_command_age:  # NaN (unknown state) too
                self.counts["stale_commands"] += 1
                self.damp(stale_command_reason(age, self.safety.max_command_age))
            else:
                self._send((RUN, version), lambda: self.map.run_command(ctrl, self.kp, self.kd),
                           now)
        elif phase == HOLD:
            self._send(HOLD, lambda: self.map.hold_command(self.map.home), now)
        else:
            self._send(DAMPING, self._damping_command, now)

    # --- commands ---------------------------------------------------------------------------
    def _damping_command(self) -> MotorCommand:
        return self.map.damping_command(self.safety.damping_kd)

    def _send(self, key, build, now: float) -> None:
        """Send the command ``build()`` makes, clamped to the limits. The packet is reused
        while ``key`` (None: never) stays the same: the controller's commands change at the
        feedback rate (300 Hz), the robot gets one every tick (500 Hz)."""
        broken = False
        with self.send_lock:
            if self.closed:
                return
            if key is None or key != self.packet_key:
                cmd = build()
                broken = not cmd.finite()
                self.packet_cmd = clamp_command(cmd, self.limits, self.clamps)
                self.packet = self._encode(self.packet_cmd)
                self.packet_key = key
            packet, sent = self.packet, self.packet_cmd
            if packet is not None:
                self._write(packet)
        if broken:  # the clamp damped the bad slots of this packet; now the whole robot
            self.damp(f"non-finite motor command built in phase {self.phase}")
        if packet is None:
            return
        self.counts["commands"] += 1
        with self.lock:
            # fresh only if this packet carries the command accepted last: one accepted while
            # this thread built or wrote an older (or the hold) packet stays unsent, so that
            # the next tick judges its age before it goes out
            fresh = (self.phase == RUN and not self.ctrl_sent
                     and key == (RUN, self.counts["controller_commands"]))
            if fresh:
                self.ctrl_sent = True
                self.latencies.append(now - self.ctrl_state_time)
            tick = self.ctrl_tick if self.phase == RUN else -1
            phase = self.phase
        if self.log_file:
            self._log_command(now, packet, sent, tick if fresh else -1, phase)

    # --- measurements -----------------------------------------------------------------------
    def stats(self) -> dict:
        """Counts, clamps, the damping reason, and the latency from a state's arrival to the
        first command computed from it leaving (ms)."""
        out = dict(self.counts)
        out["clamps"] = dict(self.clamps.counts)
        out["damping_reason"] = self.damping_reason
        lat = np.array(self.latencies) * 1e3
        if lat.size:
            out["latency_ms_median"] = round(float(np.median(lat)), 3)
            out["latency_ms_p95"] = round(float(np.percentile(lat, 95)), 3)
            out["latency_ms_max"] = round(float(lat.max()), 3)
        return out

    def _log_state(self, now: float, st: LowState) -> None:
        self.log.state(now, st)

    def _log_command(self, now: float, packet: bytes, cmd: MotorCommand, tick: int,
                     phase: str) -> None:
        """The command ``cmd`` that left in ``packet`` (as clamped), with its time, checksum,
        the tick of the state it was computed from and the phase."""
        self.log.command(now, cmd, tick, phase, self._packet_crc(packet))

    def _write_log(self) -> None:
        self.log.write(self.log_file)
