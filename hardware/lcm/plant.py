"""The LCM plant: the controller's side of a two-process setup in which another process owns the
robot link (a hardware bridge, or the simulated robot of :mod:`hardware.fake.lcm_robot`) and
exchanges ``robot_state_t`` and ``joint_command_t`` messages with the controller over LCM.

The state messages carry joint encoders and the IMU. The floating base comes from motion
capture fused with the IMU (``base_state: mocap``, the usual case: the robot does not know its
position) or from the messages themselves when their sender estimates it (``base_state:
message``). Commands are joint targets with the motor gains that make the motors behave like
the planning model's actuators: for position actuators kp = the actuator's gain and kd = its
velocity gain (override with ``kp``/``kd``), for motor actuators a feedforward torque.

In real time the plant watches its inputs (every 10 ms): no robot state for ``state_timeout``
(the robot process froze or died; its clock stops with it, so nothing else would notice), or with
mocap the newest fused pose older than ``max_pose_age``, puts it in damping, which ends the run
with the reason. So does a robot side that reports damping (``robot_state_t.damping``: its own
command watchdog, a damping command, its operator): the controller must not go on commanding a
robot that no longer obeys. A message that does not decode, a state with the wrong joint count or
non-finite values, and a state out of order (:class:`hardware.refusals.StreamOrder` on its
``seq`` and ``utime``: repeated, older, or a number leaping ahead of its clock) is refused
and counted (:meth:`LcmPlant.stats`), never fatal to the thread that runs the watchdogs; only
accepted states count as news for the stale-state watchdog. Every command carries the run's
``session`` (random unless set); the robot side obeys one session, so another controller on the
LCM network cannot command the robot. Every command is stamped with the state it was computed
from (the one the sending thread read last), and :meth:`LcmPlant.state_age` tells the safety
layer how old that state is, which refuses commands computed from too old a state
(``safety.max_command_age``).

``sync: true`` runs in lockstep with a simulated robot: :meth:`step` asks it for one physics
step (``sim_step_t``) and waits for the resulting state, so ``runtime.mode: lockstep`` works
over LCM. Mocap poses must then be stamped in the simulation's clock (``mocap.clock: stream``).
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from typing import ClassVar

import lcm
import mujoco
import numpy as np

import robots
from hardware.estimation.base_state import BaseState, ImuSample
from hardware.estimation.clock_sync import ClockOffset
from hardware.estimation.mocap_imu import EstimatorOptions, MocapImuEstimator
from hardware.lcm import DECODE_ERRORS, DEFAULT_URL
from hardware.lcm.lcm_types import joint_command_t, robot_state_t, sim_step_t
from hardware.lcm.pose_input import LcmPoseInput
from hardware.mocap.pose_input import MocapOptions, NatNetPoseInput, PoseStamper
from hardware.refusals import INVALID, UNDECODABLE, Refusals, StreamOrder
from hardware.safety.layer import ClampLog, JointLimits, SafetyConfig, clamp
from mpc.app.plants.plant_base import Plant, PlantState
from robots.info import RobotInfo

log = logging.getLogger(__name__)

#: LCM's default multicast group; ttl=0 keeps the traffic on this host.
#: How often the LCM thread checks the watchdogs, at the latest (ms).
WATCH_PERIOD_MS = 10
#: A state value (rad, rad/s, N m, m/s^2, m) this large is no sensor's reading.
MAX_VALUE = 1e6


def options_from(cls, values: dict | None, section: str):
    """Build the options dataclass ``cls`` from a config mapping, naming bad keys."""
    from mpc.app.schema import check_kwargs

    checked = check_kwargs(cls, values or {}, "config", f"plant.{section}.")
    try:
        return cls(**checked)
    except ValueError as e:
        raise ValueError(f"plant.{section}: {e}") from None


def model_gains(model: mujoco.MjModel) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per actuator: whether it is a position servo, its stiffness and its damping, read from
    the affine bias of MuJoCo's position actuators (force = kp ctrl - kp q - kv qdot)."""
    servo = model.actuator_biastype == mujoco.mjtBias.mjBIAS_AFFINE
    kp = np.where(servo, model.actuator_gainprm[:, 0], 0.0)
    kd = np.where(servo, -model.actuator_biasprm[:, 2], 0.0)
    return servo, kp, kd


