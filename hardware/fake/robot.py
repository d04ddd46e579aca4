"""A simulated Unitree robot that behaves like the real one at the low level.

The robot's MuJoCo model with its actuators turned into torque motors; each motor applies the PD
law of the latest valid command,

    tau = clip(Kp (q_des - q) + Kd (dq_des - dq) + tau_ff, +-torque limit)

(a position target of POS_STOP or velocity target of VEL_STOP switches that term off; a motor in
mode 0, or in a mode its motor family does not servo in, applies nothing). A motor's own loop
runs much faster than the simulation's 500 Hz (a motor driver's at 10 kHz and more), so a
command takes over at the instant it arrives (plus the overlay's transport delay), not at the
next simulation step: a step during which the law changes applies each law's torque weighted by
the fraction of the step it is in force, the step's mean motor torque (:meth:`FakeRobotSim.step`).
Taken in at the steps instead, a command arriving just before a step would act a whole step
(2 ms) earlier than one arriving just after it, and where a controller's sends fall near the
steps' boundary the delay from controller to motors would alternate between two values 2 ms
apart, which biases system identification (docs/sysid.md). Likewise its velocity term acts on
the speed at each step's instant, half explicitly and half as the integrator's implicit joint
damping (:meth:`hardware.fake.actuators.MotorTruth.step_torque`): the simulated joint then
follows the continuous law, not one whose inertia is off by Kd h / 2. The joint damping of a
joint the model drove through a position servo is removed: on the robot that damping is
the motor's Kd, which now comes from the command (``keep_joint_damping`` keeps it, for a link
whose controller commands the planning model's actuator gains on top of the joints' own damping:
the LCM link, :mod:`hardware.fake.lcm_robot`). When commands stop coming for
``command_timeout``, or on :meth:`FakeRobotSim.damp`, the motors fall back to damping (Kp 0, Kd
``damping_kd``).

``terrain`` (:mod:`mpc.app.plants.terrain`) builds ramps, steps, slabs, rough or soft ground into
the simulated world; ``spec`` simulates another description of the robot than the project's model
(e.g. the MuJoCo Menagerie's, with the robot's foot sites and its home key added).

``overlay`` (:mod:`robots.overlay`) makes this robot differ from the nominal model in known
ways: its model parameters are applied to the simulated model, its motors' effective gains,
torque limits and transport delay to the PD law (:mod:`hardware.fake.actuators`).

``gantry`` hangs the base from a stiff spring at its home pose, as a first run on hardware
should be (an H1 under plain joint PD falls within a second or two otherwise), raised by
``gantry_lift`` metres (a quadruped's feet then swing free, as system identification wants);
``gantry_release`` seconds after the first command the gantry lets go, as the operator lowers a
humanoid onto its feet once the controller holds its pose (None: it never does).

State (IMU from the simulated base, joints per motor slot, foot contact forces in N, the remote)
is what the robot publishes, through the robot's sensors: by default realistic ones
(:mod:`hardware.fake.sensors`: IMU noise and bias drift, AHRS attitude error, encoder quantization,
joint speed noise, foot-force offsets, or for Go2/H1 foot-force readings barely tied to the load,
and 2 ms latency); ``sensors=SensorSpec(enabled=False)`` reports the simulation's exact values.
Faults are injected on the wire (:mod:`hardware.fake.server`): stop publishing, corrupt
checksums, hold the e-stop buttons, a runaway joint, a NaN, a tilted IMU.
"""

from __future__ import annotations

import math

import mujoco
import numpy as np

import robots
from hardware.fake.actuators import CommandDelay, MotorTruth
from hardware.fake.sensors import SensorModel, SensorSpec
from hardware.lowlevel import POS_STOP, SLOTS, VEL_STOP, LowState, MotorCommand
from hardware.rotations import euler_zyx
from hardware.unitree.motor_map import MotorMap
from mpc.app.plants import terrain as terrain_mod
from mpc.app.plants.terrain import TerrainSpec
from robots.info import RobotInfo
from robots.overlay import Overlay

