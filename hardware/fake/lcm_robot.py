"""A simulated robot behind LCM: the hardware process of the two-process setup, for tests and the
closed-loop estimator run.

    python -m hardware.fake.lcm_robot --robot a1 [--sync] [--lcm-url URL] [--truth-channel CH]
                                      [--mocap-latency S] [--dropout-every S]
                                      [--session N] [--mocap-stop-at S]
                                      [--terrain NAME|YAML] [--overlay FILE] ...

MuJoCo simulates the robot. Every physics step the process publishes ``robot_state_t`` with
what a real robot reports (joint encoders, estimated torques, IMU with optional noise; *no* base
state) and applies the latest ``joint_command_t`` with the motor law
tau = kp (q* - q) + kd (dq* - dq) + tau_ff, clamped to the motor's torque limit. Before the
first command it holds the home pose with the model's own gains (as a robot that a start-up
ramp has stood up); a damping command, or no command for ``command_timeout``, puts the motors
in damping (tau = -3 dq). A command that does not decode is counted as bad and dropped. It
obeys one controller session (``--session``, or the first command's): commands of any other are
refused and counted. It streams the base pose as a fake OptiTrack Motive (NatNet, Y-up, with
latency, noise, optional dropouts and a stop) and, with ``--truth-channel``, publishes the true
state (base included) on that channel for evaluation only. ``--terrain``
(:mod:`mpc.app.plants.terrain`, as ``mpc-fake-robot --terrain``) builds ramps, steps, slabs,
rough or soft ground into the simulated world.

By default the simulation follows the wall clock; with ``--sync`` it steps only when a
``sim_step_t`` asks (lockstep), and all its clocks, the mocap stamps included, are simulation
time. A line ``fake-lcm-robot ready ...`` on stdout says the process is serving.
"""

from __future__ import annotations

import argparse
import select
import signal
import sys
import time
from dataclasses import dataclass

import lcm
import mujoco
import numpy as np
import yaml

import robots
from hardware.fake.actuators import CommandDelay, MotorTruth
from hardware.fake.cli import terrain_option
from hardware.fake.natnet_server import FakeNatNetServer, MocapReplay, ReplaySettings
from hardware.fake.sensors import SensorModel, SensorSpec
from hardware.lcm import DECODE_ERRORS
from hardware.lcm.lcm_types import joint_command_t, robot_state_t, sim_step_t
from hardware.lcm.plant import DEFAULT_URL, model_gains
from hardware.mocap.frames import MocapFrame
from mpc.app.plants import terrain as terrain_mod
from mpc.app.plants.terrain import TerrainSpec
from robots.info import RobotInfo
from robots.limits import joint_limits
from robots.overlay import Overlay

DAMPING_KD = 3.0


@dataclass(frozen=True)
class Snapshot:
    """The simulated robot at the start of a physics step (sensors refer to this state)."""

    time: float
    q: np.ndarray
    dq: np.ndarray
    tau: np.ndarray
    gyro: np.ndarray
    accel: np.ndarray
    qpos: np.ndarray
    qvel: np.ndarray


@dataclass
class MotorCommand:
    q: np.ndarray
    dq: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    tau: np.ndarray


