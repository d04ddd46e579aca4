"""The feature gate: covered models stay analytic, anything else falls back to finite
differences with one warning naming the feature, and never returns a wrong Jacobian."""

from __future__ import annotations

import warnings

import analytic_verify as verify
import mujoco
import numpy as np
import pytest

import derivatives
from derivatives.analytic import AnalyticFallbackWarning, gate
from derivatives.fd import transition_fd

BASE = """
<mujoco>
  <option {option}/>
  <worldbody>
    <geom type="plane" size="5 5 .1"/>
    <body pos="0 0 .03">
      <freejoint/>
      <geom type="sphere" size=".03" mass="1"/>
      <site name="s"/>
      <body pos=".1 0 0">
        <joint name="hinge" axis="0 1 0" {joint}/>
        <geom type="capsule" size=".01" fromto="0 0 0 .1 0 0" mass=".1" {geom}/>
      </body>
    </body>
  </worldbody>
  {extra}
</mujoco>"""

#: feature -> (model pieces, words the warning must contain)
UNSUPPORTED = {
    "rk4": ({"option": 'integrator="RK4"'}, "mjINT_RK4"),
    "implicit": ({"option": 'integrator="implicit"'}, "mjINT_IMPLICIT"),
    "equality": ({"extra": '<equality><joint joint1="hinge"/></equality>'},
                 "equality constraints"),
    "tendon": ({"extra": '<tendon><fixed name="t"><joint joint="hinge" coef="1"/></fixed>'
                         '</tendon>'}, "tendons"),
    "activation": ({"extra": '<actuator><position joint="hinge" kp="5" timeconst=".1"/>'
                             '</actuator>'}, "activations"),
    "accelerometer": ({"extra": '<sensor><accelerometer site="s"/></sensor>'},
                      "mjSENS_ACCELEROMETER"),
    "reference frame": ({"extra": '<sensor><framepos objtype="site" objname="s" '
                                  'reftype="body" refname="world"/></sensor>'},
                        "reference frame"),
    "noslip": ({"option": 'noslip_iterations="3"'}, "noslip"),
    "fluid": ({"option": 'density="1.2"'}, "fluid"),
    "muscle": ({"joint": 'range="-1 1"',
                "extra": '<actuator><muscle joint="hinge" lengthrange="-1 1"/></actuator>'},
               "mjDYN_MUSCLE"),
    "tendon frictionloss": ({"joint": 'frictionloss=".1"',
                             "extra": '<tendon><fixed><joint joint="hinge" coef="1"/></fixed>'
                                      '</tendon>'}, "tendons"),
}


def build(option: str = "", joint: str = "", geom: str = "", extra: str = "") -> mujoco.MjModel:
    return mujoco.MjModel.from_xml_string(
        BASE.format(option=option, joint=joint, geom=geom, extra=extra))


def state(m: mujoco.MjModel) -> mujoco.MjData:
    d = mujoco.MjData(m)
    d.qpos[2] -= 0.002
    d.qvel[:] = 0.1 * np.random.default_rng(0).standard_normal(m.nv)
    mujoco.mj_forward(m, d)
    return d


def test_covered_model_makes_no_warning(a1_task):
    _, model = a1_task
    with warnings.catch_warnings():
        warnings.simplefilter("error", AnalyticFallbackWarning)
        provider = derivatives.make_provider("analytic", model)
    assert not provider.fallback and provider.unsupported == []
    assert gate.unsupported_features(model) == []


@pytest.mark.parametrize("feature", list(UNSUPPORTED))
def test_unsupported_feature_falls_back_with_a_warning(feature):
    pieces, words = UNSUPPORTED[feature]
    m = build(**pieces)
    with pytest.warns(AnalyticFallbackWarning, match=words):
        provider = derivatives.make_provider("analytic", m)
    assert provider.fallback
    d = state(m)
    if feature == "rk4":  # mjd_transitionFD refuses RK4 too: an error, not a wrong Jacobian
        with pytest.raises(mujoco.FatalError, match="RK4"):
            provider.transition(d)
        return
    before = derivatives.fd_evaluations()
    A, B = provider.transition(d)
    assert derivatives.fd_evaluations() > before
    nx = 2 * m.nv + m.na
    A_ref, B_ref = np.zeros((nx, nx)), np.zeros((nx, m.nu))
    transition_fd(m, d, 1e-6, False, A_ref, B_ref)  # the fd backend's differences
    np.testing.assert_array_equal(A, A_ref)
    np.testing.assert_array_equal(B, B_ref)


