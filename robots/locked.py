"""The bridge between a robot's full model and its planning model with locked joints (H1).

The planner of a robot with ``locked_joints`` (H1: torso and arms) works on the planning model,
which lacks those joints and their actuators. Everything that talks to the full robot, the
simulated plant and the hardware bridge alike, does the same three things:

- report the measured state in the planning model's layout (qpos, qvel of the joints it has);
- apply the planner's controls to the actuators of the same names;
- hold each locked joint at its home angle with a joint PD (the robot's hardware gains) plus
  the joint's static home torque from the full model's home keyframe:
  τ = τ_home + k_p (q_home − q) − k_d q̇.

:class:`LockedJointMap` holds the index maps for this, built by joint and actuator name (never
by position), so the two models may order their joints differently.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from robots.info import RobotInfo


@dataclass(frozen=True)
class LockedJointMap:
    """Index maps from a full model to its planning model, and the locked joints' PD."""

    #: Full-model qpos/qvel addresses, in the planning model's qpos/qvel order.
    qpos: np.ndarray
    qvel: np.ndarray
    #: Full-model actuator ids of the planning model's actuators, in its order.
    ctrl: np.ndarray
    #: Locked joints (full model): qpos and qvel addresses, their actuators, home angles,
    #: home torques and PD gains, in the order of ``RobotInfo.locked_joints``.
    locked_qpos: np.ndarray
    locked_qvel: np.ndarray
    locked_ctrl: np.ndarray
    locked_home: np.ndarray
    locked_torque: np.ndarray
    locked_kp: np.ndarray
    locked_kd: np.ndarray

    @classmethod
    def build(cls, robot: RobotInfo, full: mujoco.MjModel,
              planning: mujoco.MjModel) -> LockedJointMap:
        """Maps for ``robot`` between its compiled ``full`` and ``planning`` models."""
        if any(full.actuator_biastype[full.actuator(a).id] != mujoco.mjtBias.mjBIAS_NONE
               for a in _actuators_of(full, robot.locked_joints)):
            raise ValueError(f"{robot.name}: locked joints must have torque (motor) actuators")
        qpos, qvel = [], []
        for j in range(planning.njnt):
            name = mujoco.mj_id2name(planning, mujoco.mjtObj.mjOBJ_JOINT, j)
            fj = full.joint(name)
            qpos.extend(range(fj.qposadr[0], fj.qposadr[0] + _qpos_size(planning, j)))
            qvel.extend(range(fj.dofadr[0], fj.dofadr[0] + _dof_size(planning, j)))
        ctrl = [full.actuator(mujoco.mj_id2name(planning, mujoco.mjtObj.mjOBJ_ACTUATOR, a)).id
                for a in range(planning.nu)]
        key = full.key(robot.home_key)
        locked = [full.joint(j) for j in robot.locked_joints]
        locked_ctrl = np.array([full.actuator(a).id
                                for a in _actuators_of(full, robot.locked_joints)])
        slots = [robot.motor_joints.index(j) for j in robot.locked_joints]
        return cls(
            qpos=np.array(qpos), qvel=np.array(qvel), ctrl=np.array(ctrl),
            locked_qpos=np.array([j.qposadr[0] for j in locked]),
            locked_qvel=np.array([j.dofadr[0] for j in locked]),
            locked_ctrl=locked_ctrl,
            locked_home=np.array([key.qpos[j.qposadr[0]] for j in locked]),
            locked_torque=key.ctrl[locked_ctrl].copy(),
            locked_kp=np.array([robot.hw_kp[i] for i in slots]),
            locked_kd=np.array([robot.hw_kd[i] for i in slots]),
        )

    def hold_torques(self, qpos: np.ndarray, qvel: np.ndarray) -> np.ndarray:
        """Torques of the locked joints' actuators at the full model's ``qpos``, ``qvel``."""
        return (self.locked_torque + self.locked_kp * (self.locked_home - qpos[self.locked_qpos])
                - self.locked_kd * qvel[self.locked_qvel])


def _actuators_of(model: mujoco.MjModel, joints) -> list[str]:
    """Names of the actuators driving ``joints``, in the order of ``joints``."""
    out = []
    for name in joints:
        jid = model.joint(name).id
        acts = [a for a in range(model.nu) if model.actuator_trnid[a, 0] == jid
                and model.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT]
        if len(acts) != 1:
            raise ValueError(f"joint {name!r} must have exactly one actuator, has {len(acts)}")
        out.append(mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, acts[0]))
    return out


def _qpos_size(model: mujoco.MjModel, joint: int) -> int:
    return {mujoco.mjtJoint.mjJNT_FREE: 7, mujoco.mjtJoint.mjJNT_BALL: 4}.get(
        mujoco.mjtJoint(model.jnt_type[joint]), 1)


def _dof_size(model: mujoco.MjModel, joint: int) -> int:
    return {mujoco.mjtJoint.mjJNT_FREE: 6, mujoco.mjtJoint.mjJNT_BALL: 3}.get(
        mujoco.mjtJoint(model.jnt_type[joint]), 1)
