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
robot that no longer obeys. Every command carries the run's ``session`` (random unless set); the
robot side obeys one session, so another controller on the LCM network cannot command the robot.
Every command is stamped with the state it was computed from (the one the sending thread read
last), and :meth:`LcmPlant.state_age` tells the safety layer how old that state is, which refuses
commands computed from too old a state (``safety.max_command_age``).

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
from hardware.lcm.lcm_types import joint_command_t, robot_state_t, sim_step_t
from hardware.mocap.pose_input import MocapOptions, NatNetPoseInput, PoseStamper, lcm_pose_handler
from mpc.plant_base import Plant, PlantState
from robots.info import RobotInfo

log = logging.getLogger(__name__)

#: LCM's default multicast group; ttl=0 keeps the traffic on this host.
DEFAULT_URL = "udpm://239.255.76.67:7667?ttl=0"
#: How often the LCM thread checks the watchdogs, at the latest (ms).
WATCH_PERIOD_MS = 10


def options_from(cls, values: dict | None, section: str):
    """Build the options dataclass ``cls`` from a config mapping, naming bad keys."""
    from mpc.schema import check_kwargs

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

    #: Bounds of the options, read by mpc.schema.check_kwargs (see mpc/schema.py).
    RANGES: ClassVar[dict[str, dict[str, float]]] = {
        "kp": {"min": 0.0, "max": 1000.0},
        "kd": {"min": 0.0, "max": 100.0},
        "settle_poses": {"min": 0, "max": 10000},
        "connect_timeout": {"gt": 0.0, "max": 60.0},
        "state_timeout": {"min": 0.005, "max": 1.0},
        "max_pose_age": {"min": 0.005, "max": 2.0},
        "session": {"min": 0, "max": 2**63 - 1},
    }

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
        self._pose_input: NatNetPoseInput | None = None
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
                self._lcm.subscribe(self.mocap.pose_channel, lcm_pose_handler(self.mocap, stamper))

    def _gains(self, given: list[float] | None, default: np.ndarray, name: str) -> np.ndarray:
        if given is None:
            return default.copy()
        if len(given) != self.nu:
            raise ValueError(f"plant.{name} needs {self.nu} values (model actuator order), "
                             f"got {len(given)}")
        return np.asarray(given, float)

    # --- receiving ---------------------------------------------------------------------------
    def _handle_lcm(self) -> None:
        while not self._stop.is_set():
            self._lcm.handle_timeout(WATCH_PERIOD_MS)
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
                      f"{self.state_timeout * 1e3:.0f} ms)")
        elif self.base_state == "mocap" and h["pose_age"] > self.max_pose_age:
            self.damp(f"stale mocap: newest pose {h['pose_age'] * 1e3:.0f} ms old (limit "
                      f"{self.max_pose_age * 1e3:.0f} ms)")

    def _robot_time(self, local_time: float) -> float | None:
        return self.clock.to_robot(local_time) if self.clock.ready else None

    def _on_state(self, channel: str, data: bytes) -> None:
        received = time.monotonic()
        msg = robot_state_t.decode(data)
        if msg.num_joints != self.nu:
            log.error("%s: %d joints, the %s model has %d; message ignored", channel,
                      msg.num_joints, self.robot.name, self.nu)
            return
        t = msg.utime * 1e-6
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
        cmd = self._command()
        cmd.q = np.where(self._servo, ctrl, 0.0).tolist()
        cmd.tau = np.where(self._servo, 0.0, ctrl).tolist()
        cmd.kp, cmd.kd = self.kp.tolist(), self.kd.tolist()
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

    def close(self) -> None:
        if self._state is not None:
            self.damp(self.damping_reason or "plant closed")
        self._stop.set()
        self._thread.join(timeout=1.0)
        if self._pose_input is not None:
            self._pose_input.close()
