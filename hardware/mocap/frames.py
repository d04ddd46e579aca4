"""Motion-capture conventions: from a tracked rigid body's pose to the robot base's pose.

Frames and the transforms between them (positions in metres, quaternions (w, x, y, z)):

- M, the mocap world as streamed: OptiTrack Motive streams Y-up by default, Vicon Z-up;
  lengths are multiplied by ``scale`` (1 for Motive's metres, 0.001 for Vicon's millimetres).
- Z, the same world with Z up: p_Z = C p_M, with C a +90 degree rotation about x for Y-up
  ((x, y, z) -> (x, -z, y): up becomes +z, x is kept) and the identity for Z-up.
- W, the robot's (MuJoCo) world. ``world_offset`` is the pose of Z in W.
- R, the rigid body's own axes. Motive and Vicon define them in the streaming world's up
  convention (aligned with the world when the body was created), so they are converted by C too:
  q_ZR = c q_MR c*.
- B, the robot base (the MJCF free body). ``body_offset`` is the pose of B in R: where the
  base origin sits relative to the marker tree's pivot, and how it is turned.

T_WB = T_WZ * T_ZR * T_RB, that is
    p_WB = p_WZ + R_WZ (p_ZR + R_ZR p_RB),    q_WB = q_WZ q_ZR q_RB.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hardware.rotations import IDENTITY, quat_conj, quat_mul, quat_normalize, quat_rotate

#: c for each up axis: the rotation taking the streamed axes to Z-up axes.
UP_AXIS_ROTATION = {
    "y": np.array([np.sqrt(0.5), np.sqrt(0.5), 0.0, 0.0]),
    "z": IDENTITY.copy(),
}


def xyzw_to_wxyz(q) -> np.ndarray:
    """NatNet and Vicon order (x, y, z, w) to MuJoCo's (w, x, y, z)."""
    q = np.asarray(q, float)
    return np.concatenate([q[..., 3:], q[..., :3]], axis=-1)


def wxyz_to_xyzw(q) -> np.ndarray:
    q = np.asarray(q, float)
    return np.concatenate([q[..., 1:], q[..., :1]], axis=-1)


@dataclass(frozen=True)
class MocapFrame:
    """How a streamed rigid-body pose relates to the robot base (see the module docstring)."""

    up_axis: str = "y"
    scale: float = 1.0
    world_offset_pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    world_offset_quat: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)
    body_offset_pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    body_offset_quat: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)

    def __post_init__(self):
        if self.up_axis not in UP_AXIS_ROTATION:
            raise ValueError(f"mocap up_axis must be one of {', '.join(UP_AXIS_ROTATION)}, "
                             f"got {self.up_axis!r}")
        for name in ("world_offset_quat", "body_offset_quat"):
            if np.linalg.norm(getattr(self, name)) < 1e-6:
                raise ValueError(f"mocap {name} must be a nonzero quaternion (w, x, y, z)")


def mocap_to_base(frame: MocapFrame, pos_m, quat_m) -> tuple[np.ndarray, np.ndarray]:
    """Robot-base pose in W from the rigid body's streamed pose (``quat_m`` in (w, x, y, z))."""
    c = UP_AXIS_ROTATION[frame.up_axis]
    p_zr = quat_rotate(c, frame.scale * np.asarray(pos_m, float))
    q_zr = quat_mul(quat_mul(c, quat_normalize(quat_m)), quat_conj(c))
    q_wz = quat_normalize(frame.world_offset_quat)
    q_rb = quat_normalize(frame.body_offset_quat)
    pos = np.asarray(frame.world_offset_pos) + quat_rotate(
        q_wz, p_zr + quat_rotate(q_zr, frame.body_offset_pos))
    quat = quat_normalize(quat_mul(quat_mul(q_wz, q_zr), q_rb))
    return pos, quat


def base_to_mocap(frame: MocapFrame, pos_w, quat_w) -> tuple[np.ndarray, np.ndarray]:
    """The inverse of :func:`mocap_to_base`: what the mocap system streams for a base pose
    (used by the fake streamer)."""
    c = UP_AXIS_ROTATION[frame.up_axis]
    q_wz = quat_normalize(frame.world_offset_quat)
    q_rb = quat_normalize(frame.body_offset_quat)
    q_zr = quat_mul(quat_mul(quat_conj(q_wz), quat_normalize(quat_w)), quat_conj(q_rb))
    p_zr = (quat_rotate(quat_conj(q_wz), np.asarray(pos_w, float) - frame.world_offset_pos)
            - quat_rotate(q_zr, frame.body_offset_pos))
    pos_m = quat_rotate(quat_conj(c), p_zr) / frame.scale
    quat_m = quat_normalize(quat_mul(quat_mul(quat_conj(c), q_zr), c))
    return pos_m, quat_m