def test_uncovered_contact_falls_back_at_that_knot_only():
    """A cylinder touching the floor: that knot by differences (named in the warning), a knot
    without it in closed form."""
    m = build(extra="").__class__.from_xml_string(BASE.format(
        option="", joint="", extra="",
        geom='contype="0" conaffinity="0"/><geom type="cylinder" size=".02 .03" pos=".1 0 -.01"'))
    assert "plane-cylinder" in gate.uncovered_contact_pairs(m)
    with warnings.catch_warnings():
        warnings.simplefilter("error", AnalyticFallbackWarning)
        provider = derivatives.make_provider("analytic", m, threads=1)
    touching = state(m)
    cylinder = mujoco.mjtGeom.mjGEOM_CYLINDER
    assert any(m.geom_type[g] == cylinder for g in touching.contact.geom[:, 1])
    before = derivatives.fd_evaluations()
    with pytest.warns(AnalyticFallbackWarning, match="plane-cylinder"):
        A, _ = provider.transition(touching)
    assert derivatives.fd_evaluations() > before
    nx = 2 * m.nv
    A_ref, B_ref = np.zeros((nx, nx)), np.zeros((nx, m.nu))
    transition_fd(m, touching, 1e-6, False, A_ref, B_ref)  # the fd backend's differences
    np.testing.assert_array_equal(A, A_ref)

    lifted = mujoco.MjData(m)
    lifted.qpos[2] += 0.5
    mujoco.mj_forward(m, lifted)
    assert lifted.ncon == 0
    before = derivatives.fd_evaluations()
    A, _ = provider.transition(lifted)
    assert derivatives.fd_evaluations() == before
    A_ref = verify.centered_fd(m, lifted)[0]
    assert verify.relative_error(A, A_ref) < 1e-6


def test_applied_body_forces_fall_back():
    m = build()
    provider = derivatives.make_provider("analytic", m)
    d = state(m)
    d.xfrc_applied[1, :3] = (1.0, 0.0, 2.0)
    before = derivatives.fd_evaluations()
    with pytest.warns(AnalyticFallbackWarning, match="xfrc_applied"):
        provider.transition(d)
    assert derivatives.fd_evaluations() > before


def test_every_gate_entry_is_a_real_model_feature():
    """Each unsupported-feature model differs from the covered base in the named feature."""
    assert gate.unsupported_features(build()) == []
    for feature, (pieces, words) in UNSUPPORTED.items():
        found = gate.unsupported_features(build(**pieces))
        assert any(words in f for f in found), (feature, found)


def test_upright_capsule_under_a_pyramid_falls_back():
    """MuJoCo aligns a capsule contact's first tangent with the capsule axis: upright, that
    frame jumps, so the knot goes to finite differences with a warning saying why."""
    m = verify.oracle_model(mujoco.MjModel.from_xml_string("""
<mujoco>
  <option cone="pyramidal"/>
  <worldbody>
    <geom type="plane" size="5 5 .1"/>
    <body pos="0 0 .1">
      <freejoint/>
      <geom type="capsule" size=".02" fromto="0 0 -.08 0 0 .08" mass="1"/>
    </body>
  </worldbody>
</mujoco>"""))
    d = mujoco.MjData(m)
    d.qpos[2] -= 0.001
    mujoco.mj_forward(m, d)
    assert d.ncon == 1
    provider = derivatives.make_provider("analytic", m)
    before = derivatives.fd_evaluations()
    with pytest.warns(AnalyticFallbackWarning, match="upright"):
        provider.transition(d)
    assert derivatives.fd_evaluations() > before
    d.qpos[3:7] = (np.cos(0.2), np.sin(0.2), 0.0, 0.0)  # tilted: covered again
    mujoco.mj_forward(m, d)
    d.qpos[2] -= mujoco.mj_geomDistance(m, d, 0, 1, 1.0, None) + 0.001
    mujoco.mj_forward(m, d)
    assert d.ncon >= 1
    before = derivatives.fd_evaluations()
    A, _ = provider.transition(d)
    assert derivatives.fd_evaluations() == before
    # a lone tilted capsule's step has a kink here: centered differences approach the closed
    # form only linearly in their step (2.6e-4 at 1e-6, 2.6e-6 at 1e-8)
    assert verify.relative_error(A, verify.centered_fd(m, d, eps=1e-8)[0]) < 1e-5


def test_option_changes_after_construction_are_followed():
    """The provider re-gates when the model's options change under it: a switch to the implicit
    integrator falls back (with a warning), a new timestep is used, Euler is analytic again."""
    m = verify.oracle_model(build(), "euler")
    provider = derivatives.make_provider("analytic", m, threads=1)
    d = state(m)
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_IMPLICIT
    before = derivatives.fd_evaluations()
    with pytest.warns(AnalyticFallbackWarning, match="mjINT_IMPLICIT"):
        provider.transition(d)
    assert derivatives.fd_evaluations() > before and provider.fallback
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    m.opt.timestep = 0.004
    verify.settle_solver(m, d)
    before = derivatives.fd_evaluations()
    A, _ = provider.transition(d)
    assert derivatives.fd_evaluations() == before and not provider.fallback
    assert verify.relative_error(A, verify.centered_fd(m, d)[0]) < 1e-5