FAMILY = {"a1": "legacy", "go1": "legacy", "go2": "go2", "h1": "h1"}
#: How each robot's foot-force sensors behave (A1/Go1: strain gauges with an offset; Go2/H1:
#: readings users report as unusable for contact).
FOOT_FORCE = {"a1": "gauge", "go1": "gauge", "go2": "unreliable", "h1": "unreliable"}


def default_sensors(robot: str, options: dict | None = None) -> SensorSpec:
    """The robot's realistic sensors, with ``options`` (SensorSpec fields) overriding."""
    return SensorSpec.build(options, foot_force=FOOT_FORCE[robot])


class FakeRobotSim:
    """The simulation; :mod:`hardware.fake.server` puts it on a wire."""

    def __init__(self, robot: RobotInfo, start: str = "lying", command_timeout: float = 0.1,
                 damping_kd: float = 3.0, settle_time: float = 1.5, gantry: bool = False,
                 gantry_release: float | None = None, sensors: SensorSpec | None = None,
                 seed: int = 0, terrain: TerrainSpec = None,
                 spec: mujoco.MjSpec | None = None, overlay: Overlay | None = None,
                 gantry_lift: float = 0.0, keep_joint_damping: bool = False,
                 timestep: float | None = None, sense_step_start: bool = False,
                 joint_damping: float | None = None):
        """``timestep``: the simulation's step (s; None: the model's own).
        ``joint_damping``: the motor joints' own viscous damping (N m s/rad), acting on top of
        the motors' Kd, instead of what the description leaves them (None): nothing where its
        damping was its servos' Kd (the project's models, the Menagerie A1 and Go1), its figure
        where it drives torque motors (the Menagerie Go2's 2 N m s/rad, where Unitree's own
        simulation of the Go2 has 0.1). The real figure is unknown; the option tries both.
        ``sense_step_start``: the sensors read the state at each step's start, stamped with
        that instant (:attr:`sensed`), all of a piece: MuJoCo's step computes the accelerometer
        (and the contact forces) at the step's start, so a reading of the state at its end
        carries an acceleration one step older than its stamp. Off: the state at the step's
        end, with that older acceleration."""
        if gantry_release is not None and not (gantry and gantry_release >= 0.0):
            raise ValueError("gantry_release needs the gantry and a time >= 0 s")
        if gantry_lift and not (gantry and 0.0 <= gantry_lift <= 1.0):
            raise ValueError("gantry_lift needs the gantry and a height within 0..1 m")
        self.robot = robot
        self.gantry_release = gantry_release
        #: Simulation time of the first command (the gantry's release counts from it).
        self.first_command_time: float | None = None
        if spec is None:
            spec = robots.model_spec(robot.name, overlay)
        elif overlay is not None:
            overlay.apply(spec, robot)
        if timestep is not None:
            spec.option.timestep = timestep
        self.terrain = terrain_mod.build(spec, terrain, list(robot.feet))
        base = spec.body(robot.base_body)
        if gantry:  # the base hangs from a stiff spring at its home pose (feet just touching)
            spec.worldbody.add_body(name="fake_gantry", mocap=True, pos=base.pos,
                                    quat=base.quat)
            spec.add_equality(type=mujoco.mjtEq.mjEQ_WELD, name="fake_gantry",
                              name1="fake_gantry",
                              name2=robot.base_body, objtype=mujoco.mjtObj.mjOBJ_BODY)
        base.add_site(name="fake_imu")
        spec.add_sensor(type=mujoco.mjtSensor.mjSENS_ACCELEROMETER,
                        objtype=mujoco.mjtObj.mjOBJ_SITE, objname="fake_imu", name="fake_acc")
        position_joints = []
        for act in spec.actuators:
            if act.biastype == mujoco.mjtBias.mjBIAS_AFFINE:
                position_joints.append(act.target)
            act.set_to_motor()
            act.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE
            act.forcelimited = mujoco.mjtLimited.mjLIMITED_FALSE
        if keep_joint_damping:
            position_joints = []
        for name in position_joints:
            spec.joint(name).damping = np.zeros(3)
        if joint_damping is not None:
            if not 0.0 <= joint_damping <= 20.0:
                raise ValueError(f"joint_damping must be within 0..20 N m s/rad, "
                                 f"got {joint_damping}")
            for act in spec.actuators:
                spec.joint(act.target).damping = np.full(3, joint_damping)
        self.model = spec.compile()
        self.data = mujoco.MjData(self.model)
        m = self.model
        joints = m.actuator_trnid[:, 0]
        self.qadr = m.jnt_qposadr[joints]
        self.vadr = m.jnt_dofadr[joints]
        self.slots = np.array([robot.slot_of(m.joint(j).name) for j in joints])
        self.map = MotorMap.build(robot, robots.load_planning_model(robot.name),
                                  FAMILY[robot.name])
        s = self.slots
        self.motors = MotorTruth.build(
            overlay, [m.joint(j).name for j in joints], self.map.hold_kp[s],
            self.map.hold_kd[s], self.map.torque_limit[s],
            damping_in_joints=[m.joint(j).name not in position_joints for j in joints])
        self.limit = self.motors.torque_limit
        #: The joints' own damping (zero where the motor's Kd stands in for it).
        self.joint_damping = m.dof_damping[self.vadr].copy()
        #: Commands between their arrival and the motors (the overlay's transport delay).
        self.in_flight: CommandDelay[MotorCommand] = CommandDelay(
            overlay.delay if overlay is not None else 0.0)
        #: The last command whose law was worked out, and that law (:meth:`_law_of`).
        self._obeyed: tuple[MotorCommand, tuple] | None = None
        self.servo_mode = self.map.servo_mode[self.slots]
        self.command_timeout = command_timeout
        self.damping_kd = damping_kd
        self.cmd: MotorCommand | None = None
        self.cmd_time = -math.inf
        self.damping = False
        self.damping_events = 0
        self.wrong_mode = 0
        self.tau = np.zeros(m.nu)
        zero = np.zeros(m.nu)
        #: The PD law in force: (kp, q target, kd, dq target, feedforward) per motor.
        self._law = (zero, zero, zero, zero, zero)
        self._no_mode = np.zeros(SLOTS, np.uint8)
        self.remote = bytes(40)
        sites = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, f) for f in robot.feet]
        self.foot_bodies = m.site_bodyid[sites]
        self._foot_of_body = np.full(m.nbody, -1)
        self._foot_of_body[self.foot_bodies] = np.arange(len(sites))
        self._wrench = np.zeros(6)
        self.acc_adr = m.sensor_adr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SENSOR, "fake_acc")]
        key = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_KEY, robot.home_key)
        mujoco.mj_resetDataKeyframe(m, self.data, key)
        self.data.qpos[2] += gantry_lift
        mujoco.mj_forward(m, self.data)
        self.terrain.place(m, self.data)
        if gantry:
            self.data.mocap_pos[0] = self.data.qpos[0:3]
            self.data.mocap_quat[0] = self.data.qpos[3:7]
        if start == "lying":  # motors damping: it folds onto the floor, as a robot laid down
            for _ in range(int(settle_time / m.opt.timestep)):
                self.data.ctrl[:] = -damping_kd * self.data.qvel[self.vadr]
                mujoco.mj_step(m, self.data)
        elif start != "standing":
            raise ValueError(f"start must be lying or standing, got {start!r}")
        self.data.time = 0.0
        mujoco.mj_forward(m, self.data)
        self.sensors = SensorModel(sensors or default_sensors(robot.name), self.timestep,
                                   len(robot.feet), seed)
        self.sense_step_start = sense_step_start
        #: The instant the last reading is of: (simulation time, qpos, qvel).
        self.sensed = (float(self.data.time), self.data.qpos.copy(), self.data.qvel.copy())
        self._sense(*self.sensed)

    @property
    def timestep(self) -> float:
        return float(self.model.opt.timestep)

    def command(self, cmd: MotorCommand, wall_time: float, arrival: float | None = None
                ) -> None:
        """A valid command arrived (checksum already checked) at simulation time ``arrival``,
        within the coming step [t, t + h) (None: t, the step's start, as in lockstep); the
        motors obey it from ``arrival`` plus the transport delay (:meth:`step`).
        ``wall_time`` stamps it for the command watchdog."""
        if self.first_command_time is None:
            self.first_command_time = float(self.data.time)
        self.cmd = cmd
        self.cmd_time = wall_time
        self.damping = False
        self.in_flight.push(float(self.data.time) if arrival is None else arrival, cmd)

    def _law_of(self, cmd: MotorCommand) -> tuple:
        """``cmd``'s PD law: (kp, q target, kd, dq target, feedforward) per motor. Worked out
        once per command, so that a step costs a handful of array operations: a motor in the
        wrong mode, or a term switched off by its sentinel, gets zero gain and zero target."""
        if self._obeyed is not None and cmd is self._obeyed[0]:
            return self._obeyed[1]
        s = self.slots
        mode = cmd.mode[s]
        on = mode == self.servo_mode
        self.wrong_mode += int(np.count_nonzero((mode != 0) & ~on))
        q_des, dq_des = cmd.q[s], cmd.dq[s]
        pos = on & (np.abs(q_des) < POS_STOP / 2)
        vel = on & (np.abs(dq_des) < VEL_STOP / 2)
        law = (np.where(pos, cmd.kp[s], 0.0), np.where(pos, q_des, 0.0),
               np.where(vel, cmd.kd[s], 0.0), np.where(vel, dq_des, 0.0),
               np.where(on, cmd.tau[s], 0.0))
        self._obeyed = (cmd, law)
        return law

    def damp(self) -> None:
        """Put the motors in damping (Kp 0, Kd ``damping_kd``, commands in flight dropped)
        until the next command."""
        if self.damping:
            return
        self.damping = True
        self.damping_events += 1
        self.in_flight.clear()
        self._obeyed = None
        zero = np.zeros(len(self.slots))
        self._law = (zero, zero, np.full(len(self.slots), self.damping_kd), zero, zero)

    def step(self, wall_time: float) -> None:
        """Apply the motors' PD law and advance one timestep h. The laws in force over the step
        [t, t + h): the one at t, then each command that takes over at sᵢ within it; each law's
        torque (on the state at t, :meth:`MotorTruth.step_torque`) weighs by the fraction of
        the step it is in force,

            τ = Σᵢ (sᵢ₊₁ − sᵢ)/h τᵢ,   s₀ = t, the last sᵢ₊₁ = t + h,

        the step's mean motor torque: the momentum the step gives each joint is, to first order
        in h, that of the law switching at sᵢ."""
        d = self.data
        if (self.gantry_release is not None and self.first_command_time is not None
                and d.time >= self.first_command_time + self.gantry_release):
            d.eq_active[self.model.equality("fake_gantry").id] = 0  # on its own feet now
            self.gantry_release = None
        if (self.cmd is not None and not self.damping
                and wall_time - self.cmd_time > self.command_timeout):
            self.damp()
        t, h = float(d.time), self.timestep
        laws = [(t, self._law)]
        for at, cmd in self.in_flight.during(t, t + h):
            if at <= t:  # due by the step's start: in force over the whole step
                laws = [(t, self._law_of(cmd))]
            else:
                laws.append((at, self._law_of(cmd)))
        self._law = laws[-1][1]
        explicit, implicit = self._mean_torque(laws, t, h)
        self.model.dof_damping[self.vadr] = self.joint_damping + implicit
        d.ctrl[:] = explicit
        start = (float(d.time), d.qpos.copy(), d.qvel.copy()) if self.sense_step_start else None
        mujoco.mj_step(self.model, d)
        self.tau = explicit - implicit * d.qvel[self.vadr]  # the step's mean motor torque
        self.sensed = start or (float(d.time), d.qpos, d.qvel)
        self._sense(*self.sensed)

    def _mean_torque(self, laws: list[tuple[float, tuple]], t: float, h: float
                     ) -> tuple[np.ndarray, np.ndarray]:
        """The step's (explicit torque, implicit damping) under ``laws``, (instant it takes
        over, law) from ``t`` on, each weighted by its share of [t, t + h) (:meth:`step`)."""
        q, dq = self.data.qpos[self.qadr], self.data.qvel[self.vadr]
        if len(laws) == 1:
            return self.motors.step_torque(*laws[0][1], q, dq)
        explicit, implicit = np.zeros(len(self.slots)), np.zeros(len(self.slots))
        ends = [at for at, _ in laws[1:]] + [t + h]
        for (at, law), end in zip(laws, ends, strict=True):
            e, i = self.motors.step_torque(*law, q, dq)
            explicit += (end - at) / h * e
            implicit += (end - at) / h * i
        return explicit, implicit

    def _sense(self, time: float, qpos: np.ndarray, qvel: np.ndarray) -> None:
        """Sample the sensors (every step, whether or not a state is published) on the state
        (``time``, ``qpos``, ``qvel``); the accelerometer and foot forces are those MuJoCo
        computed at the last step's start."""
        feet = self.foot_forces()
        self.reading = self.sensors.measure(
            time, qpos[3:7], qvel[3:6], self.data.sensordata[self.acc_adr:self.acc_adr + 3],
            qpos[self.qadr], qvel[self.vadr], feet[:len(self.robot.feet)])

    def state(self) -> LowState:
        """What the robot publishes now."""
        r = self.reading
        q, dq = np.zeros(SLOTS), np.zeros(SLOTS)
        q[self.slots], dq[self.slots] = r.q, r.dq
        tau = np.zeros(SLOTS)
        tau[self.slots] = self.tau
        mode = self.cmd.mode if self.cmd is not None else self._no_mode
        feet = np.zeros(4)
        feet[:len(r.foot_force)] = r.foot_force
        return LowState(tick=round(self.data.time * 1e6), quat=r.quat, gyro=r.gyro,
                        accel=r.accel, rpy=np.array(euler_zyx(r.quat)), q=q, dq=dq,
                        tau_est=tau, mode=mode, foot_force=feet, wireless_remote=self.remote)

    def joints(self) -> tuple[np.ndarray, np.ndarray]:
        """True joint angles and speeds per motor slot (zero in the slots the robot leaves
        unused)."""
        q, dq = np.zeros(SLOTS), np.zeros(SLOTS)
        q[self.slots] = self.data.qpos[self.qadr]
        dq[self.slots] = self.data.qvel[self.vadr]
        return q, dq

    def foot_forces(self) -> np.ndarray:
        """Normal contact force on each foot's body (N), in the four sensor slots of the
        message (a biped fills two)."""
        m, d = self.model, self.data
        out = np.zeros(4)
        if d.ncon == 0:
            return out
        feet = self._foot_of_body[m.geom_bodyid[d.contact.geom]]  # (ncon, 2), -1: not a foot
        contact, side = np.nonzero(feet >= 0)
        wrench = self._wrench
        for i, foot in zip(contact.tolist(), feet[contact, side].tolist(), strict=True):
            mujoco.mj_contactForce(m, d, i, wrench)
            out[foot] += abs(wrench[0])
        return out

    def tilt(self) -> float:
        x, y = self.data.qpos[4:6]
        return math.acos(max(-1.0, min(1.0, 1 - 2 * (x * x + y * y))))
