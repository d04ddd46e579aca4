"""Model order <-> motor slots, by joint name, and the per-slot figures a bridge needs.

The planner's model orders its actuators one way (Go2's reference model: FL, FR, RL, RR), the
robot's motor slots another (FR, FL, RR, RL; H1: its own table). ``RobotInfo.motor_joints``
names the joint of every slot; the map is built by looking each model actuator's joint up by
name, never by position.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

import robots
from hardware.lowlevel import (
    MODE_FOC,
    MODE_SERVO,
    POS_STOP,
    SLOTS,
    VEL_STOP,
    MotorCommand,
)
from robots.info import RobotInfo
from robots.limits import joint_limits

#: H1 motors that servo in mode 0x01 (ankles and arms, "weak" motors in Unitree's H1 example);
#: the others (hips, knees, torso) in 0x0A.
H1_FOC_JOINTS = ("left_ankle", "right_ankle", "right_shoulder_pitch", "right_shoulder_roll",
                 "right_shoulder_yaw", "right_elbow", "left_shoulder_pitch",
                 "left_shoulder_roll", "left_shoulder_yaw", "left_elbow")


@dataclass(frozen=True)
class MotorMap:
    """Where each of the planning model's actuators and joints lives among the motor slots.

    Per-slot arrays have ``SLOTS`` entries (unused slots: zero limits, not in ``used``).
    """

    #: Slot of model actuator i.
    actuator_slots: np.ndarray
    #: qpos / qvel address of model actuator i's joint in the planning model.
    qpos_adr: np.ndarray
    dof_adr: np.ndarray
    #: Slots the robot uses, and those the planner does not see (held at home: H1 upper body).
    used: np.ndarray
    locked: np.ndarray
    #: Home joint angle of every slot; its joint range and torque limit: the robot's documented
    #: figures narrowed by the planning model's (:func:`robots.limits.joint_limits`).
    home: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    torque_limit: np.ndarray
    #: Gains that hold a slot at a target: for a slot the planner drives through a position
    #: actuator, that actuator's stiffness and the joint's damping (so the motor's PD is the
    #: actuator the planner assumed); otherwise the robot's hardware PD gains.
    hold_kp: np.ndarray
    hold_kd: np.ndarray
    #: Motor mode that servos each slot.
    servo_mode: np.ndarray
    #: Whether the planner's controls are joint-angle targets (else joint torques).
    position_control: bool

    @classmethod
    def build(cls, robot: RobotInfo, model: mujoco.MjModel, servo_mode: str) -> MotorMap:
        """``model`` is the planner's model; ``servo_mode`` "legacy" (0x0A), "go2" (0x01) or
        "h1" (per motor)."""
        slots = np.zeros(SLOTS, bool)
        lower, upper, torque = np.zeros(SLOTS), np.zeros(SLOTS), np.zeros(SLOTS)
        hw_kp, hw_kd = np.zeros(SLOTS), np.zeros(SLOTS)
        motor_slots = list(robot.motor_slots)
        slots[motor_slots] = True
        lower[motor_slots], upper[motor_slots], torque[motor_slots] = joint_limits(
            robot, model, robot.motor_joints)
        hw_kp[motor_slots], hw_kd[motor_slots] = robot.hw_kp, robot.hw_kd
        act_joints = [model.joint(model.actuator_trnid[a, 0]).name for a in range(model.nu)]
        missing = [j for j in act_joints if j not in robot.motor_joints]
        if missing:
            raise ValueError(f"{robot.name}: model joints without a motor: {missing}")
        act_slots = np.array([robot.slot_of(j) for j in act_joints], dtype=int)
        jnt = model.actuator_trnid[:, 0]
        position = bool(np.all(model.actuator_biastype == mujoco.mjtBias.mjBIAS_AFFINE))
        kp, kd = hw_kp.copy(), hw_kd.copy()
        if position:
            kp[act_slots] = model.actuator_gainprm[:, 0]
            kd[act_slots] = model.dof_damping[model.jnt_dofadr[jnt]] - model.actuator_biasprm[:, 2]
        used = np.flatnonzero(slots)
        locked = np.array([robot.slot_of(j) for j in robot.locked_joints], dtype=int)
        return cls(actuator_slots=act_slots, qpos_adr=model.jnt_qposadr[jnt].copy(),
                   dof_adr=model.jnt_dofadr[jnt].copy(), used=used, locked=locked,
                   home=_home_angles(robot), lower=lower, upper=upper, torque_limit=torque,
                   hold_kp=kp, hold_kd=kd, servo_mode=_servo_modes(robot, servo_mode),
                   position_control=position)

    def command_gains(self, kp, kd) -> tuple[np.ndarray, np.ndarray]:
        """Per-slot PD gains for the planner's joint targets (a config's ``plant.kp``,
        ``plant.kd``): the hold gains unless given (one value for every actuator, or one per
        model actuator); ValueError (one line) for another count."""
        out = []
        nu = len(self.actuator_slots)
        for name, given, default in (("kp", kp, self.hold_kp), ("kd", kd, self.hold_kd)):
            gains = default.copy()
            if given is not None:
                values = np.asarray(given, dtype=float)
                if values.size not in (1, nu):
                    raise ValueError(f"plant.{name}: give 1 value or {nu} (one per "
                                     f"actuator), got {values.size}")
                gains[self.actuator_slots] = values
            out.append(gains)
        return out[0], out[1]

    def hold_command(self, q: np.ndarray) -> MotorCommand:
        """Every used slot servoing to ``q`` (per slot) at its hold gains."""
        cmd = MotorCommand()
        used = self.used
        cmd.mode[used] = self.servo_mode[used]
        cmd.q[used] = q[used]
        cmd.dq[used] = 0.0
        cmd.kp[used] = self.hold_kp[used]
        cmd.kd[used] = self.hold_kd[used]
        return cmd

    def damping_command(self, kd: float) -> MotorCommand:
        """The safe state: every used slot with Kp 0, damping ``kd``, no torque."""
        cmd = MotorCommand()
        used = self.used
        cmd.mode[used] = self.servo_mode[used]
        cmd.dq[used] = 0.0
        cmd.kd[used] = kd
        return cmd

    def run_command(self, ctrl: np.ndarray, kp: np.ndarray, kd: np.ndarray) -> MotorCommand:
        """The planner's controls (model actuator order) as a command: joint targets with the
        per-slot gains ``kp``, ``kd``, or joint torques; the slots the planner does not see
        held at home."""
        cmd = self.hold_command(self.home)
        slots = self.actuator_slots
        if self.position_control:
            cmd.q[slots] = ctrl
            cmd.kp[slots] = kp[slots]
            cmd.kd[slots] = kd[slots]
        else:
            cmd.q[slots] = POS_STOP
            cmd.dq[slots] = VEL_STOP
            cmd.kp[slots] = 0.0
            cmd.kd[slots] = 0.0
            cmd.tau[slots] = ctrl
        return cmd

    def to_planning(self, qpos: np.ndarray, qvel: np.ndarray, q: np.ndarray,
                    dq: np.ndarray) -> None:
        """Write per-slot joint angles ``q`` and speeds ``dq`` into a planning-model state."""
        qpos[self.qpos_adr] = q[self.actuator_slots]
        qvel[self.dof_adr] = dq[self.actuator_slots]


def _home_angles(robot: RobotInfo) -> np.ndarray:
    """Joint angles of the full robot model's home keyframe, per slot."""
    model = robots.load_model(robot.name)
    key = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, robot.home_key)
    home = np.zeros(SLOTS)
    for joint, slot in zip(robot.motor_joints, robot.motor_slots, strict=True):
        home[slot] = model.key_qpos[key, model.jnt_qposadr[model.joint(joint).id]]
    return home


def _servo_modes(robot: RobotInfo, kind: str) -> np.ndarray:
    modes = np.zeros(SLOTS, np.uint8)
    for joint, slot in zip(robot.motor_joints, robot.motor_slots, strict=True):
        if kind == "legacy":
            modes[slot] = MODE_SERVO
        elif kind == "go2":
            modes[slot] = MODE_FOC
        elif kind == "h1":
            modes[slot] = MODE_FOC if joint in H1_FOC_JOINTS else MODE_SERVO
        else:
            raise ValueError(f"unknown motor family {kind!r}")
    return modes
