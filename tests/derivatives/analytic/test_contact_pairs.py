"""Contact-Jacobian derivatives of contacts between two moving bodies (self-collisions) against
finite differences of MuJoCo's ``efc_J``: sphere-sphere, sphere-capsule and capsule-capsule,
in one kinematic tree and against a static sphere, every contact dimension, elliptic and
pyramidal cones, and the shipped Go1's self-contacts."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from analytic_oracles import (
    bundles,
    constraint_bundle,
    self_contact_model,
    self_contact_state,
    tangent_fd,
)

from derivatives.analytic.constraint import contact_rows
from derivatives.analytic.contact_jacobian import (
    CAPSULE,
    SPHERE,
    contact_jacobian_derivatives,
    contact_supported,
)

PAIRS = {"sphere-sphere": (SPHERE, SPHERE), "sphere-capsule": (SPHERE, CAPSULE),
         "capsule-capsule": (CAPSULE, CAPSULE)}


def derivatives_at(m, d, qacc, force):
    """(∂J/∂q) a, (∂J/∂q) v and ∂(Jᵀf)/∂q from the kernel, and its return value."""
    model, data = bundles(m, d, qacc=qacc)
    efc, out = constraint_bundle(m, d, force=force)
    contact_rows(data, efc)
    djtf = np.zeros((m.nv, m.nv))
    status = contact_jacobian_derivatives(model, data, efc, djtf)
    return out.dja, out.djv, djtf, status


def check_against_efc_j(m, d, seed=3):
    """Compare the kernel with centered differences of efc_J (all rows, no frame exemption:
    the turning frame of a self-contact is differentiated exactly)."""
    rng = np.random.default_rng(seed)
    nefc, nv = d.nefc, m.nv
    qacc = rng.standard_normal(nv)
    force = rng.standard_normal(nefc)
    dja, djv, djtf, status = derivatives_at(m, d, qacc, force)
    assert status == -1

    def jacobian(qpos):
        s = mujoco.MjData(m)
        s.qpos[:] = qpos
        mujoco.mj_fwdPosition(m, s)
        assert s.nefc == nefc and s.ncon == d.ncon
        return s.efc_J.reshape(nefc, nv).copy()

    dJ = tangent_fd(m, d.qpos, jacobian)
    scale = np.abs(dJ).max()
    contact = d.efc_type >= int(mujoco.mjtConstraint.mjCNSTR_CONTACT_FRICTIONLESS)
    for x, ours in ((qacc, dja), (d.qvel, djv)):
        fd = np.einsum("rkj,k->rj", dJ, x)
        np.testing.assert_allclose(ours[contact], fd[contact], rtol=0, atol=1e-7 * scale)
    np.testing.assert_allclose(djtf, np.einsum("rkj,r->kj", dJ, force), rtol=0,
                               atol=1e-7 * scale)


@pytest.mark.parametrize("pair", list(PAIRS))
@pytest.mark.parametrize("cone,condim", [("elliptic", 1), ("elliptic", 3), ("elliptic", 6),
                                         ("pyramidal", 4)])
def test_pair_derivatives_match_efc_j(pair, cone, condim):
    m = self_contact_model(cone, condim)
    d = self_contact_state(m, PAIRS[pair], seed=condim)
    check_against_efc_j(m, d)


def test_static_sphere_against_a_moving_geom():
    """One side without dofs: the world's sphere."""
    m = self_contact_model("pyramidal", 3)
    check_against_efc_j(m, self_contact_state(m, (SPHERE, SPHERE), world=True))
    check_against_efc_j(m, self_contact_state(m, (SPHERE, CAPSULE), world=True))


def test_supported_pairs_include_round_pairs():
    types = np.array([SPHERE, CAPSULE, 6, 5], dtype=np.int64)  # sphere, capsule, box, cylinder
    static = np.zeros(4, dtype=np.int64)
    assert contact_supported(types, static, 0, 0)
    assert contact_supported(types, static, 0, 1)
    assert contact_supported(types, static, 1, 1)
    assert not contact_supported(types, static, 0, 2)  # sphere-box
    assert not contact_supported(types, static, 1, 3)  # capsule-cylinder
