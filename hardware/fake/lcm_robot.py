"""A simulated robot behind LCM: the hardware process of the two-process setup, for tests and the
closed-loop estimator run.

    python -m hardware.fake.lcm_robot --robot a1 [--sync] [--lcm-url URL] [--truth-channel CH]
                                      [--mocap-latency S] [--dropout-every S]
                                      [--session N] [--mocap-stop-at S]
                                      [--terrain NAME|YAML] [--overlay FILE] ...

The robot is the fake Unitree robot's simulation (:class:`hardware.fake.robot.FakeRobotSim`:
MuJoCo, its motors running the PD law tau = kp (q* - q) + kd (dq* - dq) + tau_ff within their
torque limits, the robot's sensors), here with the joints keeping the model's damping, since the
LCM plant commands the planning model's actuator gains. Every physics step the process
publishes ``robot_state_t`` with what a real robot reports (joint encoders, estimated torques,
IMU with optional extra noise; *no* base state) and hands the latest ``joint_command_t`` to the
motors. Before the first command it holds the home pose with the model's own gains (as a robot
that a start-up ramp has stood up); a damping command, or no command for ``command_timeout``,
puts the motors in damping (Kp 0, Kd 3) for good; that silence is measured on the robot's
clock, which in real time is the wall clock's (:meth:`FakeLcmRobot.now`): a process that fell
behind and catches up does not count its own delay as the controller's. A command that does
not decode is counted as bad and dropped. It obeys one controller session (``--session``, or
the first command's): commands of any other are refused and counted. It streams the base pose
as a fake OptiTrack Motive (NatNet, Y-up, with latency, noise, optional dropouts and a stop)
and, with ``--truth-channel``, publishes the true state (base included) on that channel for
evaluation only. ``--terrain``
(:mod:`mpc.app.plants.terrain`, as ``mpc-fake-robot --terrain``) builds ramps, steps, slabs,
rough or soft ground into the simulated world.

By default the simulation follows the wall clock; with ``--sync`` it steps only when a
``sim_step_t`` asks (lockstep), and all its clocks, the mocap stamps included, are simulation
time. A line ``fake-lcm-robot ready ...`` on stdout says the process is serving.
"""

from __future__ import annotations

import argparse
import gc
import select
import signal
import sys
import time
from dataclasses import dataclass

import lcm
import numpy as np

import robots
from common import yamlfile
from hardware.fake.cli import terrain_option
from hardware.fake.natnet_server import FakeNatNetServer, MocapReplay, ReplaySettings
from hardware.fake.robot import FakeRobotSim
from hardware.fake.sensors import SensorSpec
from hardware.lcm import DECODE_ERRORS
from hardware.lcm.lcm_types import joint_command_t, robot_state_t, sim_step_t
from hardware.lcm.plant import DEFAULT_URL, model_gains
from hardware.lowlevel import MotorCommand
from hardware.mocap.frames import MocapFrame
from mpc.app.plants.terrain import TerrainSpec
from robots.info import RobotInfo
from robots.overlay import Overlay

DAMPING_KD = 3.0


@dataclass(frozen=True)
class Snapshot:
    """What one ``robot_state_t`` reports, with the truth for the mocap stream and the truth
    channel: joints in actuator order, the IMU, and the base's true qpos and qvel."""

    time: float
    q: np.ndarray
    dq: np.ndarray
    tau: np.ndarray
    gyro: np.ndarray
    accel: np.ndarray
    qpos: np.ndarray
    qvel: np.ndarray


