"""Constraint states, forces, Hessian and impedance terms against MuJoCo.

Oracles: ``mj_constraintUpdate`` (states, forces and, with ``flg_coneHessian``, the cone
Hessian ``contact.H``) at arbitrary accelerations, finite differences of its forces (the exact
Hessian is minus their Jacobian), and finite differences of ``efc_D``, ``efc_aref`` and
``efc_pos`` over the configuration.
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from analytic_oracles import bundles, constraint_bundle, contact_zoo_model, tangent_fd

from derivatives.analytic.constraint import (
    CONE,
    CONTACT_ELLIPTIC,
    LINEARNEG,
    LINEARPOS,
    QUADRATIC,
    SATISFIED,
    constraint_update,
    contact_rows,
    ift_terms,
    impedance_terms,
)

CONES = ["elliptic", "pyramidal"]


def zoo_state(cone: str, at_limit: bool = True):
    """The contact zoo pressed 2 mm into the floor, its hinge 5 mrad past the upper limit."""
    m = contact_zoo_model(cone)
    d = mujoco.MjData(m)
    d.qpos[2] -= 0.002
    if at_limit:
        d.qpos[7] = 0.305
    d.qvel[:] = 0.1 * np.random.default_rng(3).standard_normal(m.nv)
    mujoco.mj_forward(m, d)
    return m, d


def solved(m, d, qacc, **fields):
    """The constraint bundle and its arrays after contact_rows and constraint_update at
    ``qacc`` (friction scaled as the knot driver does; ``fields`` as
    :func:`constraint_bundle`)."""
    model, data = bundles(m, d, qacc=qacc)
    efc, out = constraint_bundle(
        m, d, contact_mu=d.contact.friction[:, 0] / np.sqrt(m.opt.impratio), **fields)
    contact_rows(data, efc)
    constraint_update(model, data, efc)
    return efc, out


def ours(m, d, qacc):
    _, out = solved(m, d, qacc)
    return out.jar, out.state, out.force, out.hessian, out.contact_adr, out.contact_dim


def mujoco_update(m, d, jar):
    """States, forces and cone Hessians from mj_constraintUpdate on a copy of d."""
    scratch = mujoco.MjData(m)
    mujoco.mj_copyData(scratch, m, d)
    cost = np.zeros(1)
    mujoco.mj_constraintUpdate(m, scratch, jar, cost, 1)
    return scratch


@pytest.mark.parametrize("cone", CONES)
def test_contact_rows_and_mu(cone):
    m, d = zoo_state(cone)
    *_, adr, dim = ours(m, d, d.qacc)
    np.testing.assert_array_equal(adr, d.contact.efc_address)
    np.testing.assert_array_equal(dim, d.contact.dim)
    frictional = d.contact.dim > 1
    mu = d.contact.friction[frictional, 0] / np.sqrt(m.opt.impratio)
    np.testing.assert_allclose(mu, d.contact.mu[frictional], rtol=1e-14)


@pytest.mark.parametrize("cone", CONES)
def test_states_forces_and_hessian_match_constraint_update(cone):
    m, d = zoo_state(cone)
    rng = np.random.default_rng(0)
    nefc = d.nefc
    seen = set()
    for scale in (0.0, 0.3, 3.0, 30.0, 300.0, 3000.0):
        for sample in range(20):
            qacc = (d.qacc if sample % 2 else 0.0) + scale * rng.standard_normal(m.nv)
            jar, state, force, hessian, adr, dim = ours(m, d, qacc)
            ref = mujoco_update(m, d, jar)
            np.testing.assert_array_equal(state, ref.efc_state)
            np.testing.assert_allclose(force, ref.efc_force, rtol=1e-12, atol=1e-12)
            expected = np.zeros((nefc, nefc))
            for r in range(nefc):
                if ref.efc_state[r] == QUADRATIC:
                    expected[r, r] = d.efc_D[r]
            for c in range(d.ncon):
                a, n = adr[c], dim[c]
                if d.efc_type[a] == CONTACT_ELLIPTIC and ref.efc_state[a] == CONE:
                    expected[a : a + n, a : a + n] = ref.contact[c].H[: n * n].reshape(n, n)
            np.testing.assert_allclose(hessian, expected, rtol=1e-12,
                                       atol=1e-12 * np.abs(expected).max())
            seen.update(int(s) for s in state)
    wanted = {SATISFIED, QUADRATIC, LINEARNEG, LINEARPOS}
    if cone == "elliptic":
        wanted.add(CONE)
    assert wanted <= seen


@pytest.mark.parametrize("cone", CONES)
def test_hessian_is_minus_the_force_jacobian(cone):
    """H = ∂²s/∂jar² = −∂f/∂jar, checked by differences of MuJoCo's forces."""
    m, d = zoo_state(cone)
    rng = np.random.default_rng(1)
    # an acceleration with cones in the cone state and pyramid edges in both states
    for _ in range(100):
        jar, state, _, hessian, *_ = ours(m, d, d.qacc + 0.3 * rng.standard_normal(m.nv))
        contact = state[d.efc_type >= 5]
        if (CONE in contact) if cone == "elliptic" else (0 < np.sum(contact) < contact.size):
            break
    else:
        pytest.fail("no acceleration put the contacts in the wanted states")
    eps = 1e-7
    fd = np.zeros_like(hessian)
    for i in range(d.nefc):
        plus, minus = jar.copy(), jar.copy()
        plus[i] += eps
        minus[i] -= eps
        fd[:, i] = -(mujoco_update(m, d, plus).efc_force - mujoco_update(m, d, minus).efc_force)
        fd[:, i] /= 2 * eps
    np.testing.assert_allclose(hessian, fd, rtol=0, atol=1e-6 * np.abs(fd).max())