class SimulatedRobot:
    """The robot's MJCF model with its actuators replaced by torque motors running a PD law,
    and a gyro and accelerometer at its ``imu`` site."""

    def __init__(self, robot: RobotInfo, timestep: float = 0.002, gyro_noise: float = 0.0,
                 accel_noise: float = 0.0, seed: int = 0, keyframe: str = "home",
                 sensors: SensorSpec | None = None, terrain: TerrainSpec = None,
                 overlay: Overlay | None = None):
        """``overlay``: how this robot differs from the nominal model
        (:mod:`hardware.fake.actuators`; its joints keep their damping, the LCM plant commands
        the position actuators' own velocity gain)."""
        spec = robots.model_spec(robot.name, overlay)
        spec.option.timestep = timestep
        self.terrain = terrain_mod.build(spec, terrain, list(robot.feet))
        for kind in (mujoco.mjtSensor.mjSENS_GYRO, mujoco.mjtSensor.mjSENS_ACCELEROMETER):
            spec.add_sensor(type=kind, objtype=mujoco.mjtObj.mjOBJ_SITE, objname="imu")
        self.model = m = spec.compile()
        self.data = mujoco.MjData(m)
        joints = m.actuator_trnid[:, 0]
        self.qadr, self.dadr = m.jnt_qposadr[joints], m.jnt_dofadr[joints]
        self.nu = m.nu
        servo, kp, kd = model_gains(robots.load_model(robot.name))  # as the plant commands
        key = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_KEY, keyframe)
        mujoco.mj_resetDataKeyframe(m, self.data, key)
        mujoco.mj_forward(m, self.data)
        self.terrain.place(m, self.data)
        home = np.where(servo, m.key_ctrl[key], self.data.qpos[self.qadr])
        if not servo.any():  # torque robots hold home with their hardware joint gains
            order = [robot.motor_joints.index(m.joint(j).name) for j in joints]
            kp, kd = np.array(robot.hw_kp)[order], np.array(robot.hw_kd)[order]
        self.hold = MotorCommand(home, np.zeros(m.nu), kp, kd, np.zeros(m.nu))
        # the motors' torque limits (documented, narrowed by the model): never infinite, also
        # where the model leaves a motor unlimited (H1)
        names = [m.joint(j).name for j in joints]
        self.motors = MotorTruth.build(overlay, names, kp, kd,
                                       joint_limits(robot, robots.load_model(robot.name),
                                                    names)[2],
                                       damping_in_joints=[True] * m.nu)
        self.tau_max = self.motors.torque_limit
        #: Commands (None: damping) between the controller and the motors (overlay delay).
        self.in_flight: CommandDelay[tuple[MotorCommand | None]] = CommandDelay(
            overlay.delay if overlay is not None else 0.0)
        self._sent: tuple[MotorCommand | None] | None = None
        self._obeyed: MotorCommand | None = self.hold
        # The motors act through qfrc_applied; the model's own actuators are switched off.
        m.actuator_gainprm[:] = 0.0
        m.actuator_biasprm[:] = 0.0
        self.noise = (gyro_noise, accel_noise)
        self._rng = np.random.default_rng(seed)
        # The robot's sensors (hardware.fake.sensors; foot force is not on this wire); gyro_noise
        # and accel_noise add white noise on top.
        self.sensors = SensorModel(sensors or SensorSpec(enabled=False), timestep,
                                   len(robot.feet), seed + 1)

    def snapshot(self) -> Snapshot:
        """The current state with its sensors, without stepping (no torque applied yet)."""
        d = self.data
        mujoco.mj_forward(self.model, d)
        return Snapshot(d.time, d.qpos[self.qadr].copy(), d.qvel[self.dadr].copy(),
                        np.zeros(self.nu), d.sensordata[0:3].copy(), d.sensordata[3:6].copy(),
                        d.qpos.copy(), d.qvel.copy())

    def step(self, command: MotorCommand | None) -> Snapshot:
        """One physics step under ``command`` (None: damping)."""
        d = self.data
        q, dq = d.qpos[self.qadr].copy(), d.qvel[self.dadr].copy()
        if self.in_flight.delay:  # the command the motors obey now: the one sent delay ago
            if self._sent is None or self._sent[0] is not command:
                self._sent = (command,)
                self.in_flight.push(d.time, self._sent)
            due = self.in_flight.due(d.time)
            if due is not None:
                self._obeyed = due[0]
            command = self._obeyed
        if command is None:
            tau = np.clip(-DAMPING_KD * dq, -self.tau_max, self.tau_max)
        else:
            tau = self.motors.torque(command.kp, command.q, command.kd, command.dq,
                                     command.tau, q, dq)
        d.qfrc_applied[self.dadr] = tau
        snapshot_state = (d.time, d.qpos.copy(), d.qvel.copy())
        mujoco.mj_step(self.model, d)  # sensors are evaluated at the pre-step state
        t, qpos, qvel = snapshot_state
        r = self.sensors.measure(t, qpos[3:7], d.sensordata[0:3], d.sensordata[3:6], q, dq,
                                 np.zeros(len(self.sensors.ff_offset)))
        gyro = r.gyro + self.noise[0] * self._rng.standard_normal(3)
        accel = r.accel + self.noise[1] * self._rng.standard_normal(3)
        return Snapshot(t, r.q, r.dq, tau, gyro, accel, qpos, qvel)