def simulated_robot(robot: RobotInfo, timestep: float = 0.002, seed: int = 0,
                    sensors: SensorSpec | None = None, terrain: TerrainSpec = None,
                    overlay: Overlay | None = None) -> FakeRobotSim:
    """The robot behind LCM: :class:`FakeRobotSim` standing at its home pose, its joints keeping
    the model's damping (the LCM plant commands the planning model's actuator gains, which act
    on top of it), no watchdog of its own (:class:`FakeLcmRobot` keeps the link's) and its
    sensors ideal unless ``sensors`` says otherwise; it reports each step's start, the IMU all
    of one instant (with the step's end, its velocity error in the mocap closed loop was 0.016
    m/s RMS instead of 0.011, ``scripts/mocap_closed_loop.py --mode lockstep``)."""
    return FakeRobotSim(robot, start="standing", command_timeout=np.inf, damping_kd=DAMPING_KD,
                        sensors=sensors or SensorSpec(enabled=False), seed=seed + 1,
                        terrain=terrain, overlay=overlay, keep_joint_damping=True,
                        timestep=timestep, sense_step_start=True)


def motor_command(sim: FakeRobotSim, q: np.ndarray, dq: np.ndarray, kp: np.ndarray,
                  kd: np.ndarray, tau: np.ndarray) -> MotorCommand:
    """A ``joint_command_t``'s targets (actuator order) as the motors' command: each actuator's
    motor slot in the mode its motor servos in, the slots the robot leaves unused off."""
    cmd = MotorCommand()
    s = sim.slots
    cmd.mode[s] = sim.servo_mode
    cmd.q[s], cmd.dq[s], cmd.kp[s], cmd.kd[s], cmd.tau[s] = q, dq, kp, kd, tau
    return cmd


def hold_command(sim: FakeRobotSim) -> MotorCommand:
    """Before the first command the robot holds its home pose with the gains the LCM plant
    commands (the position actuators' own), as a robot that a start-up ramp has stood up; a
    robot with torque actuators holds with its hardware joint gains."""
    robot, m = sim.robot, sim.model
    servo, kp, kd = model_gains(robots.load_model(robot.name))
    joints = m.actuator_trnid[:, 0]
    key = m.key(robot.home_key)
    home = np.where(servo, key.ctrl, key.qpos[sim.qadr])
    if not servo.any():
        order = [robot.motor_joints.index(m.joint(j).name) for j in joints]
        kp, kd = np.array(robot.hw_kp)[order], np.array(robot.hw_kd)[order]
    return motor_command(sim, home, np.zeros(m.nu), kp, kd, np.zeros(m.nu))


def _key_value(item: str) -> tuple[str, object]:
    key, sep, value = item.partition("=")
    if not sep:
        raise ValueError(f"--sensor {item!r}: expected KEY=VALUE")
    return key.strip(), yamlfile.loads(value)


