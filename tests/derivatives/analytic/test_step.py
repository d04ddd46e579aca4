"""Whole-step Jacobians A, B against centered ``mjd_transitionFD`` (Newton, tolerance 1e-12).

The accuracy matrix of the issue: the project models and the reference descriptions (meshes
removed; A1, Go1, Go2 elliptic, H1 pyramidal) at the reference states of
``tests/analytic_verify.py``, with Euler and implicitfast. Every case must use the closed
form (no finite-difference evaluation) and agree to a relative Frobenius error of 1e-5 (the
method reaches 1e-8..1e-10; the oracle's own error dominates).
"""

from __future__ import annotations

import warnings

import analytic_verify as verify
import mujoco
import numpy as np
import pytest
from analytic_oracles import contact_zoo_model
from reference_models import load_reference

import derivatives
import robots
from derivatives.analytic.step import so3_blocks

TOLERANCE = 1e-5
INTEGRATORS = ["euler", "implicitfast"]
MODELS = [f"project-{r}" for r in robots.available()] + [
    f"reference-{r}" for r in ("a1", "go1", "go2", "h1")]
_cache: dict[str, mujoco.MjModel] = {}


def load(name: str) -> mujoco.MjModel:
    if name not in _cache:
        kind, robot = name.split("-")
        _cache[name] = robots.load_model(robot) if kind == "project" else load_reference(robot)
    return _cache[name]


def analytic_vs_oracle(m: mujoco.MjModel, d: mujoco.MjData):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # uncovered self-collision pairs are announced
        provider = derivatives.make_provider("analytic", m, threads=1)
    assert not provider.fallback
    before = derivatives.fd_evaluations()
    A, B = provider.transition(d)
    assert derivatives.fd_evaluations() == before, "a finite-difference fallback was used"
    A_ref, B_ref = verify.centered_fd(m, d)
    return verify.relative_error(A, A_ref), verify.relative_error(B, B_ref)


@pytest.mark.parametrize("integrator", INTEGRATORS)
@pytest.mark.parametrize("state", verify.STATES)
@pytest.mark.parametrize("name", MODELS)
def test_accuracy_matrix(name, state, integrator):
    m = verify.oracle_model(load(name), integrator)
    d = verify.reference_state(m, state)
    assert verify.contacts_covered(m, d) and d.ncon > 0
    assert verify.is_smooth(m, d)  # the oracle is meaningful here
    err_a, err_b = analytic_vs_oracle(m, d)
    assert err_a <= TOLERANCE and err_b <= TOLERANCE, (err_a, err_b)


def zoo_data(m: mujoco.MjModel, case: str, ctrl: float = 0.2) -> mujoco.MjData:
    d = mujoco.MjData(m)
    d.qpos[2] -= 0.002
    d.qpos[7] = {"resting": 0.1, "sliding": 0.1, "limit": 0.305}[case]
    rng = np.random.default_rng(4)
    d.qvel[:] = 0.01 * rng.standard_normal(m.nv)
    if case == "sliding":
        d.qvel[0] = 0.3
    d.ctrl[0] = ctrl
    verify.settle_solver(m, d)
    return d


@pytest.mark.parametrize("integrator", INTEGRATORS)
@pytest.mark.parametrize("case", ["resting", "sliding", "limit"])
@pytest.mark.parametrize("cone", ["elliptic", "pyramidal"])
def test_contact_zoo(cone, case, integrator):
    """Every contact dimension, capsule ends, a box corner, frictionloss, a joint limit and a
    position servo with velocity gain (which implicitfast integrates implicitly)."""
    m = verify.oracle_model(contact_zoo_model(cone), integrator)
    d = zoo_data(m, case)
    assert verify.is_smooth(m, d)
    err_a, err_b = analytic_vs_oracle(m, d)
    assert err_a <= TOLERANCE and err_b <= TOLERANCE, (err_a, err_b)


def test_implicitfast_differs_from_euler_on_the_zoo():
    """The zoo's servo has kv > 0, so the two integrators really differ (the test above is
    not the same test twice)."""
    results = []
    for integrator in INTEGRATORS:
        m = verify.oracle_model(contact_zoo_model(), integrator)
        results.append(verify.centered_fd(m, zoo_data(m, "resting"))[0])
    assert verify.relative_error(results[0], results[1]) > 1e-3


@pytest.mark.parametrize("flag", ["mjDSBL_EULERDAMP", "mjDSBL_GRAVITY", "mjDSBL_SPRING",
                                  "mjDSBL_CLAMPCTRL", "mjDSBL_FRICTIONLOSS"])
def test_disable_flags(flag):
    m = verify.oracle_model(contact_zoo_model(), "euler")
    m.jnt_stiffness[1] = 3.0
    m.opt.disableflags |= int(getattr(mujoco.mjtDisableBit, flag))
    # outside the control range: clamped unless clamping is disabled
    d = zoo_data(m, "resting", ctrl=1.5 if flag == "mjDSBL_CLAMPCTRL" else 0.2)
    err_a, err_b = analytic_vs_oracle(m, d)
    assert err_a <= TOLERANCE and err_b <= TOLERANCE, (err_a, err_b)


