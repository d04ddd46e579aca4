"""Tangent-space arithmetic against MuJoCo's own mj_differentiatePos / mj_integratePos."""

import mujoco
import numpy as np
import pytest

from common.trajectory import ModelLayout
from mpc.planner.kernels.tangent import (
    differentiate_pos,
    interpolate_pos,
    state_difference,
)


def random_qpos(model, rng, scale=1.0):
    """A configuration with random joint values and unit quaternions."""
    d = mujoco.MjData(model)
    dq = scale * rng.standard_normal(model.nv)
    mujoco.mj_integratePos(model, d.qpos, dq, 1.0)
    return d.qpos.copy()


def test_differentiate_matches_mujoco(floating_model, rng):
    lay = ModelLayout.of(floating_model)
    for _ in range(20):
        q1 = random_qpos(floating_model, rng)
        q2 = random_qpos(floating_model, rng)
        expected = np.zeros(floating_model.nv)
        mujoco.mj_differentiatePos(floating_model, expected, 1.0, q1, q2)
        out = np.zeros(floating_model.nv)
        differentiate_pos(lay.jnt_type, lay.jnt_qposadr, lay.jnt_dofadr, q2, q1, out)
        np.testing.assert_allclose(out, expected, atol=1e-12)


def test_differentiate_inverts_integrate(floating_model, rng):
    lay = ModelLayout.of(floating_model)
    q = random_qpos(floating_model, rng)
    dq = 0.5 * rng.standard_normal(floating_model.nv)
    q2 = q.copy()
    mujoco.mj_integratePos(floating_model, q2, dq, 1.0)
    back = np.zeros(floating_model.nv)
    differentiate_pos(lay.jnt_type, lay.jnt_qposadr, lay.jnt_dofadr, q2, q, back)
    np.testing.assert_allclose(back, dq, atol=1e-10)


def test_quaternion_difference_is_body_frame_rotation_vector():
    """Rotating a yawed body by 0.3 rad about its own x axis shows up as [0.3, 0, 0]."""
    model = mujoco.MjModel.from_xml_string(
        "<mujoco><worldbody><body><freejoint/><geom size='.1'/></body></worldbody></mujoco>")
    lay = ModelLayout.of(model)
    yaw = np.array([np.cos(0.4), 0, 0, np.sin(0.4)])
    roll = np.array([np.cos(0.15), np.sin(0.15), 0, 0])
    q1 = np.concatenate([[1, 2, 3], yaw])
    q2 = np.concatenate([[1, 2, 3], np.zeros(4)])
    mujoco.mju_mulQuat(q2[3:], yaw, roll)
    out = np.zeros(6)
    differentiate_pos(lay.jnt_type, lay.jnt_qposadr, lay.jnt_dofadr, q2, q1, out)
    np.testing.assert_allclose(out, [0, 0, 0, 0.3, 0, 0], atol=1e-12)


def test_angle_wraps_to_shortest_rotation():
    """q and -q are the same rotation: the difference is zero, not 2π."""
    model = mujoco.MjModel.from_xml_string(
        "<mujoco><worldbody><body><freejoint/><geom size='.1'/></body></worldbody></mujoco>")
    lay = ModelLayout.of(model)
    q = np.array([0, 0, 0, 0.6, 0.8, 0, 0])
    q_neg = q.copy()
    q_neg[3:] *= -1
    out = np.zeros(6)
    differentiate_pos(lay.jnt_type, lay.jnt_qposadr, lay.jnt_dofadr, q_neg, q, out)
    np.testing.assert_allclose(out, 0, atol=1e-12)


@pytest.mark.parametrize("w", [0.0, 0.25, 1.0])
def test_interpolation_is_on_the_geodesic_ends(floating_model, rng, w):
    lay = ModelLayout.of(floating_model)
    q1 = random_qpos(floating_model, rng, 0.3)
    q2 = random_qpos(floating_model, rng, 0.3)
    out = np.zeros_like(q1)
    interpolate_pos(lay.jnt_type, lay.jnt_qposadr, q1, q2, w, out)
    if w in (0.0, 1.0):
        np.testing.assert_allclose(out, q1 if w == 0.0 else q2, atol=1e-12)
    # quaternions stay unit length
    for j, t in enumerate(lay.jnt_type):
        if t in (0, 1):
            a = lay.jnt_qposadr[j] + (3 if t == 0 else 0)
            assert abs(np.linalg.norm(out[a : a + 4]) - 1) < 1e-12


def test_state_difference_layout(floating_model, rng):
    """(dq, dv, dact) in the order of mjd_transitionFD's state columns."""
    lay = ModelLayout.of(floating_model)
    q1, q2 = random_qpos(floating_model, rng), random_qpos(floating_model, rng)
    v1, v2 = rng.standard_normal(floating_model.nv), rng.standard_normal(floating_model.nv)
    out = np.zeros(lay.nx)
    state_difference(lay.jnt_type, lay.jnt_qposadr, lay.jnt_dofadr, q2, v2, np.zeros(0), q1,
                     v1, np.zeros(0), out)
    dq = np.zeros(floating_model.nv)
    mujoco.mj_differentiatePos(floating_model, dq, 1.0, q1, q2)
    np.testing.assert_allclose(out, np.concatenate([dq, v2 - v1]), atol=1e-12)
