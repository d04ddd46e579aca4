"""Mocap axis conventions, quaternion orders and fixed offsets."""

from __future__ import annotations

import numpy as np
import pytest

from hardware.mocap.frames import (
    MocapFrame,
    base_to_mocap,
    mocap_to_base,
    wxyz_to_xyzw,
    xyzw_to_wxyz,
)
from hardware.rotations import quat_angle, quat_exp, quat_normalize, quat_rotate


def test_quaternion_orders():
    q = np.array([0.1, 0.2, 0.3, 0.9])  # (x, y, z, w) as NatNet streams it
    np.testing.assert_array_equal(xyzw_to_wxyz(q), [0.9, 0.1, 0.2, 0.3])
    np.testing.assert_array_equal(wxyz_to_xyzw(xyzw_to_wxyz(q)), q)


def test_y_up_stream_becomes_z_up():
    frame = MocapFrame(up_axis="y")
    # Standing 0.3 m tall (Motive's y), 1 m along x, 2 m along Motive's +z (towards the viewer).
    pos, quat = mocap_to_base(frame, [1.0, 0.3, 2.0], [1.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(pos, [1.0, -2.0, 0.3], atol=1e-12)
    np.testing.assert_allclose(quat, [1.0, 0.0, 0.0, 0.0], atol=1e-12)
    # A turn about Motive's up axis (y) is a yaw about z; the body's own up stays up.
    turn_y = quat_exp([0.0, 0.7, 0.0])
    _, quat = mocap_to_base(frame, [0.0, 0.0, 0.0], turn_y)
    assert quat_angle(quat, quat_exp([0.0, 0.0, 0.7])) < 1e-12
    np.testing.assert_allclose(quat_rotate(quat, [0.0, 0.0, 1.0]), [0.0, 0.0, 1.0], atol=1e-12)


def test_z_up_millimetres_stream():
    frame = MocapFrame(up_axis="z", scale=0.001)
    pos, quat = mocap_to_base(frame, [1000.0, -500.0, 300.0], quat_exp([0.0, 0.0, 0.3]))
    np.testing.assert_allclose(pos, [1.0, -0.5, 0.3])
    assert quat_angle(quat, quat_exp([0.0, 0.0, 0.3])) < 1e-12


def test_offsets():
    # Mocap origin 2 m along the robot world's x and turned 90 degrees about z; marker pivot
    # 0.1 m above the base origin.
    frame = MocapFrame(up_axis="z", world_offset_pos=(2.0, 0.0, 0.0),
                       world_offset_quat=tuple(quat_exp([0.0, 0.0, np.pi / 2])),
                       body_offset_pos=(0.0, 0.0, -0.1))
    pos, quat = mocap_to_base(frame, [1.0, 0.0, 0.5], [1.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(pos, [2.0, 1.0, 0.4], atol=1e-12)
    assert quat_angle(quat, quat_exp([0.0, 0.0, np.pi / 2])) < 1e-12


@pytest.mark.parametrize("up_axis", ["y", "z"])
def test_round_trip_with_arbitrary_offsets(up_axis, rng):
    frame = MocapFrame(up_axis=up_axis, scale=0.001,
                       world_offset_pos=tuple(rng.normal(size=3)),
                       world_offset_quat=tuple(quat_normalize(rng.normal(size=4))),
                       body_offset_pos=tuple(0.1 * rng.normal(size=3)),
                       body_offset_quat=tuple(quat_normalize(rng.normal(size=4))))
    for _ in range(20):
        pos, quat = rng.normal(size=3), quat_normalize(rng.normal(size=4))
        pos_m, quat_m = base_to_mocap(frame, pos, quat)
        back_pos, back_quat = mocap_to_base(frame, pos_m, quat_m)
        np.testing.assert_allclose(back_pos, pos, atol=1e-9)
        assert quat_angle(back_quat, quat) < 1e-9


def test_bad_frame_settings():
    with pytest.raises(ValueError, match="up_axis"):
        MocapFrame(up_axis="x")
    with pytest.raises(ValueError, match="body_offset_quat"):
        MocapFrame(body_offset_quat=(0.0, 0.0, 0.0, 0.0))
