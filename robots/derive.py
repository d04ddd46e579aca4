"""Planning models derived from the full robot models by locking joints.

A robot whose :class:`~robots.info.RobotInfo` names a ``planning_model_file`` and
``locked_joints`` (H1: legs only, torso and arms locked) gets that file generated from its
``model_file``: the locked joints are removed, their child bodies welded to their parents at the
joints' home angles, their actuators dropped and the keyframes trimmed to the remaining joints
and actuators. Masses, inertias and the geometry of every body are unchanged.

The generated files are committed (so that ``MjSpec.from_file`` and the viewer work on them) and
a test checks that they equal a fresh derivation. Regenerate after editing a full model:

    python -m robots.derive
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path

import mujoco
import numpy as np

from robots.info import ROBOTS, RobotInfo

MODELS_DIR = Path(__file__).resolve().parent / "models"

HEADER = """<!--
  GENERATED from {source} by `python -m robots.derive`; do not edit, edit {source} instead.

{description}
-->
"""


def _header(robot: RobotInfo, name: str) -> str:
    description = (
        f"{name} for planning: {robot.model_file} with the joints {', '.join(robot.locked_joints)} "
        "locked at their home angles (removed; their bodies welded to their parents), their "
        "actuators dropped and the keyframes trimmed. Masses, inertias and geometry are those "
        f"of {robot.model_file}.")
    wrapped = textwrap.fill(description, width=98, initial_indent="  ", subsequent_indent="  ")
    return HEADER.format(source=robot.model_file, description=wrapped)


def _weld_at(joint: mujoco.MjsJoint, angle: float) -> None:
    """Fold a hinge at ``angle`` into its body's frame relative to the parent."""
    if joint.type != mujoco.mjtJoint.mjJNT_HINGE:
        raise ValueError(f"can only lock hinge joints, not {joint.name!r}")
    body = joint.parent
    if body.alt.type != mujoco.mjtOrientation.mjORIENTATION_QUAT:
        raise ValueError(f"body {body.name!r}: give its orientation as a quaternion")
    axis = np.asarray(joint.axis, dtype=float)
    axis /= np.linalg.norm(axis)
    turn = np.zeros(4)
    mujoco.mju_axisAngle2Quat(turn, axis, angle)
    # Rotating about an axis through the joint position p moves the body origin by p - R p.
    rot = np.zeros(9)
    mujoco.mju_quat2Mat(rot, turn)
    p = np.asarray(joint.pos, dtype=float)
    shift_local = p - rot.reshape(3, 3) @ p
    body_rot = np.zeros(9)
    quat = np.asarray(body.quat, dtype=float)
    mujoco.mju_quat2Mat(body_rot, quat / np.linalg.norm(quat))
    body.pos = np.asarray(body.pos) + body_rot.reshape(3, 3) @ shift_local
    new_quat = np.zeros(4)
    mujoco.mju_mulQuat(new_quat, quat, turn)
    body.quat = new_quat


def lock_joints(spec: mujoco.MjSpec, joints: Sequence[str], home_key: str) -> mujoco.MjSpec:
    """Remove ``joints`` from ``spec`` (in place), welding them at their angles in ``home_key``."""
    model = spec.compile()
    key = model.key(home_key)
    locked = set(joints)
    keep_qpos, keep_qvel = np.ones(model.nq, bool), np.ones(model.nv, bool)
    for name in joints:
        j = model.joint(name)
        keep_qpos[j.qposadr[0]] = False
        keep_qvel[j.dofadr[0]] = False
        _weld_at(spec.joint(name), float(key.qpos[j.qposadr[0]]))
    keep_ctrl = np.array([model.joint(model.actuator_trnid[i, 0]).name not in locked
                          for i in range(model.nu)], dtype=bool)
    for actuator in list(spec.actuators):
        if actuator.target in locked:
            spec.delete(actuator)
    for name in joints:
        spec.delete(spec.joint(name))
    for k, spec_key in enumerate(spec.keys):
        spec_key.qpos = model.key_qpos[k][keep_qpos]
        spec_key.qvel = model.key_qvel[k][keep_qvel]
        spec_key.ctrl = model.key_ctrl[k][keep_ctrl]
    return spec


def planning_spec(robot: RobotInfo) -> mujoco.MjSpec:
    """The planning model of ``robot`` derived from its full model."""
    spec = mujoco.MjSpec.from_file(str(MODELS_DIR / robot.model_file))
    spec.modelname = Path(robot.planning_model_file).stem
    return lock_joints(spec, robot.locked_joints, robot.home_key)


def planning_xml(robot: RobotInfo) -> str:
    """Text of the generated planning model file of ``robot``."""
    spec = planning_spec(robot)
    return _header(robot, spec.modelname) + spec.to_xml()


def derived_robots() -> list[RobotInfo]:
    """Robots whose planning model is generated."""
    return [r for r in ROBOTS.values() if r.planning_model_file and r.locked_joints]


def main() -> None:
    for robot in derived_robots():
        path = MODELS_DIR / robot.planning_model_file
        path.write_text(planning_xml(robot))
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
