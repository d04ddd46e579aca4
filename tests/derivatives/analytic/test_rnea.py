"""RNEA and its derivatives against mj_rne, finite differences of mj_rne and Pinocchio."""

from __future__ import annotations

import mujoco
import numpy as np
import pinocchio as pin
import pytest
from analytic_oracles import (
    bundles,
    floating_chain_model,
    mj_rne_at,
    random_state,
    single_joint_chain_model,
    tangent_fd,
    vector_fd,
)

import robots
from derivatives.analytic.rnea import rnea, rnea_derivatives

MODELS = {"a1": lambda: robots.load_model("a1"), "h1": lambda: robots.load_model("h1"),
          "chain": floating_chain_model}


@pytest.fixture(params=list(MODELS))
def model(request):
    return MODELS[request.param]()


def derivatives_at(m, d, qacc, x):
    nv = m.nv
    dq, dmx, dv = np.zeros((nv, nv)), np.zeros((nv, nv)), np.zeros((nv, nv))
    rnea_derivatives(*bundles(m, d, qacc=qacc), x, dq, dmx, dv)
    return dq, dmx, dv


def test_rnea_matches_mj_rne(model, rng):
    d = random_state(model, rng)
    qacc = rng.standard_normal(model.nv)
    *_, tau = rnea(*bundles(model, d, qacc=qacc))
    expected = mj_rne_at(model, d.qpos, d.qvel, qacc)
    np.testing.assert_allclose(tau, expected, rtol=0, atol=1e-12 * np.abs(expected).max())


def test_configuration_derivative_matches_finite_differences(model, rng):
    d = random_state(model, rng)
    qacc = rng.standard_normal(model.nv)
    dq, _, _ = derivatives_at(model, d, qacc, np.zeros(model.nv))
    fd = tangent_fd(model, d.qpos, lambda q: mj_rne_at(model, q, d.qvel, qacc))
    assert np.abs(fd).max() > 0.1
    np.testing.assert_allclose(dq, fd, rtol=0, atol=1e-7 * np.abs(fd).max())


def test_mass_matrix_derivative_matches_finite_differences(model, rng):
    d = random_state(model, rng)
    x = rng.standard_normal(model.nv)
    _, dmx, _ = derivatives_at(model, d, rng.standard_normal(model.nv), x)
    zero = np.zeros(model.nv)
    fd = tangent_fd(model, d.qpos, lambda q: mj_rne_at(model, q, zero, x, gravity=False))
    assert np.abs(fd).max() > 0.1
    np.testing.assert_allclose(dmx, fd, rtol=0, atol=1e-7 * np.abs(fd).max())


def test_velocity_derivative_matches_finite_differences(model, rng):
    d = random_state(model, rng)
    qacc = rng.standard_normal(model.nv)
    _, _, dv = derivatives_at(model, d, qacc, np.zeros(model.nv))
    fd = vector_fd(d.qvel.copy(), lambda v: mj_rne_at(model, d.qpos, v, qacc))
    assert np.abs(fd).max() > 0.1
    np.testing.assert_allclose(dv, fd, rtol=0, atol=1e-7 * np.abs(fd).max())


def test_free_translation_columns_vanish(rng):
    """The skipped columns really are zero (translation and Galilean invariance)."""
    m = robots.load_model("a1")
    d = random_state(m, rng)
    qacc = rng.standard_normal(m.nv)
    fd_q = tangent_fd(m, d.qpos, lambda q: mj_rne_at(m, q, d.qvel, qacc))
    fd_v = vector_fd(d.qvel.copy(), lambda v: mj_rne_at(m, d.qpos, v, qacc))
    scale = np.abs(fd_q).max()
    assert np.abs(fd_q[:, :3]).max() < 1e-8 * scale
    assert np.abs(fd_v[:, :3]).max() < 1e-8 * scale


# --- Pinocchio ---------------------------------------------------------------------------------


def _quat_matrix(q):
    R = np.zeros(9)
    mujoco.mju_quat2Mat(R, np.asarray(q, dtype=float))
    return R.reshape(3, 3)