class LcmPlant(Plant):
    """A robot on the other side of LCM (see the module docstring)."""

    realtime_only = True

    #: Bounds of the options, read by mpc.app.schema.check_kwargs (see mpc/app/schema.py).
    RANGES: ClassVar[dict[str, dict[str, float]]] = {
        "kp": {"min": 0.0, "max": 1000.0},
        "kd": {"min": 0.0, "max": 100.0},
        "settle_poses": {"min": 0, "max": 10000},
        "connect_timeout": {"gt": 0.0, "max": 60.0},
        "state_timeout": {"min": 0.005, "max": 1.0},
        "max_pose_age": {"min": 0.005, "max": 2.0},
        "session": {"min": 0, "max": 2**63 - 1},
    }

    #: The safety wrapper's share is the tilt and joint-speed trips and dry runs; this plant
    #: clamps the gains it sends (:meth:`apply_safety`) and sends no velocity target but 0.
    SAFETY_APPLIED = frozenset({"max_kp", "max_kd", "max_target_speed"})
    #: The other process owns the robot link, and with it these protections.
    SAFETY_ELSEWHERE: ClassVar[dict[str, str]] = {
        "state_timeout": "this plant's stale-state watchdog is plant.state_timeout",
        "command_timeout": "the robot process owns the lost-command watchdog",
        "damping_kd": "the robot process chooses its damping gain",
        "ramp_time": "the robot process stands the robot up before the first command",
        "estop_buttons": "robot_state_t carries no remote; the robot process owns the e-stop",
    }

    @classmethod
    def simulated_robot(cls, options: dict) -> str | None:
        """Lockstep (``sync``) is only possible with a simulated robot."""
        return "plant.sync: lockstep with a simulated robot" if options.get("sync") else None

    @classmethod
    def steps_on_request(cls, options: dict) -> bool:
        """With ``sync`` the robot is a simulation stepped over LCM: lockstep works."""
        return bool(options.get("sync", False))

    @staticmethod
    def check_options(robot: str, options: dict) -> None:
        """The nested sections ``plant.mocap`` and ``plant.estimator`` are checked with the
        config, not only when the plant is built."""
        options_from(MocapOptions, options.get("mocap"), "mocap")
        options_from(EstimatorOptions, options.get("estimator"), "estimator")

    def __init__(self, robot: RobotInfo, seed: int = 0, lcm_url: str = DEFAULT_URL,
                 state_channel: str = "ROBOT_STATE", command_channel: str = "JOINT_COMMAND",
                 base_state: str = "mocap", mocap: dict | None = None,
                 estimator: dict | None = None, kp: list[float] | None = None,
                 kd: list[float] | None = None, sync: bool = False,
                 step_channel: str = "SIM_STEP", settle_poses: int = 10,
                 connect_timeout: float = 5.0, state_timeout: float = 0.1,
                 max_pose_age: float = 0.25, session: int = 0):
        if base_state not in ("mocap", "message"):
            raise ValueError(f"plant.base_state must be mocap or message, got {base_state!r}")
        #: Stamped on every command; the robot side obeys one session (0: a new one per run).
        self.session = session or secrets.randbits(62) + 1
        self.state_timeout = state_timeout
        self.max_pose_age = max_pose_age
        self.robot = robot
        self.model = robots.load_model(robot.name)
        joints = self.model.actuator_trnid[:, 0]
        self._qadr = self.model.jnt_qposadr[joints]
        self._dadr = self.model.jnt_dofadr[joints]
        self.nu = self.model.nu
        self._servo, model_kp, model_kd = model_gains(self.model)
        self.kp = self._gains(kp, model_kp, "kp")
        self.kd = self._gains(kd, model_kd, "kd")
        self.clamps = ClampLog()
        self.apply_safety(SafetyConfig())
        self.base_state = base_state
        self.mocap = options_from(MocapOptions, mocap, "mocap")
        self.estimator = MocapImuEstimator(options_from(EstimatorOptions, estimator, "estimator"))
        self.sync = sync
        self.realtime_only = not sync
        if sync and base_state == "mocap" and self.mocap.clock != "stream":
            raise ValueError("plant.sync needs plant.mocap.clock: stream (the simulation's clock "
                             "is not this computer's)")
        self.channels = (state_channel, command_channel, step_channel)
        self.settle_poses = settle_poses
        self.connect_timeout = connect_timeout
        self.damping_reason: str | None = None
        self.clock = ClockOffset()
        self._cond = threading.Condition()
        self._state: robot_state_t | None = None
        self._received = 0.0
        #: Per thread: the state it read last and when that state arrived (monotonic).
        self._local = threading.local()
        self._states = 0
        self._lost = 0
        self._step_seq = 0
        self._ready = False
        self._pose_input: NatNetPoseInput | LcmPoseInput | None = None
        #: Robot states refused (see the module docstring), and LCM handler errors.
        self.refused = Refusals(f"LCM {state_channel}", log)
        self._order = StreamOrder(strict_time=not sync)
        #: The refusal total when the latest state was accepted (for the stale-state reason).
        self._refused_at_state = 0
        self._handler_errors = Refusals("lcm-plant thread", log)
        try:
            self._lcm = lcm.LCM(lcm_url)
        except Exception as e:  # the binding raises a bare RuntimeError
            raise ValueError(f"plant.lcm_url {lcm_url!r}: {e}") from None
        self._lcm.subscribe(state_channel, self._on_state)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._handle_lcm, name="lcm-plant", daemon=True)
        self._thread.start()
        if base_state == "mocap":
            stamper = PoseStamper(self.mocap, self._on_pose, self._robot_time)
            if self.mocap.source == "natnet":
                try:
                    self._pose_input = NatNetPoseInput(self.mocap, stamper, connect_timeout)
                except OSError:
                    self.close()
                    raise
            else:
                self._pose_input = LcmPoseInput(self.mocap, stamper)
                self._lcm.subscribe(self.mocap.pose_channel, self._pose_input)

    def apply_safety(self, safety: SafetyConfig) -> None:
        """Commands are clamped to the robot's physical limits (:class:`JointLimits`) with
        ``safety``'s maxima of velocity targets and gains; a motor (torque) actuator gets
        its torque with no gains, its position target parked inside its range."""
        self.limits = JointLimits.of(self.robot, self.model, safety)
        self._q_idle = np.clip(0.0, self.limits.lower, self.limits.upper)

    def _gains(self, given: list[float] | None, default: np.ndarray, name: str) -> np.ndarray:
        if given is None:
            return default.copy()
        if len(given) != self.nu:
            raise ValueError(f"plant.{name} needs {self.nu} values (model actuator order), "
                             f"got {len(given)}")
        return np.asarray(given, float)

    # --- receiving ---------------------------------------------------------------------------
    def _handle_lcm(self) -> None:
        """The LCM thread: messages and watchdogs. Nothing a handler raises ends it (the
        handlers refuse bad messages themselves; anything else is counted and logged)."""
        while not self._stop.is_set():
            try:
                self._lcm.handle_timeout(WATCH_PERIOD_MS)
            except Exception as e:  # a bug in a handler: counted, logged, the watch goes on
                self._handler_errors.refuse("handler_error", f"{type(e).__name__}: {e}")
            self._watch()

    def _watch(self) -> None:
        """The watchdogs of a real-time run, every ``WATCH_PERIOD_MS`` at the latest: no
        robot state for ``state_timeout`` (the robot process froze or died: its clock stops,
        so without this the plan never looks expired and the run never ends), or with mocap
        the newest fused pose older than ``max_pose_age`` (the stream stopped or lost the
        body): damping, and the run ends with the reason."""
        if not self._ready or self.sync or self.damping_reason is not None:
            return
        h = self.health()
        if h["state_age"] > self.state_timeout:
            self.damp(f"stale state: none for {h['state_age'] * 1e3:.0f} ms (limit "
                      f"{self.state_timeout * 1e3:.0f} ms)"
                      + self.refused.meanwhile(self._refused_at_state))
        elif self.base_state == "mocap" and h["pose_age"] > self.max_pose_age:
            self.damp(f"stale mocap: newest pose {h['pose_age'] * 1e3:.0f} ms old (limit "
                      f"{self.max_pose_age * 1e3:.0f} ms)")

    def _robot_time(self, local_time: float) -> float | None:
        return self.clock.to_robot(local_time) if self.clock.ready else None

    def _on_state(self, channel: str, data: bytes) -> None:
        received = time.monotonic()
        try:
            msg = robot_state_t.decode(data)
        except DECODE_ERRORS as e:
            self.refused.refuse(UNDECODABLE, f"{len(data)} B, {e}")
            return
        problem = self._invalid(msg)
        if problem is not None:
            self.refused.refuse(INVALID, problem)
            return
        t = msg.utime * 1e-6
        reason = self._order.check(msg.seq, t)
        if reason is not None:
            self.refused.refuse(reason, f"seq {msg.seq}, utime {msg.utime}")
            return
        self._refused_at_state = self.refused.total()
        self.clock.observe(t, received)
        with self._cond:  # one lock with read_state: the state and its estimate belong together
            if self.base_state == "mocap":
                self.estimator.update(ImuSample(t, np.array(msg.imu_quat),
                                                np.array(msg.imu_gyro), np.array(msg.imu_accel)),
                                      np.array(msg.q), np.array(msg.dq))
            if self._state is not None and msg.seq > self._state.seq + 1:
                self._lost += msg.seq - self._state.seq - 1
            self._state, self._received = msg, received
            self._states += 1
            self._cond.notify_all()
        if msg.damping and self._ready and self.damping_reason is None:
            self.damp("the robot side reports damping (its command watchdog, a damping "
                      "command, or its operator)")

    def _invalid(self, msg: robot_state_t) -> str | None:
        """Why a decoded state cannot be used (None: it can): the wrong joint count, a
        non-finite value or one beyond :data:`MAX_VALUE`, a quaternion far from unit
        length."""
        if msg.num_joints != self.nu:
            return f"{msg.num_joints} joints, the {self.robot.name} model has {self.nu}"
        values = np.concatenate([msg.q, msg.dq, msg.tau_est, msg.imu_quat, msg.imu_gyro,
                                 msg.imu_accel])
        if self.base_state == "message":
            values = np.concatenate([values, msg.base_pos, msg.base_quat, msg.base_linvel,
                                     msg.base_angvel])
        if not np.all(np.abs(values) < MAX_VALUE):  # also NaN
            return "non-finite values, or beyond any sensor's range"
        quats = [msg.imu_quat]
        if self.base_state == "message" and msg.base_flags & 1:
            quats.append(msg.base_quat)
        if any(abs(np.dot(q, q) - 1.0) > 0.25 for q in quats):
            return "a quaternion far from unit length"
        return None

    def _on_pose(self, t: float, pos: np.ndarray, quat: np.ndarray, tracked: bool) -> None:
        self.estimator.add_pose(t, pos, quat, tracked)

    # --- readiness -----------------------------------------------------------------------------
    def prepare(self) -> None:
        """Wait for the robot's state and, with mocap, for ``settle_poses`` fused poses (in
        sync mode by stepping the simulation, which holds its pose until commanded)."""
        if self._ready:
            return
        if self.sync:
            self._request_steps(0)
            for _ in range(round(2.0 / self.timestep)):
                if self._base_ready():
                    break
                self._request_steps(1)
        else:
            deadline = time.monotonic() + self.connect_timeout
            while not (self._state is not None and self._base_ready()):
                if time.monotonic() > deadline:
                    break
                time.sleep(0.01)
        if self._state is None:
            raise TimeoutError(f"no robot state on LCM channel {self.channels[0]!r} within "
                               f"{self.connect_timeout:.1f} s")
        if not self._base_ready():
            raise TimeoutError(f"no base state: {self.estimator.health()['poses']:.0f} mocap "
                               f"poses fused, {self.settle_poses} needed (mocap source "
                               f"{self.mocap.source}, rigid body {self.mocap.rigid_body})")
        self._ready = True

    def _base_ready(self) -> bool:
        if self.base_state == "message":
            return self._state is not None and (self._state.base_flags & 3) == 3
        return self.estimator.health()["poses"] >= self.settle_poses

    # --- the plant interface -----------------------------------------------------------------
    @property
    def timestep(self) -> float:
        return float(self.model.opt.timestep)

    def read_state(self) -> PlantState:
        self.prepare()
        with self._cond:
            msg = self._state
            base = self._base(msg)
            self._local.state, self._local.received = msg, self._received
        qpos = np.zeros(self.model.nq)
        qvel = np.zeros(self.model.nv)
        qpos[0:3], qpos[3:7] = base.pos, base.quat
        qvel[0:3], qvel[3:6] = base.linvel, base.angvel
        qpos[self._qadr] = msg.q
        qvel[self._dadr] = msg.dq
        return PlantState(msg.utime * 1e-6, qpos, qvel, np.zeros(self.model.na))

    def _base(self, msg: robot_state_t) -> BaseState:
        if self.base_state == "message":
            return BaseState(msg.utime * 1e-6, np.array(msg.base_pos), np.array(msg.base_quat),
                             np.array(msg.base_linvel), np.array(msg.base_angvel))
        return self.estimator.estimate()

    def send(self, ctrl: np.ndarray) -> None:
        ctrl = np.asarray(ctrl, float)
        if self.damping_reason is not None:
            self._publish_damping()
            return
        if ctrl.shape != (self.nu,) or not np.all(np.isfinite(ctrl)):
            self.damp("non-finite or misshapen command")
            return
        lim = self.limits
        kp, kd = np.where(self._servo, self.kp, 0.0), np.where(self._servo, self.kd, 0.0)
        if not (np.all(np.isfinite(kp)) and np.all(np.isfinite(kd))):
            self.damp("non-finite gains")
            return
        cmd = self._command()
        cmd.q = clamp(np.where(self._servo, ctrl, self._q_idle), lim.lower, lim.upper,
                      "joint target", self.clamps).tolist()
        cmd.tau = clamp(np.where(self._servo, 0.0, ctrl), -lim.torque, lim.torque, "torque",
                        self.clamps).tolist()
        cmd.kp = clamp(kp, 0.0, lim.kp, "Kp", self.clamps).tolist()
        cmd.kd = clamp(kd, 0.0, lim.kd, "Kd", self.clamps).tolist()
        self._lcm.publish(self.channels[1], cmd.encode())

    def state_age(self) -> float:
        """Seconds since the state this thread read last arrived (NaN if it read none); 0 in
        sync mode, where the simulation waits for the run."""
        if self.sync:
            return 0.0
        return time.monotonic() - getattr(self._local, "received", np.nan)

    def _command(self) -> joint_command_t:
        """A command stamped with the state it was computed from: the one this thread read
        last (a thread that read none: the newest, e.g. the damping of a watchdog)."""
        cmd = joint_command_t()
        msg = getattr(self._local, "state", None)
        if msg is None:
            with self._cond:
                msg = self._state
        if msg is not None:
            cmd.utime, cmd.state_seq = msg.utime, msg.seq
        cmd.session = self.session
        cmd.num_joints = self.nu
        cmd.q = cmd.dq = cmd.kp = cmd.kd = cmd.tau = [0.0] * self.nu
        return cmd

    def _publish_damping(self) -> None:
        cmd = self._command()
        cmd.damping = 1
        self._lcm.publish(self.channels[1], cmd.encode())

    def damp(self, reason: str) -> None:
        if self.damping_reason is None:
            self.damping_reason = reason
            log.warning("plant damping: %s", reason)
        self._publish_damping()

    def step(self) -> None:
        """Sync mode: one physics step of the simulated robot; real robots run on their own."""
        if self.sync:
            self._request_steps(1)

    def _request_steps(self, steps: int) -> None:
        self._step_seq += 1
        with self._cond:
            before = self._states
            request = sim_step_t()
            request.seq, request.steps = self._step_seq, steps
            self._lcm.publish(self.channels[2], request.encode())
            if not self._cond.wait_for(lambda: self._states > before, timeout=2.0):
                raise TimeoutError(f"the simulated robot did not answer {self.channels[2]!r} "
                                   "within 2 s")

    def health(self) -> dict[str, float]:
        """Age of the newest state (s, local clock), lost state messages, whether the robot
        process reports damping, and the estimator's figures (pose age, dropouts, ...)."""
        with self._cond:
            msg = self._state
            age = time.monotonic() - self._received if msg is not None else np.inf
            lost = self._lost
        out = {"state_age": age, "states_lost": float(lost),
               "robot_damping": float(msg.damping) if msg is not None else 0.0}
        if self.base_state == "mocap":
            out.update(self.estimator.health())
        return out

    def stats(self) -> dict:
        """Counts of this plant's receive paths: states accepted and lost (gaps in ``seq``),
        states refused by reason, LCM handler errors, and with mocap the pose input's refusals
        and the estimator's counts (fused, rejected, stale, future, ...)."""
        out: dict = {"states": self._states, "states_lost": self._lost,
                     "states_refused": self.refused.as_dict(),
                     "handler_errors": self._handler_errors.total(),
                     "damping_reason": self.damping_reason}
        if self.base_state == "mocap" and self._pose_input is not None:
            stamper = self._pose_input.stamper
            out["poses_refused"] = {**self._pose_input.refused.as_dict(),
                                    **stamper.refused.as_dict()}
            out["poses_unclocked"] = stamper.unclocked
            out["estimator"] = {k: v for k, v in self.estimator.health().items()
                                if k != "pose_age"}
        return out

    def close(self) -> None:
        if self._state is not None:
            self.damp(self.damping_reason or "plant closed")
        self._stop.set()
        self._thread.join(timeout=1.0)
        if isinstance(self._pose_input, NatNetPoseInput):
            self._pose_input.close()
