"""Contact-Jacobian derivatives against finite differences of MuJoCo's ``efc_J``.

``efc_J`` after ``mj_fwdPosition`` at perturbed configurations is the oracle for (∂J/∂q) a,
(∂J/∂q) v and ∂(Jᵀf)/∂q: spheres of every contact dimension, capsule ends (whose friction frame
turns with the capsule: pyramidal cones see it), box corners, elliptic and pyramidal cones.
"""

from __future__ import annotations

import analytic_verify as verify
import mujoco
import numpy as np
import pytest
from analytic_oracles import (
    bundles,
    constraint_bundle,
    constraint_jacobian_fd,
    contact_zoo_model,
    tangent_fd,
)
from reference_models import load_reference

import robots
from derivatives.analytic.constraint import contact_rows
from derivatives.analytic.contact_jacobian import (
    BOX,
    CAPSULE,
    SPHERE,
    contact_jacobian_derivatives,
    contact_supported,
)


def zoo(cone):
    m = contact_zoo_model(cone)
    d = mujoco.MjData(m)
    d.qpos[2] -= 0.002
    return m, d


def a1_sliding(cone):
    m = robots.load_model("a1")
    m.opt.cone = mujoco.mjtCone.mjCONE_PYRAMIDAL if cone == "pyramidal" else m.opt.cone
    return m, verify.reference_state(m, "sliding")


def h1_reference():
    m = load_reference("h1")
    return m, verify.reference_state(m, "fast_rotation")


CASES = {
    "zoo-elliptic": lambda: zoo("elliptic"),
    "zoo-pyramidal": lambda: zoo("pyramidal"),
    "a1-elliptic": lambda: a1_sliding("elliptic"),
    "a1-pyramidal": lambda: a1_sliding("pyramidal"),
    "h1-reference-pyramidal": h1_reference,
}


def analytic(m, d, qacc, force):
    nv = m.nv
    model, data = bundles(m, d, qacc=qacc)
    efc, out = constraint_bundle(m, d, force=force)
    contact_rows(data, efc)
    djtf = np.zeros((nv, nv))
    contact_jacobian_derivatives(model, data, efc, djtf)
    return out.dja, out.djv, djtf


def turning_rows(m, d):
    """Tangent rows of isotropic elliptic contacts on capsules: MuJoCo turns their frame with the
    capsule, which such a cone cannot feel, so the kernel holds it fixed. Only rotation-invariant
    combinations of these rows are comparable with MuJoCo's ``efc_J``."""
    rows = []
    for c in range(d.ncon):
        a, n = d.contact.efc_address[c], d.contact.dim[c]
        if (d.efc_type[a] == mujoco.mjtConstraint.mjCNSTR_CONTACT_ELLIPTIC and n > 1
                and m.geom_type[d.contact.geom[c, 1]] == CAPSULE):
            rows.append([a + 1, a + 2])
            if n == 6:
                rows.append([a + 4, a + 5])
    return rows


@pytest.mark.parametrize("case", list(CASES))
def test_contact_jacobian_derivatives_match_efc_j(case):
    m, d = CASES[case]()
    rng = np.random.default_rng(2)
    d.qvel[:] = rng.standard_normal(m.nv)
    mujoco.mj_forward(m, d)
    nefc, nv = d.nefc, m.nv
    assert d.ncon > 0
    pairs = turning_rows(m, d)
    turning = np.zeros(nefc, dtype=bool)
    turning[np.array(pairs, dtype=int).ravel()] = True
    qacc = rng.standard_normal(nv)
    force = np.where(turning, 0.0, rng.standard_normal(nefc))
    dja, djv, djtf = analytic(m, d, qacc, force)

    J = d.efc_J.reshape(nefc, nv)
    dJ = constraint_jacobian_fd(m, d)  # (nefc, nv, nv): ∂J/∂q_j in the last axis
    direct = (d.efc_type >= 5) & ~turning
    scale = np.abs(dJ).max()
    for x, ours in ((qacc, dja), (d.qvel, djv)):
        fd = np.einsum("rkj,k->rj", dJ, x)
        np.testing.assert_allclose(ours[direct], fd[direct], rtol=0, atol=1e-7 * scale)
        # a turning pair: d/dq of ‖(J x)_pair‖² is frame invariant
        for pair in pairs:
            jx = J[pair] @ x
            np.testing.assert_allclose(jx @ ours[pair], jx @ fd[pair], rtol=0,
                                       atol=1e-7 * scale * (1 + np.abs(jx).sum()))
    np.testing.assert_allclose(djtf, np.einsum("rkj,r->kj", dJ, force), rtol=0,
                               atol=1e-7 * scale)
    if case == "zoo-elliptic":
        assert pairs, "the zoo's capsule must exercise the turning rows"


def test_capsule_frame_turns_with_the_capsule():
    """The pyramidal H1 feet would be wrong without the turning friction frame."""
    m, d = h1_reference()
    assert CAPSULE in m.geom_type[d.contact.geom[:, 1]]
    frame = d.contact.frame.copy()

    def tangent(qpos):
        s = mujoco.MjData(m)
        s.qpos[:] = qpos
        mujoco.mj_fwdPosition(m, s)
        return s.contact.frame[:, 3:6].copy()

    assert np.abs(tangent_fd(m, d.qpos, tangent)).max() > 0.1
    assert np.all(np.abs(frame[:, 0:3] - [0, 0, 1]) < 1e-12)


def test_supported_pairs():
    types = np.array([0, SPHERE, CAPSULE, BOX, 5], dtype=np.int64)  # plane ... cylinder
    static = np.array([1, 0, 0, 0, 0], dtype=np.int64)
    assert contact_supported(types, static, 0, 1)
    assert contact_supported(types, static, 0, 2)
    assert contact_supported(types, static, 0, 3)
    assert not contact_supported(types, static, 0, 4)  # cylinder
    assert not contact_supported(types, static, 1, 3)  # sphere-box
    moving_plane = np.array([0, 0, 0, 0, 0], dtype=np.int64)
    assert not contact_supported(types, moving_plane, 0, 1)
