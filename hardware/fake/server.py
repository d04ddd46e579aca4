"""A fake robot on a real wire: legacy UDP (A1, Go1) or SDK2 DDS (Go2, H1).

Every simulation step (in wall-clock time) it takes the commands that arrived (a bad checksum
or a malformed packet is dropped and counted), steps the simulation with the motors' PD law,
and publishes the state: over UDP to whoever sent the last valid command (as the legacy robots
do), over DDS on rt/lowstate. A command takes over at the instant it was received, on the
simulation's time axis: the state published at wall time w carries simulation time t, so a
command received at w + a (0 <= a <= h) arrives at t + a, within the next step
(:meth:`hardware.fake.robot.FakeRobotSim.step`), as a real robot's motor drivers take a command
as it comes, not at the 500 Hz of its state. With ``truth_port`` it also streams
its simulated base state on loopback (test only, see :mod:`hardware.fake.sim_truth`).

Everything received and sent is logged; :meth:`FakeRobot.summary` reports counts and rates.
"""

from __future__ import annotations

import logging
import socket
import threading
import time as _time
from pathlib import Path

import numpy as np

from hardware.fake.robot import FakeRobotSim
from hardware.fake.sensors import SensorSpec
from hardware.fake.sim_truth import pack_truth
from hardware.lowlevel import LowState, remote_block
from hardware.rotations import euler_zyx, quat_exp, quat_mul
from hardware.unitree import legacy_packets, sdk2_messages
from hardware.unitree.legacy_packets import PacketError
from hardware.unitree.remote import decode_remote, encode_remote
from mpc.app.plants.terrain import TerrainSpec
from robots.info import RobotInfo
from robots.overlay import Overlay

log = logging.getLogger(__name__)