def _key_value(item: str) -> tuple[str, object]:
    key, sep, value = item.partition("=")
    if not sep:
        raise ValueError(f"--sensor {item!r}: expected KEY=VALUE")
    return key.strip(), yaml.safe_load(value)


class FakeLcmRobot:
    """Serves a :class:`SimulatedRobot` over LCM and its base pose over NatNet."""

    def __init__(self, sim: SimulatedRobot, lc: lcm.LCM, replay: MocapReplay | None = None,
                 state_channel: str = "ROBOT_STATE", command_channel: str = "JOINT_COMMAND",
                 step_channel: str = "SIM_STEP", truth_channel: str = "",
                 command_timeout: float = 0.05, session: int = 0,
                 mocap_stop_at: float = np.inf):
        self.sim = sim
        #: The controller session obeyed (0: the first command's session, then only that one).
        self.session = session
        self.mocap_stop_at = mocap_stop_at
        self.lc = lc
        self.replay = replay
        self.channels = (state_channel, truth_channel)
        self.command_timeout = command_timeout
        self.command: MotorCommand | None = None
        self.command_time = -np.inf
        self.damping = False
        self.commands = self.steps = self.bad_commands = self.refused_commands = 0
        self.seq = 0
        self.pending_steps = 0
        self.last: Snapshot | None = None
        lc.subscribe(command_channel, self._on_command)
        lc.subscribe(step_channel, self._on_step)

    def _on_command(self, channel: str, data: bytes) -> None:
        try:
            msg = joint_command_t.decode(data)
        except DECODE_ERRORS:
            self.bad_commands += 1
            return
        if self.session == 0 and msg.session != 0:
            self.session = msg.session
        if msg.session != self.session:  # another controller, or none identified
            self.refused_commands += 1
            return
        values = [np.array(v, float) for v in (msg.q, msg.dq, msg.kp, msg.kd, msg.tau)]
        if msg.num_joints != self.sim.nu or not all(np.all(np.isfinite(v)) for v in values):
            self.bad_commands += 1
            return
        self.commands += 1
        self.command_time = self.sim.data.time
        self.damping = self.damping or bool(msg.damping)
        self.command = MotorCommand(*values)

    def _on_step(self, channel: str, data: bytes) -> None:
        try:
            msg = sim_step_t.decode(data)
        except DECODE_ERRORS:
            return
        if msg.steps == 0:  # a poll: the current state, without stepping
            self.publish(self.last or self.sim.snapshot())
        self.pending_steps += max(msg.steps, 0)

    def _active_command(self) -> MotorCommand | None:
        if self.command is None:
            return self.sim.hold
        stale = self.sim.data.time - self.command_time > self.command_timeout
        if stale and not self.damping:
            self.damping = True
            print(f"fake-lcm-robot: no command for {self.command_timeout * 1e3:.0f} ms at "
                  f"t={self.sim.data.time:.3f} s: damping", file=sys.stderr)
        return None if self.damping else self.command

    def step(self) -> None:
        snap = self.sim.step(self._active_command())
        self.steps += 1
        self.last = snap
        if self.replay is not None and snap.time < self.mocap_stop_at:
            self.replay.tick(snap.time, snap.qpos[0:3], snap.qpos[3:7])
        self.publish(snap)

    def publish(self, snap: Snapshot) -> None:
        msg = robot_state_t()
        msg.utime, msg.seq = round(snap.time * 1e6), self.seq
        self.seq += 1
        msg.num_joints = self.sim.nu
        msg.q, msg.dq, msg.tau_est = snap.q.tolist(), snap.dq.tolist(), snap.tau.tolist()
        msg.imu_quat = snap.qpos[3:7].tolist()
        msg.imu_gyro, msg.imu_accel = snap.gyro.tolist(), snap.accel.tolist()
        msg.damping = int(self.damping)
        self.lc.publish(self.channels[0], msg.encode())
        if self.channels[1]:
            msg.base_flags = 3
            msg.base_pos, msg.base_quat = snap.qpos[0:3].tolist(), snap.qpos[3:7].tolist()
            msg.base_linvel, msg.base_angvel = snap.qvel[0:3].tolist(), snap.qvel[3:6].tolist()
            self.lc.publish(self.channels[1], msg.encode())

    def handle_pending(self, timeout: float = 0.0) -> None:
        """Handle every LCM message waiting, waiting up to ``timeout`` for the first."""
        fd = self.lc.fileno()
        while select.select([fd], [], [], timeout)[0]:
            self.lc.handle()
            timeout = 0.0

    def run_realtime(self, duration: float, stop) -> float:
        """Step at the wall clock's pace (catching up at most 10 steps at once); returns the
        achieved real-time factor."""
        dt = self.sim.model.opt.timestep
        start = time.perf_counter()
        t0 = self.sim.data.time
        while not stop() and self.sim.data.time - t0 < duration:
            self.handle_pending()
            due = (time.perf_counter() - start) / dt - (self.sim.data.time - t0) / dt
            for _ in range(min(int(due), 10)):
                self.step()
            if due < 1:
                self.handle_pending(timeout=dt * (1 - due))
        wall = time.perf_counter() - start
        return (self.sim.data.time - t0) / wall if wall > 0 else 0.0

    def run_sync(self, duration: float, stop) -> None:
        t0 = self.sim.data.time
        while not stop() and self.sim.data.time - t0 < duration:
            self.handle_pending(timeout=0.1)
            while self.pending_steps > 0:
                self.pending_steps -= 1
                self.step()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m hardware.fake.lcm_robot",
                                description=__doc__.splitlines()[0])
    p.add_argument("--robot", default="a1", choices=robots.available())
    p.add_argument("--lcm-url", default=DEFAULT_URL)
    p.add_argument("--state-channel", default="ROBOT_STATE")
    p.add_argument("--command-channel", default="JOINT_COMMAND")
    p.add_argument("--step-channel", default="SIM_STEP")
    p.add_argument("--truth-channel", default="", help="publish the true state here too")
    p.add_argument("--sync", action="store_true", help="step only on sim_step_t requests")
    p.add_argument("--duration", type=float, default=3600.0, help="simulated seconds")
    p.add_argument("--timestep", type=float, default=0.002)
    p.add_argument("--command-timeout", type=float, default=0.05)
    p.add_argument("--gyro-noise", type=float, default=0.0, help="rad/s, standard deviation")
    p.add_argument("--accel-noise", type=float, default=0.0, help="m/s^2, standard deviation")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sensors", choices=("realistic", "ideal"), default="realistic",
                   help="realistic (default): IMU noise and bias, encoder quantization, joint "
                        "speed noise, latency (hardware.fake.sensors); ideal: exact values")
    p.add_argument("--sensor", action="append", default=[], metavar="KEY=VALUE",
                   help="override one sensor figure (a field of hardware.fake.sensors.SensorSpec)")
    p.add_argument("--no-mocap", action="store_true", help="do not stream NatNet")
    p.add_argument("--natnet-bind", default="127.0.0.1")
    p.add_argument("--natnet-command-port", type=int, default=1510)
    p.add_argument("--natnet-data-port", type=int, default=1511)
    p.add_argument("--multicast-group", default="239.255.42.99", help="'' for unicast")
    p.add_argument("--rigid-body", type=int, default=1)
    p.add_argument("--mocap-rate", type=float, default=100.0)
    p.add_argument("--mocap-latency", type=float, default=0.01)
    p.add_argument("--mocap-pos-noise", type=float, default=0.0005)
    p.add_argument("--mocap-rot-noise", type=float, default=0.002)
    p.add_argument("--session", type=int, default=0,
                   help="obey only commands of this controller session (0: the first one's)")
    p.add_argument("--mocap-stop-at", type=float, default=np.inf, metavar="S",
                   help="fault: the mocap stream stops at simulated time S")
    p.add_argument("--dropout-every", type=float, default=0.0)
    p.add_argument("--dropout-duration", type=float, default=0.1)
    p.add_argument("--terrain", metavar="NAME|YAML",
                   help="the ground ahead (mpc.app.plants.terrain), as mpc-fake-robot --terrain")
    p.add_argument("--overlay", metavar="FILE",
                   help="a model overlay (robots/overlay.py), as mpc-fake-robot --overlay")
    args = p.parse_args(argv)

    try:
        overlay = robots.load_overlay(args.overlay, args.robot) if args.overlay else None
        sensors = SensorSpec.build({"enabled": args.sensors == "realistic",
                                    **dict(_key_value(item) for item in args.sensor)})
        sim = SimulatedRobot(robots.info(args.robot), args.timestep, args.gyro_noise,
                             args.accel_noise, args.seed, sensors=sensors,
                             terrain=terrain_option(args.terrain), overlay=overlay)
    except ValueError as e:
        print(f"fake-lcm-robot: error: {e}", file=sys.stderr)
        return 2
    try:
        lc = lcm.LCM(args.lcm_url)
    except Exception as e:  # the binding raises a bare RuntimeError
        print(f"fake-lcm-robot: error: LCM URL {args.lcm_url!r}: {e}", file=sys.stderr)
        return 2
    server = replay = None
    if not args.no_mocap:
        server = FakeNatNetServer(args.natnet_bind, args.natnet_command_port,
                                  args.natnet_data_port, args.multicast_group)
        replay = MocapReplay(server, MocapFrame(up_axis="y"), ReplaySettings(
            args.mocap_rate, args.mocap_latency, args.mocap_pos_noise, args.mocap_rot_noise,
            args.dropout_every, args.dropout_duration, rigid_body_id=args.rigid_body,
            seed=args.seed))
    robot = FakeLcmRobot(sim, lc, replay, args.state_channel, args.command_channel,
                         args.step_channel, args.truth_channel, args.command_timeout,
                         args.session, args.mocap_stop_at)
    stopping = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopping.append(True))
    port = server.command_port if server is not None else 0
    print(f"fake-lcm-robot ready: robot {args.robot}, {'sync' if args.sync else 'realtime'}, "
          f"natnet command port {port}", flush=True)
    try:
        if args.sync:
            robot.run_sync(args.duration, lambda: bool(stopping))
            rtf = None
        else:
            rtf = robot.run_realtime(args.duration, lambda: bool(stopping))
    finally:
        if server is not None:
            server.close()
    print(f"fake-lcm-robot: {robot.steps} steps to t={sim.data.time:.3f} s, "
          f"{robot.commands} commands ({robot.bad_commands} bad, {robot.refused_commands} "
          f"refused from other sessions), "
          f"{server.sent if server else 0} mocap frames"
          + (f", real-time factor {rtf:.3f}" if rtf is not None else ""), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
