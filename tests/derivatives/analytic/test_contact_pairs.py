"""Contact-Jacobian derivatives of contacts between two moving bodies (self-collisions) against
finite differences of MuJoCo's ``efc_J``: sphere-sphere, sphere-capsule and capsule-capsule,
in one kinematic tree and against a static sphere, every contact dimension, elliptic and
pyramidal cones, and the shipped Go1's self-contacts."""

from __future__ import annotations

import analytic_verify as verify
import mujoco
import numpy as np
import pytest
from analytic_oracles import (
    bundles,
    constraint_bundle,
    constraint_jacobian_fd,
    self_contact_model,
    self_contact_state,
)

import derivatives
import robots
from derivatives.analytic.constraint import contact_rows
from derivatives.analytic.contact_jacobian import (
    CAPSULE,
    GEOMETRY_OK,
    SPHERE,
    contact_jacobian_derivatives,
    contact_supported,
)
from mpc.tasks import make_task

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
    assert status == (GEOMETRY_OK, -1)

    dJ = constraint_jacobian_fd(m, d)
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


@pytest.fixture(scope="module")
def go1_self_collision():
    """The shipped Go1 planning model with self-collisions (as configs/go1_biped.yaml plans),
    under the oracle's solver settings."""
    task = make_task("quadruped_biped", robots.info("go1"))
    return verify.oracle_model(task.planning_model(0.01, self_collision=True))


@pytest.mark.parametrize("floor", [True, False])
def test_go1_self_contacts_stage_and_transition(go1_self_collision, floor):
    """Stage: the Go1's self-contact rows against efc_J differences; whole step: A, B against
    centered mjd_transitionFD at solver tolerance 1e-12, without any finite difference."""
    m = go1_self_collision
    d = verify.self_contact_state(m, seed=1, floor=floor)
    own = [i for i in range(d.ncon) if m.geom_bodyid[d.contact.geom[i, 0]] != 0]
    assert own and any(d.contact.efc_address[i] >= 0 for i in own)
    check_against_efc_j(m, d)
    before = derivatives.fd_evaluations()
    A, B = derivatives.make_provider("analytic", m, threads=1).transition(d)
    assert derivatives.fd_evaluations() == before
    A_ref, B_ref = verify.centered_fd(m, d)
    assert verify.relative_error(A, A_ref) < 1e-6
    assert verify.relative_error(B, B_ref) < 1e-6