class FakeRobot:
    def __init__(self, robot: RobotInfo, transport: str, *, host: str = "127.0.0.1",
                 port: int = 8007, domain_id: int = 0, interface: str = "lo",
                 truth_port: int | None = None, start: str = "lying",
                 command_timeout: float = 0.1, gantry: bool = False,
                 gantry_release: float | None = None,
                 controller: tuple[str, int] | None = None,
                 sensors: SensorSpec | None = None, seed: int = 0,
                 terrain: TerrainSpec = None, overlay: Overlay | None = None,
                 gantry_lift: float = 0.0):
        self.robot = robot
        #: UDP: the only (address, port) whose commands are obeyed (None: anyone's, and the
        #: state goes to whoever sent the last valid command, as a legacy robot does).
        self.controller = controller
        if controller is not None and transport != "udp":
            raise ValueError("a controller address applies to the UDP transport only")
        self.transport = transport
        self.sim = FakeRobotSim(robot, start=start, command_timeout=command_timeout,
                                gantry=gantry, gantry_release=gantry_release,
                                sensors=sensors, seed=seed, terrain=terrain, overlay=overlay,
                                gantry_lift=gantry_lift)
        if transport == "udp":
            if robot.name not in legacy_packets.FORMATS:
                raise ValueError(f"{robot.name} does not speak the legacy UDP protocol "
                                 f"(transport dds)")
            from hardware.unitree.udp_link import UdpLink

            self.fmt = legacy_packets.FORMATS[robot.name]
            # The peer is learnt from the first valid command; the link's own peer is unused.
            self.link = UdpLink("127.0.0.1", 9, port, host)
            self.client: tuple[str, int] | None = None
        elif transport == "dds":
            if robot.name not in ("go2", "h1"):
                raise ValueError(f"{robot.name} does not speak SDK2 DDS (transport udp)")
            from hardware.unitree import sdk2_types
            from hardware.unitree.dds_link import DdsLink

            self.link = DdsLink(domain_id, interface, "rt/lowcmd", sdk2_types.LowCmd_,
                                "rt/lowstate", sdk2_types.LowState_)
        else:
            raise ValueError(f"transport must be udp or dds, got {transport!r}")
        self.truth = None
        if truth_port is not None:
            self.truth = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self.truth_addr = ("127.0.0.1", truth_port)
        self._last_raw = b""
        self.counts = {"states_sent": 0, "commands": 0, "bad_checksum": 0, "bad_packets": 0,
                       "refused": 0}
        self.log: dict[str, list] = {k: [] for k in (
            "cmd_t", "cmd_crc", "cmd_mode", "cmd_q", "cmd_dq", "cmd_tau", "cmd_kp", "cmd_kd",
            "state_t", "state_tick", "base_qpos", "base_qvel")}
        # Fault injection (set from any thread)
        self.publishing = True
        self.corrupt_every = 0
        #: What the first used motor's encoder reports instead of the truth (None: the truth).
        self.fake_joint_speed: float | None = None
        self.fake_joint_angle: float | None = None
        #: World-frame rotation (w, x, y, z) applied to the published IMU orientation.
        self.imu_turn: np.ndarray | None = None
        #: Whether the tick is to stand still, the tick every state then carries (None: not yet
        #: fixed, or its own), and an offset added to the tick (a counter that restarted).
        self.freeze_requested = False
        self.frozen_tick: int | None = None
        self.tick_offset = 0
        #: When the first state carrying an injected value was sent (monotonic; inf: none).
        self.fault_sent = float("inf")
        self._stop = threading.Event()
        self.thread: threading.Thread | None = None
        self.wall_start = 0.0
        #: Wall time (monotonic) of the latest simulation step: the simulation's time now.
        self.step_wall = -float("inf")
        self.max_tilt = 0.0
        self.stood = False
        self.last_state = None
        self.fell: str | None = None

    # --- faults ------------------------------------------------------------------------------
    def stop_publishing(self) -> float:
        """Stop sending state (the robot went silent); returns the time it happened."""
        self.publishing = False
        return _time.monotonic()

    def press(self, buttons=()) -> None:
        """Hold ``buttons`` on the remote from now on."""
        self.sim.remote = remote_block(buttons)

    def set_sticks(self, lx: float = 0.0, ly: float = 0.0, rx: float = 0.0,
                   ry: float = 0.0) -> None:
        """Hold the remote's sticks at these values from now on (buttons unchanged)."""
        held = decode_remote(self.sim.remote).held()
        self.sim.remote = encode_remote(held, lx=lx, ly=ly, rx=rx, ry=ry)

    def report_joint_speed(self, speed: float) -> float:
        """From now on the first used motor reports ``speed`` rad/s (a runaway joint, or an
        encoder gone wrong); returns the time it happened."""
        self.fake_joint_speed = speed
        return _time.monotonic()

    def report_nan_angle(self) -> float:
        """From now on the first used motor reports a NaN angle (a corrupted state with a
        valid checksum); returns the time it happened."""
        self.fake_joint_angle = float("nan")
        return _time.monotonic()

    def report_tilt(self, roll: float, pitch: float) -> float:
        """From now on the IMU reports the base turned by ``roll`` about the world's x axis
        and then by ``pitch`` about its y axis (rad); returns the time it happened."""
        self.imu_turn = quat_mul(quat_exp(np.array([0.0, pitch, 0.0])),
                                 quat_exp(np.array([roll, 0.0, 0.0])))
        return _time.monotonic()

    def freeze_tick(self) -> float:
        """From now on every state carries the tick of the last one sent (the states go on,
        their counter stands still); returns the time it happened. The publishing thread fixes
        the tick: read here, it could be one behind a state that thread is about to send, and
        every later state would then go back in time instead of standing still."""
        self.freeze_requested = True
        return _time.monotonic()

    def shift_tick(self, offset: int) -> float:
        """From now on add ``offset`` to the tick (a negative one: a counter that restarted
        without a pause in the stream); returns the time it happened."""
        self.tick_offset = offset
        return _time.monotonic()

    def _faulty(self, state: LowState, now: float) -> LowState:
        """``state`` as the injected faults make the robot report it."""
        if self.freeze_requested:
            if self.frozen_tick is None:
                self.frozen_tick = (self.last_state.tick if self.last_state is not None
                                    else state.tick)
            state.tick = self.frozen_tick
        elif self.tick_offset:
            state.tick = (state.tick + self.tick_offset) % 2**32
        faults = (self.fake_joint_speed, self.fake_joint_angle, self.imu_turn)
        if all(f is None for f in faults):
            return state
        self.fault_sent = min(self.fault_sent, now)
        slot = int(np.min(self.sim.slots))
        if self.fake_joint_speed is not None:
            state.dq[slot] = self.fake_joint_speed
        if self.fake_joint_angle is not None:
            state.q[slot] = self.fake_joint_angle
        if self.imu_turn is not None:
            state.quat = quat_mul(self.imu_turn, state.quat)
            state.rpy = np.array(euler_zyx(state.quat))
        return state

    # --- running -----------------------------------------------------------------------------
    def start(self) -> FakeRobot:
        self.thread = threading.Thread(target=self.run, name="fake-robot", daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self.thread is not None:
            self.thread.join(timeout=5.0)

    def run(self, duration: float = float("inf")) -> None:
        dt = self.sim.timestep
        self.wall_start = self.step_wall = _time.monotonic()
        next_step = self.wall_start
        end = self.wall_start + duration
        try:
            while not self._stop.is_set() and _time.monotonic() < end:
                for raw, sender in self._receive(max(0.0, next_step - _time.monotonic())):
                    self._on_command(raw, sender, _time.monotonic())
                now = _time.monotonic()
                if now < next_step:
                    continue
                self.step(now)
                next_step += dt
                if now - next_step > 0.1:  # fell far behind: do not burst
                    next_step = now
        finally:
            self.link.close()
            if self.truth is not None:
                self.truth.close()

    def step(self, now: float) -> None:
        """One simulation step at wall time ``now`` (monotonic), the state published."""
        self.sim.step(now)
        self.step_wall = now
        self._publish(now)

    def arrival(self, now: float) -> float:
        """The simulation time of wall time ``now``: the simulation's time plus the wall time
        since its latest step, within one step (a command received later than that, the loop
        running late, takes over at the next step's start)."""
        return float(self.sim.data.time) + min(max(now - self.step_wall, 0.0), self.sim.timestep)

    def _receive(self, timeout: float) -> list[tuple[bytes, tuple[str, int] | None]]:
        """Commands that arrived, with their senders (UDP; None over DDS)."""
        if self.transport == "udp":
            return self.link.receive(timeout)
        return [(raw, None) for raw in self.link.receive(timeout)]

    def _on_command(self, raw: bytes, sender: tuple[str, int] | None, now: float) -> None:
        if self.controller is not None and sender != self.controller:
            self.counts["refused"] += 1
            return
        if raw == self._last_raw:  # the bridge repeats a command until the next one: decoded
            cmd = self.sim.cmd
        else:
            try:
                if self.transport == "udp":
                    cmd = legacy_packets.decode_low_cmd(self.fmt, raw)
                else:
                    cmd = sdk2_messages.decode_low_cmd(raw)
            except PacketError as e:
                self.counts["bad_checksum" if "checksum" in str(e) else "bad_packets"] += 1
                return
            self._last_raw = raw
        if self.transport == "udp":
            self.client = sender
        self.counts["commands"] += 1
        self.sim.command(cmd, now, self.arrival(now))
        lg = self.log
        lg["cmd_t"].append(now)
        lg["cmd_crc"].append(int.from_bytes(raw[-4:], "little") if self.transport == "udp"
                             else sdk2_messages.LOW_CMD_LAYOUT.stored_crc(raw))
        for field in ("mode", "q", "dq", "tau", "kp", "kd"):  # a decoded command never changes
            lg[f"cmd_{field}"].append(getattr(cmd, field))

    def _publish(self, now: float) -> None:
        d = self.sim.data
        self._watch_fall()
        if not self.publishing or (self.transport == "udp" and self.client is None):
            return  # a legacy robot talks only to whoever commands it
        state = self._faulty(self.sim.state(), now)
        if self.truth is not None:
            self.truth.sendto(pack_truth(state.tick, d.time, d.qpos, d.qvel), self.truth_addr)
        if self.transport == "udp":
            packet = legacy_packets.encode_low_state(self.fmt, state)
        else:
            packet = sdk2_messages.encode_low_state(state)
        self.counts["states_sent"] += 1
        self.last_state = state
        if self.corrupt_every and self.counts["states_sent"] % self.corrupt_every == 0:
            packet = packet[:-8] + bytes([packet[-8] ^ 0xFF]) + packet[-7:]
        if self.transport == "udp":
            self.link.send_to(packet, self.client)
        else:
            self.link.send(packet)
        self.log["state_t"].append(now)
        self.log["state_tick"].append(state.tick)
        self.log["base_qpos"].append(d.qpos[:7].copy())
        self.log["base_qvel"].append(d.qvel[:6].copy())

    def _watch_fall(self) -> None:
        """A fall: after standing up, under active control, the base tilts beyond the robot's
        fall tilt or drops below its fall height. In damping (a trip, or the run's end) a
        quadruped sits down and a humanoid off its gantry topples: what damping does, counted
        as the trip or the end it follows, not as the controller's fall."""
        sim = self.sim
        height, tilt = float(sim.data.qpos[2]), sim.tilt()
        self.max_tilt = max(self.max_tilt, tilt)
        self.stood = self.stood or height > self.robot.fall_height + 0.05
        if self.fell is not None or not self.stood or not self._active(sim):
            return
        if tilt > self.robot.fall_tilt:
            self.fell = f"tilt {np.degrees(tilt):.0f} deg at t={sim.data.time:.2f} s"
        elif height < self.robot.fall_height:
            self.fell = f"base height {height:.3f} m at t={sim.data.time:.2f} s"

    @staticmethod
    def _active(sim: FakeRobotSim) -> bool:
        """Whether the motors are under active control (not damping, not off)."""
        cmd = sim.cmd
        return (cmd is not None and not sim.damping
                and bool(np.any(cmd.kp[sim.slots] > 0) or np.any(cmd.tau[sim.slots] != 0)))

    # --- results -----------------------------------------------------------------------------
    def summary(self) -> dict:
        wall = max(_time.monotonic() - self.wall_start, 1e-9)
        t_cmd = np.array(self.log["cmd_t"])
        t_state = np.array(self.log["state_t"])
        rate = lambda t: round((len(t) - 1) / (t[-1] - t[0]), 1) if len(t) > 1 else 0.0  # noqa: E731
        return {
            "robot": self.robot.name, "transport": self.transport, **self.counts,
            "wrong_mode": self.sim.wrong_mode, "watchdog_damping": self.sim.damping_events,
            "command_rate_hz": rate(t_cmd), "state_rate_hz": rate(t_state),
            "real_time_factor": round(self.sim.data.time / wall, 3),
            "base_xyz": [round(float(v), 4) for v in self.sim.data.qpos[:3]],
            "max_tilt_deg": round(float(np.degrees(self.max_tilt)), 1),
            "stood": bool(self.stood), "fell": self.fell is not None, "fell_reason": self.fell,
        }

    def write_log(self, path: str) -> None:
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        np.savez(out, **{k: np.array(v) for k, v in self.log.items()},
                 crc_ok_count=self.counts["commands"])