def pinocchio_model(m: mujoco.MjModel):
    """The kinematic tree of ``m`` (one joint per body) as a Pinocchio model.

    Pinocchio places each joint frame at MuJoCo's joint anchor, so offsets ``jnt_pos`` shift
    the joint placement, the body inertia and the children's placements.
    """
    pm = pin.Model()
    pm.gravity = pin.Motion(np.r_[m.opt.gravity, 0.0, 0.0, 0.0])
    joint_of = {0: 0}
    offset = {0: np.zeros(3)}
    for b in range(1, m.nbody):
        assert m.body_jntnum[b] == 1
        j = m.body_jntadr[b]
        parent = m.body_parentid[b]
        anchor = m.jnt_pos[j].copy()
        placement = pin.SE3(_quat_matrix(m.body_quat[b]),
                            m.body_pos[b] - offset[parent]
                            + _quat_matrix(m.body_quat[b]) @ anchor)
        axis = m.jnt_axis[j].copy()
        kind = m.jnt_type[j]
        if kind == mujoco.mjtJoint.mjJNT_FREE:
            joint = pin.JointModelFreeFlyer()
        elif kind == mujoco.mjtJoint.mjJNT_BALL:
            joint = pin.JointModelSpherical()
        elif kind == mujoco.mjtJoint.mjJNT_HINGE:
            joint = pin.JointModelRevoluteUnaligned(axis)
        else:
            joint = pin.JointModelPrismaticUnaligned(axis)
        jid = pm.addJoint(joint_of[parent], joint, placement, f"j{b}")
        Ri = _quat_matrix(m.body_iquat[b])
        inertia = pin.Inertia(m.body_mass[b], m.body_ipos[b] - anchor,
                              Ri @ np.diag(m.body_inertia[b]) @ Ri.T)
        pm.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
        joint_of[b] = jid
        offset[b] = anchor
    return pm


def _to_pinocchio(m, qpos, qvel, qacc):
    """Pinocchio's (q, v, a) of a MuJoCo state whose first joint is free.

    Pinocchio's base velocity is in the body frame, MuJoCo's linear one in the world frame, so
    a_lin(pin) = Rᵀ a_lin − ω × Rᵀ v_lin. Ball quaternions become (x, y, z, w).
    """
    q, v, a = [], qvel.copy(), qacc.copy()
    R = _quat_matrix(qpos[3:7])
    for j in range(m.njnt):
        adr = m.jnt_qposadr[j]
        if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            q += [*qpos[adr : adr + 3], *qpos[adr + 4 : adr + 7], qpos[adr + 3]]
        elif m.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL:
            q += [*qpos[adr + 1 : adr + 4], qpos[adr]]
        else:
            q.append(qpos[adr])
    v[:3] = R.T @ qvel[:3]
    a[:3] = R.T @ qacc[:3] - np.cross(qvel[3:6], v[:3])
    return np.array(q), v, a, R


def _skew(x):
    return np.array([[0, -x[2], x[1]], [x[2], 0, -x[0]], [-x[1], x[0], 0]])


def pinocchio_dtau_dq(m, qpos, qvel, qacc):
    """∂τ/∂q in MuJoCo's conventions from ``computeRNEADerivatives``.

    With τ_mj = P τ_pin (P = diag(R, I)), Pinocchio's tangent δ_pin = (Rᵀ δp, δθ, ...) and the
    base velocity and acceleration of Pinocchio depending on R, the chain rule gives the
    translation columns P ∂τ/∂q_pin Rᵀ and the base-rotation columns
    P (∂τ/∂θ + ∂τ/∂v_lin [Rᵀv]ₓ + M_lin ([Rᵀa]ₓ − [ω]ₓ[Rᵀv]ₓ)) − [R [τ_lin]ₓ; 0].
    """
    pm = pinocchio_model(m)
    pd = pm.createData()
    q, v, a, R = _to_pinocchio(m, qpos, qvel, qacc)
    dq, dv, M = pin.computeRNEADerivatives(pm, pd, q, v, a)
    M = np.triu(M) + np.triu(M, 1).T
    tau = pin.rnea(pm, pd, q, v, a)
    P = np.eye(m.nv)
    P[:3, :3] = R
    out = P @ dq
    out[:, :3] = P @ dq[:, :3] @ R.T
    rv, ra, w = R.T @ qvel[:3], R.T @ qacc[:3], qvel[3:6]
    rot = dq[:, 3:6] + dv[:, :3] @ _skew(rv) + M[:, :3] @ (_skew(ra) - _skew(w) @ _skew(rv))
    out[:, 3:6] = P @ rot
    out[:3, 3:6] -= R @ _skew(tau[:3])
    return out


@pytest.mark.parametrize("name", ["a1", "h1", "single_chain"])
def test_configuration_derivative_matches_pinocchio(name, rng):
    m = single_joint_chain_model() if name == "single_chain" else MODELS[name]()
    m.opt.gravity[:] = (0.3, -0.2, -9.81)
    d = random_state(m, rng)
    qacc = rng.standard_normal(m.nv)
    dq, _, _ = derivatives_at(m, d, qacc, np.zeros(m.nv))
    expected = pinocchio_dtau_dq(m, d.qpos, d.qvel, qacc)
    # the conversion is exact: agreement at rounding level
    np.testing.assert_allclose(dq, expected, rtol=0, atol=1e-11 * np.abs(expected).max())
