"""Physical limits of a robot's joints: what the last clamp before a motor holds commands to.

Per joint, the range of angles a target may have and the largest torque a motor may be asked
for. They start from the robot's documented figures (:class:`robots.info.RobotInfo`:
``joint_limits``, ``torque_limit``) and are narrowed by the model wherever the model limits the
joint:

    lower = max(documented lower, jnt_range lower if jnt_limited, ctrlrange lower if a
                position actuator with ctrllimited)
    upper = min(... the same upper ends ...)
    torque = min(documented torque, |gear| max|forcerange| if forcelimited,
                 |gear gain| max|ctrlrange| if a motor (no bias) with ctrllimited)

A joint the model leaves unlimited keeps its documented figures; a joint the robot does not
document is an error, never an infinite limit.
"""

from __future__ import annotations

from collections.abc import Sequence

import mujoco
import numpy as np

from robots.info import RobotInfo


def joint_limits(robot: RobotInfo, model: mujoco.MjModel, joints: Sequence[str]
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lower, upper, torque) of each of ``joints`` (rad, rad, N m), as the module docstring
    states; every value finite, lower < upper, torque > 0 (ValueError naming the joint
    otherwise). ``model`` may lack some of the joints (H1's planning model has no arms): those
    keep their documented limits."""
    documented = {j: (lim, tau) for j, lim, tau in zip(robot.motor_joints, robot.joint_limits,
                                                       robot.torque_limit, strict=True)}
    n = len(joints)
    lower, upper, torque = np.empty(n), np.empty(n), np.empty(n)
    for i, name in enumerate(joints):
        if name not in documented:
            raise ValueError(f"{robot.name}: joint {name!r} has no documented limits")
        (lower[i], upper[i]), torque[i] = documented[name]
        jid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
        if jid < 0:
            continue
        if model.jnt_limited[jid]:
            lower[i] = max(lower[i], model.jnt_range[jid, 0])
            upper[i] = min(upper[i], model.jnt_range[jid, 1])
        for a in np.flatnonzero(model.actuator_trnid[:, 0] == jid):
            gear = abs(model.actuator_gear[a, 0])
            position = model.actuator_biastype[a] == mujoco.mjtBias.mjBIAS_AFFINE
            if position and model.actuator_ctrllimited[a]:
                lower[i] = max(lower[i], model.actuator_ctrlrange[a, 0])
                upper[i] = min(upper[i], model.actuator_ctrlrange[a, 1])
            if model.actuator_forcelimited[a]:
                torque[i] = min(torque[i], gear * np.abs(model.actuator_forcerange[a]).max())
            if not position and model.actuator_ctrllimited[a]:
                gain = abs(model.actuator_gainprm[a, 0])
                torque[i] = min(torque[i], gear * gain * np.abs(model.actuator_ctrlrange[a]).max())
        if not (np.isfinite([lower[i], upper[i], torque[i]]).all() and lower[i] < upper[i]
                and torque[i] > 0):
            raise ValueError(f"{robot.name}: joint {name!r} has no usable limits (range "
                             f"{lower[i]:g}..{upper[i]:g} rad, torque {torque[i]:g} N m)")
    return lower, upper, torque
