"""ZYX Euler angles of a quaternion, against rotations composed about the axes."""

import numpy as np
import pytest

from hardware.rotations import euler_zyx, quat_exp, quat_mul


def test_euler_angles_recover_the_composed_rotation():
    roll, pitch, yaw = 0.3, -0.4, 2.5
    q = quat_mul(quat_exp([0, 0, yaw]), quat_mul(quat_exp([0, pitch, 0]), quat_exp([roll, 0, 0])))
    assert euler_zyx(q) == pytest.approx((roll, pitch, yaw), abs=1e-12)
    assert euler_zyx(3.0 * q) == pytest.approx((roll, pitch, yaw), abs=1e-12)  # normalized first


def test_gimbal_lock_stays_finite():
    q = quat_exp([0, np.pi / 2, 0])
    assert np.all(np.isfinite(euler_zyx(q * (1 + 1e-15))))
    assert euler_zyx(q)[1] == pytest.approx(np.pi / 2)