class FakeLcmRobot:
    """Serves a simulated robot (:func:`simulated_robot`) over LCM and its base pose over
    NatNet. ``gyro_noise`` and ``accel_noise`` (standard deviations) add white noise to the IMU
    on top of the robot's sensors."""

    def __init__(self, sim: FakeRobotSim, lc: lcm.LCM, replay: MocapReplay | None = None,
                 state_channel: str = "ROBOT_STATE", command_channel: str = "JOINT_COMMAND",
                 step_channel: str = "SIM_STEP", truth_channel: str = "",
                 command_timeout: float = 0.05, session: int = 0,
                 mocap_stop_at: float = np.inf, gyro_noise: float = 0.0,
                 accel_noise: float = 0.0, seed: int = 0):
        self.sim = sim
        self.nu = len(sim.slots)
        #: The controller session obeyed (0: the first command's session, then only that one).
        self.session = session
        self.mocap_stop_at = mocap_stop_at
        self.lc = lc
        self.replay = replay
        self.channels = (state_channel, truth_channel)
        self.command_timeout = command_timeout
        self.noise = (gyro_noise, accel_noise)
        self._rng = np.random.default_rng(seed)
        self.command: MotorCommand | None = None
        self.command_time = -np.inf
        #: Latched: a damping command or a silent controller puts the motors in damping for good.
        self.damping = False
        self.commands = self.steps = self.bad_commands = self.refused_commands = 0
        self.seq = 0
        self.pending_steps = 0
        self.last: Snapshot | None = None
        #: (wall clock, simulation time) when :meth:`run_realtime` started (None: lockstep).
        self._pace: tuple[float, float] | None = None
        sim.command(hold_command(sim), sim.data.time)
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
        if msg.num_joints != self.nu or not all(np.all(np.isfinite(v)) for v in values):
            self.bad_commands += 1
            return
        self.commands += 1
        self.command_time = self.now()
        self.damping = self.damping or bool(msg.damping)
        self.command = motor_command(self.sim, *values)
        if not self.damping:
            self.sim.command(self.command, self.command_time)

    def _on_step(self, channel: str, data: bytes) -> None:
        try:
            msg = sim_step_t.decode(data)
        except DECODE_ERRORS:
            return
        if msg.steps == 0:  # a poll: the current state, without stepping
            self.publish(self.last or self.snapshot())
        self.pending_steps += max(msg.steps, 0)

    def now(self) -> float:
        """The robot's clock (s, on the simulation's time axis): in real time the simulation
        time the wall clock has reached, t0 + (wall - wall0), which is ahead of the simulation
        while the process catches up after it was held off the CPU; in lockstep the simulation
        time. A command is stamped with it when it arrives, so the watchdog (no command for
        ``command_timeout`` of simulation time) measures the controller's silence as a real
        robot would, on the wall clock: stamped with the lagging simulation time instead, a
        command the controller sent on time would look older by the lag, and the catch-up
        (up to 10 steps per pass) would trip the watchdog with the controller only ~10 ms late."""
        t = float(self.sim.data.time)
        if self._pace is None:
            return t
        wall0, t0 = self._pace
        return max(t, t0 + time.perf_counter() - wall0)

    def _watch(self) -> None:
        """Damping, latched, once the controller asked for it or fell silent."""
        stale = self.sim.data.time - self.command_time > self.command_timeout
        if self.command is not None and stale and not self.damping:
            self.damping = True
            print(f"fake-lcm-robot: no command for {self.command_timeout * 1e3:.0f} ms at "
                  f"t={self.sim.data.time:.3f} s: damping", file=sys.stderr)
        if self.damping:
            self.sim.damp()

    def snapshot(self) -> Snapshot:
        """The robot's state now, as its sensors last read it."""
        sim, r = self.sim, self.sim.reading
        gyro = r.gyro + self.noise[0] * self._rng.standard_normal(3)
        accel = r.accel + self.noise[1] * self._rng.standard_normal(3)
        t, qpos, qvel = sim.sensed
        return Snapshot(t, r.q, r.dq, sim.tau.copy(), gyro, accel, qpos.copy(), qvel.copy())

    def step(self) -> None:
        self._watch()
        self.sim.step(self.sim.data.time)
        self.steps += 1
        snap = self.last = self.snapshot()
        if self.replay is not None and snap.time < self.mocap_stop_at:
            self.replay.tick(snap.time, snap.qpos[0:3], snap.qpos[3:7])
        self.publish(snap)

    def publish(self, snap: Snapshot) -> None:
        msg = robot_state_t()
        msg.utime, msg.seq = round(snap.time * 1e6), self.seq
        self.seq += 1
        msg.num_joints = self.nu
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
        # The heap built so far (model, modules) frozen for the run: a full collection over it
        # held this process off its pace for 70-150 ms at a load of 5 (the mocap stream and the
        # states then came late to the controller).
        gc.collect()
        gc.freeze()
        start = time.perf_counter()
        t0 = self.sim.data.time
        self._pace = (start, t0)
        while not stop() and self.sim.data.time - t0 < duration:
            self.handle_pending()
            due = (time.perf_counter() - start) / dt - (self.sim.data.time - t0) / dt
            for _ in range(min(int(due), 10)):
                self.step()
            if due < 1:
                self.handle_pending(timeout=dt * (1 - due))
        wall = time.perf_counter() - start
        self._pace = None
        gc.unfreeze()
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
        sim = simulated_robot(robots.info(args.robot), args.timestep, args.seed,
                              sensors=sensors, terrain=terrain_option(args.terrain),
                              overlay=overlay)
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
                         args.session, args.mocap_stop_at, args.gyro_noise, args.accel_noise,
                         args.seed)
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