@pytest.mark.parametrize("cone", CONES)
def test_impedance_terms_match_finite_differences(cone):
    m, d = zoo_state(cone)
    nefc = d.nefc
    efc, out = solved(m, d, d.qacc)
    adr = out.contact_adr
    impedance_terms(bundles(m, d)[1], efc)
    rho, kfac, pos_jac = out.rho, out.kfac, out.pos_jac
    assert np.count_nonzero(rho) > 0

    def at(qpos, field):
        s = mujoco.MjData(m)
        s.qpos[:], s.qvel[:] = qpos, d.qvel
        mujoco.mj_fwdPosition(m, s)
        mujoco.mj_fwdVelocity(m, s)
        assert s.nefc == nefc
        return getattr(s, field).reshape(nefc, -1).copy()

    dD = tangent_fd(m, d.qpos, lambda q: at(q, "efc_D")[:, 0])
    np.testing.assert_allclose(dD, d.efc_D[:, None] * rho[:, None] * pos_jac, rtol=0,
                               atol=1e-6 * np.abs(dD).max())
    dJv = tangent_fd(m, d.qpos, lambda q: at(q, "efc_J") @ d.qvel)
    daref = tangent_fd(m, d.qpos, lambda q: at(q, "efc_aref")[:, 0])
    B = d.efc_KBIP[:, 1]
    np.testing.assert_allclose(daref, -B[:, None] * dJv - kfac[:, None] * pos_jac, rtol=0,
                               atol=1e-6 * np.abs(daref).max())
    positional = (d.efc_type != CONTACT_ELLIPTIC) | np.isin(np.arange(nefc), adr)
    dpos = tangent_fd(m, d.qpos, lambda q: at(q, "efc_pos")[:, 0])
    np.testing.assert_allclose(dpos[positional], pos_jac[positional], rtol=0, atol=1e-8)


@pytest.mark.parametrize("cone", CONES)
def test_ift_terms_match_dense_products(cone):
    """JᵀHJ, Jᵀ(−H E + (f ρ) ⊙ dpos) and −(HJ)ᵀ diag(B) J against plain dense products, with
    random sparse dJ a, dJ v (the sparse visit must not drop any coupling)."""
    m, d = zoo_state(cone)
    nefc, nv = d.nefc, m.nv
    J = d.efc_J.reshape(nefc, nv)
    rng = np.random.default_rng(5)
    # nonzero where J is zero too: a row's Jacobian can vanish where its derivatives do not
    dja = rng.standard_normal((nefc, nv)) * (rng.random((nefc, nv)) < 0.5)
    djv = rng.standard_normal((nefc, nv)) * (rng.random((nefc, nv)) < 0.5)
    efc, out = solved(m, d, d.qacc + 0.3, dja=dja, djv=djv)
    data = bundles(m, d)[1]
    impedance_terms(data, efc)
    hessian, force, rho, kfac, pos_jac = out.hessian, out.force, out.rho, out.kfac, out.pos_jac
    assert np.any((dja != 0) & (J == 0) & (pos_jac == 0))
    system, rhs_q, rhs_v = np.zeros((nv, nv)), np.zeros((nv, nv)), np.zeros((nv, nv))
    ift_terms(data, efc, system, rhs_q, rhs_v)
    B = d.efc_KBIP[:, 1]
    E = dja + B[:, None] * djv + kfac[:, None] * pos_jac
    assert np.abs(hessian - np.diag(np.diag(hessian))).max() > 0 or cone == "pyramidal"
    np.testing.assert_allclose(system, J.T @ hessian @ J, rtol=0, atol=1e-12)
    np.testing.assert_allclose(rhs_q, J.T @ (-hessian @ E + (force * rho)[:, None] * pos_jac),
                               rtol=0, atol=1e-9)
    np.testing.assert_allclose(rhs_v, -(hessian @ J).T @ (B[:, None] * J), rtol=0, atol=1e-9)