def test_free_flight_with_ball_and_slide():
    """No contacts: a free chain with hinge, ball and slide joints and an off-origin anchor."""
    from analytic_oracles import floating_chain_model

    m = verify.oracle_model(floating_chain_model(), "euler")
    d = mujoco.MjData(m)
    d.qpos[2] = 2.0
    d.qvel[:] = np.random.default_rng(5).standard_normal(m.nv)
    mujoco.mj_forward(m, d)
    assert d.ncon == 0 and m.nu == 0
    err_a, _ = analytic_vs_oracle(m, d)
    assert err_a <= TOLERANCE, err_a


@pytest.mark.parametrize("theta", [(0.0, 0.0, 0.0), (1e-6, -2e-6, 3e-7), (0.3, -0.2, 0.5),
                                   (2.0, 1.0, -1.5)])
def test_so3_blocks_match_mjd_quatIntegrate(theta):  # noqa: N802
    theta = np.array(theta)
    rot, jac = np.zeros((3, 3)), np.zeros((3, 3))
    so3_blocks(theta, rot, jac)
    dquat, dvel, dscale = np.zeros(9), np.zeros(9), np.zeros(3)
    mujoco.mjd_quatIntegrate(theta, 1.0, dquat, dvel, dscale)
    np.testing.assert_allclose(rot, dquat.reshape(3, 3), rtol=0, atol=1e-12)
    np.testing.assert_allclose(jac, dvel.reshape(3, 3), rtol=0, atol=1e-12)


LONE = {
    "sphere": '<geom type="sphere" size=".03" pos=".02 .01 -.05" mass="1"/>',
    "capsule": '<geom type="capsule" size=".02" fromto="0 0 -.08 .03 .01 .08" mass="1"/>',
    "box": '<geom type="box" size=".04 .03 .02" euler="10 20 30" mass="1"/>',
}


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("cone", ["elliptic", "pyramidal"])
@pytest.mark.parametrize("shape", list(LONE))
def test_lone_body_at_random_poses(shape, cone, seed):
    """A single body dropped on the floor in random poses and velocities: configurations where
    Jacobian entries vanish by symmetry, which structured robots rarely produce. The step is
    not twice differentiable at every such pose, so the oracle uses a small step (1e-8)."""
    m = verify.oracle_model(mujoco.MjModel.from_xml_string(f"""
<mujoco>
  <option cone="{cone}"/>
  <worldbody>
    <geom type="plane" size="5 5 .1"/>
    <body pos="0 0 .3"><freejoint/>{LONE[shape]}</body>
  </worldbody>
</mujoco>"""), "euler")
    rng = np.random.default_rng(seed)
    d = mujoco.MjData(m)
    quat = rng.standard_normal(4)
    d.qpos[3:7] = quat / np.linalg.norm(quat)
    mujoco.mj_forward(m, d)
    d.qpos[2] -= mujoco.mj_geomDistance(m, d, 0, 1, 1.0, None) + 0.002
    d.qvel[:] = 0.2 * rng.standard_normal(6)
    verify.settle_solver(m, d)
    assert d.ncon > 0 and verify.is_smooth(m, d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        provider = derivatives.make_provider("analytic", m, threads=1)
    A, _ = provider.transition(d)
    A_ref = verify.centered_fd(m, d, eps=1e-8)[0]
    assert verify.relative_error(A, A_ref) <= TOLERANCE


@pytest.mark.parametrize("cone", ["elliptic", "pyramidal"])
def test_sphere_under_its_centre_of_mass(cone):
    """A sphere carrying all the mass of a tilted, spinning body: Jacobian rows vanish on
    rotation columns where their configuration derivatives do not (a regression: the sparse
    constraint products once skipped those columns, 3% error in A)."""
    m = verify.oracle_model(mujoco.MjModel.from_xml_string(f"""
<mujoco>
  <option cone="{cone}"/>
  <worldbody>
    <geom type="plane" size="5 5 .1"/>
    <body pos="0 0 .1">
      <freejoint/>
      <geom type="sphere" size=".02" pos="0 0 -.08" mass="1"/>
      <geom type="capsule" size=".02" fromto="0 0 -.04 0 0 .08" mass="0" contype="0"
            conaffinity="0"/>
    </body>
  </worldbody>
</mujoco>"""), "euler")
    d = mujoco.MjData(m)
    d.qpos[3:7] = (np.cos(0.2), np.sin(0.2), 0.0, 0.0)
    mujoco.mj_forward(m, d)
    d.qpos[2] -= mujoco.mj_geomDistance(m, d, 0, 1, 1.0, None) + 0.001
    d.qvel[:] = 0.1 * np.random.default_rng(0).standard_normal(6)
    verify.settle_solver(m, d)
    assert d.ncon == 1 and verify.is_smooth(m, d)
    provider = derivatives.make_provider("analytic", m, threads=1)
    A, _ = provider.transition(d)
    assert verify.relative_error(A, verify.centered_fd(m, d, eps=1e-8)[0]) <= TOLERANCE
