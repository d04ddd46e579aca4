"""Height-field contacts of spheres and capsules in the analytic backend.

* MuJoCo's contacts are the exact closest points of one prism of the field (the feature found
  by :func:`hfield_feature` reproduces every contact of a random sweep to 1e-9, with and
  without a margin, on a rotated field), and the contacts around a cell are what
  docs/derivatives.md describes (one per prism, duplicates on a flat field);
* the contact-Jacobian derivatives of every feature (face, a step's wall, cell-border,
  diagonal and vertical edges, vertex) against centered differences of ``efc_J``, elliptic and
  pyramidal cones (the frame of an edge or vertex contact turns);
* whole steps A, B against centered ``mjd_transitionFD`` (Newton at tolerance 1e-12) on free
  spheres and capsules (every feature, two seeds, elliptic and pyramidal) and on the A1, Go1 and
  Go2 planning models standing on a height-field floor: relative error at most 1e-6 and no
  finite difference; the same with the sphere contacts pruned (:mod:`common.hfield_contacts`,
  the differences through the same pruned step);
* a sphere whose centre is inside the field is differentiated as the nearest face (MuJoCo's
  contact is within √ccd_tolerance of it): the same Jacobians as on a plane;
* what is not covered falls back, counted by reason: a box on the field, a capsule whose axis
  enters the field, contacts from libccd (``nativeccd`` disabled).

The oracle's step is 1e-7: an edge or vertex contact's normal turns at the rate 1/L (L the
sphere radius), and at the usual 1e-6 the centered differences' truncation error alone reaches
9e-7 relative (2.6e-9 on a face; 1e-7 brings edges to 1e-8).
"""

from __future__ import annotations

import warnings

import analytic_verify as verify
import hfield_models as hm
import mujoco
import numpy as np
import pytest
from analytic_oracles import analytic_vs_oracle, assert_contact_jacobian_matches_efc_j, bundles

import derivatives
import robots
from derivatives.analytic import AnalyticFallbackWarning, gate
from derivatives.analytic.hfield import MATCHED, TOLERANCE, hfield_feature
from derivatives.counter import fallbacks_since
from derivatives.fd import transition_fd

#: Largest relative error of A and B allowed (the Done criterion of the height-field work).
LIMIT = 1e-6
#: The oracle's difference step (see the module doc).
EPS = 1e-7
SHAPES = ("sphere", "capsule")
_models: dict[tuple, mujoco.MjModel] = {}


def ball(shape: str, cone: str = "elliptic", condim: int = 3) -> mujoco.MjModel:
    key = (shape, cone, condim)
    if key not in _models:
        _models[key] = hm.ball_model(shape, cone, condim)
    return _models[key]


# --- what MuJoCo reports ---------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("margin", [0.0, 0.002])
@pytest.mark.parametrize("rotated", [False, True])
def test_every_contact_is_the_exact_closest_points_of_a_prism(shape, margin, rotated):
    """Random placements on the bumpy field with a slope and a step: each contact is
    reproduced by one prism's exact closest points to the core (margin does not change the
    geometry in MuJoCo 4), and the sweep meets faces, cell-border and diagonal edges and
    vertices."""
    spec = mujoco.MjSpec()
    geom = hm.add_field(spec, hm.terrain(), hm.RESOLUTION)
    geom.margin = margin
    if rotated:
        geom.pos = [0.1, 0.2, 0.05]
        geom.quat = [0.98, 0.05, -0.03, 0.17]
    body = spec.worldbody.add_body(pos=[0, 0, 0.5])
    body.add_freejoint()
    size = [0.02, 0, 0] if shape == "sphere" else [0.015, 0.04, 0]
    body.add_geom(type=getattr(mujoco.mjtGeom, f"mjGEOM_{shape.upper()}"), size=size)
    m = spec.compile()
    d = mujoco.MjData(m)
    rng = np.random.default_rng(7)
    seen: set = set()
    centre = m.geom_pos[0]
    for _ in range(100):
        mujoco.mj_resetData(m, d)
        d.qpos[:3] = centre + np.array([rng.uniform(-0.25, 0.25), rng.uniform(-0.25, 0.25), 0.6])
        q = rng.standard_normal(4)
        d.qpos[3:7] = q / np.linalg.norm(q)
        hm.lower_onto(m, d, rng.uniform(5e-4, 6e-3))
        for c in range(d.ncon):
            kind = hm.category(m, d, c)
            assert kind is not None, (d.qpos, c)
            seen.add(kind)
    assert {"face", "border edge", "diagonal edge", "vertex"} <= seen


def test_contacts_around_a_cell_corner():
    """A sphere 3 mm deep on a flat field: one face contact in a cell's interior; an edge
    contact added by the neighbouring prism near a cell border or the diagonal; near a sample
    point up to six contacts, some identical (one vertex contact from each prism whose closest
    point is that sample)."""
    spec = mujoco.MjSpec()
    hm.add_field(spec, np.zeros((9, 9)), hm.RESOLUTION)
    body = spec.worldbody.add_body(pos=[0, 0, 0.5])
    body.add_freejoint()
    body.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[0.02, 0, 0])
    m = spec.compile()
    d = mujoco.MjData(m)

    def contacts(x: float, y: float) -> list[str]:
        d.qpos[:3] = [x, y, 0.017]
        mujoco.mj_forward(m, d)
        assert np.allclose(d.contact.dist[: d.ncon].min(), -0.003)
        return sorted(hm.category(m, d, c) for c in range(d.ncon))

    # samples at multiples of 5 cm; a cell's diagonal runs from (0, 0) to (5, 5) cm
    assert contacts(0.035, 0.015) == ["face"]
    assert contacts(0.025, 0.044) == ["border edge", "face"]
    assert contacts(0.028, 0.022) == ["diagonal edge", "face"]
    near_corner = contacts(0.003, 0.006)
    assert len(near_corner) == 6 and near_corner.count("vertex") == 2
    vertices = [c for c in range(d.ncon) if hm.category(m, d, c) == "vertex"]
    np.testing.assert_allclose(d.contact.pos[vertices[0]], d.contact.pos[vertices[1]], rtol=0,
                               atol=1e-15)


# --- contact-Jacobian stage ------------------------------------------------------------------
@pytest.mark.parametrize("cone", ["elliptic", "pyramidal"])
@pytest.mark.parametrize("category", hm.CATEGORIES)
@pytest.mark.parametrize("shape", SHAPES)
def test_contact_jacobian_derivatives_match_efc_j(shape, category, cone):
    """(∂J/∂q) a, (∂J/∂q) v and ∂(Jᵀf)/∂q against centered differences of MuJoCo's efc_J, every
    row (the turning frame of edge and vertex contacts included)."""
    m = ball(shape, cone)
    d = hm.ball_state(m, category, seed=0)
    assert_contact_jacobian_matches_efc_j(m, d)


# --- whole step ------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("category", hm.CATEGORIES)
@pytest.mark.parametrize("shape", SHAPES)
def test_free_body_step_matches_centered_fd(shape, category, seed):
    m = ball(shape)
    d = hm.ball_state(m, category, seed)
    assert verify.contacts_covered(m, d)
    err_a, err_b = analytic_vs_oracle(m, d, EPS)
    assert err_a <= LIMIT and err_b <= LIMIT, (err_a, err_b)


@pytest.mark.parametrize("category", hm.CATEGORIES)
@pytest.mark.parametrize("shape", SHAPES)
def test_free_body_step_pyramidal_condim_6(shape, category):
    """Pyramidal cones of dimension 6 see the turning frame of edge and vertex contacts in
    every friction row."""
    m = ball(shape, "pyramidal", 6)
    d = hm.ball_state(m, category, seed=2)
    err_a, err_b = analytic_vs_oracle(m, d, EPS)
    assert err_a <= LIMIT and err_b <= LIMIT, (err_a, err_b)


@pytest.fixture(scope="module", params=["a1", "go1", "go2"])
def robot_on_field(request):
    return request.param, hm.robot_model(request.param)


@pytest.mark.parametrize("seed", range(6))
def test_robot_on_a_height_field(robot_on_field, seed):
    """The planning model standing on the field (bumps, a slope, a step), at least three feet
    planted, random velocities and controls."""
    robot, m = robot_on_field
    d = hm.robot_state(m, robots.info(robot).feet, seed)
    err_a, err_b = analytic_vs_oracle(m, d, EPS)
    assert err_a <= LIMIT and err_b <= LIMIT, (err_a, err_b)


def test_robot_foot_against_a_step(robot_on_field):
    """A foot touching the step's steep side (a wall of the prism above it)."""
    robot, m = robot_on_field
    d = hm.robot_state(m, robots.info(robot).feet, seed=11, wanted="wall")
    err_a, err_b = analytic_vs_oracle(m, d, EPS)
    assert err_a <= LIMIT and err_b <= LIMIT, (err_a, err_b)


# --- pruned contacts (common.hfield_contacts, what the planning model steps) -----------------
#: The prism features a pruned sphere contact still comes from on the test terrain (a wall or a
#: vertical edge is always within the pruning angle of a deeper face).
PRUNED_CATEGORIES = ("face", "border edge", "diagonal edge", "vertex")


@pytest.mark.parametrize("cone, condim", [("elliptic", 3), ("pyramidal", 6)])
@pytest.mark.parametrize("category", PRUNED_CATEGORIES)
def test_pruned_sphere_step_matches_centered_fd(category, cone, condim):
    """Through the pruned step, the oracle's differences too: one contact, exact."""
    key = ("sphere pruned", cone, condim)
    if key not in _models:
        _models[key] = hm.ball_model("sphere", cone, condim, pruned=True)
    m = _models[key]
    d = hm.ball_state(m, category, seed=0)
    assert d.ncon == 1
    err_a, err_b = analytic_vs_oracle(m, d, EPS)
    assert err_a <= LIMIT and err_b <= LIMIT, (err_a, err_b)


@pytest.mark.parametrize("robot", ["a1", "go1", "go2"])
def test_robot_on_a_pruned_field(robot):
    """The planning models on the field with the feet's contacts pruned: at most one contact
    per foot here (the terrain has no riser a foot touches), exact, no finite difference."""
    m = hm.robot_model(robot, pruned=True)
    feet = robots.info(robot).feet
    for seed in (0, 1):
        d = hm.robot_state(m, feet, seed)
        assert d.ncon <= len(feet)
        err_a, err_b = analytic_vs_oracle(m, d, EPS)
        assert err_a <= LIMIT and err_b <= LIMIT, (err_a, err_b)


# --- what is not covered ---------------------------------------------------------------------
def test_gate_covers_round_geoms_on_a_field_only():
    spec = mujoco.MjSpec()
    hm.add_field(spec, hm.terrain(), hm.RESOLUTION)
    for i, shape in enumerate(("sphere", "capsule", "box")):
        body = spec.worldbody.add_body(pos=[0.1 * i, 0, 0.5])
        body.add_freejoint()
        body.add_geom(type=getattr(mujoco.mjtGeom, f"mjGEOM_{shape.upper()}"),
                      size=[0.02, 0.02, 0.02])
    pairs = gate.uncovered_contact_pairs(spec.compile())
    assert "hfield-box" in pairs
    assert "hfield-sphere" not in pairs and "hfield-capsule" not in pairs


def _fallback(m: mujoco.MjModel, d: mujoco.MjData, reason: str) -> None:
    """The knot falls back to finite differences with a warning naming ``reason``, counted."""
    provider = derivatives.make_provider("analytic", m, threads=1)
    before = derivatives.fd_evaluations()
    start = derivatives.fallbacks()
    with pytest.warns(AnalyticFallbackWarning):
        A, _ = provider.transition(d)
    assert derivatives.fd_evaluations() > before
    assert reason in fallbacks_since(start)
    A_ref, B_ref = np.zeros_like(A), np.zeros((A.shape[0], m.nu))
    transition_fd(m, d, 1e-6, False, A_ref, B_ref)  # the fd backend's differences
    np.testing.assert_array_equal(A, A_ref)


def test_box_on_a_field_falls_back():
    spec = mujoco.MjSpec()
    hm.add_field(spec, np.zeros((9, 9)), hm.RESOLUTION)
    body = spec.worldbody.add_body(pos=[0.01, 0.02, 0.5])
    body.add_freejoint()
    body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.02, 0.03, 0.02])
    m = verify.oracle_model(spec.compile())
    d = mujoco.MjData(m)
    hm.lower_onto(m, d, 0.002)
    _fallback(m, d, "contact hfield-box")


def _single(kind: str, ground: str) -> mujoco.MjModel:
    """A free sphere or capsule over a plane or a flat field of 1 m cells at height 0."""
    spec = mujoco.MjSpec()
    if ground == "plane":
        spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[2, 2, 0.1])
    else:
        hm.add_field(spec, np.zeros((3, 3)), 1.0)
    body = spec.worldbody.add_body(pos=[0, 0, 0.5])
    body.add_freejoint()
    size = [0.02, 0, 0] if kind == "sphere" else [0.015, 0.04, 0]
    body.add_geom(type=getattr(mujoco.mjtGeom, f"mjGEOM_{kind.upper()}"), size=size)
    return verify.oracle_model(spec.compile())


def test_sphere_centre_inside_the_field_is_the_face_case():
    """A sphere sunk 2.5 cm (its centre 5 mm below the surface) in the middle of a large flat
    triangle: MuJoCo's contact comes from EPA, within √ccd_tolerance of the exact nearest face
    (measured: 0.16 √ccd_tolerance at most); it is differentiated as that face, so the step's
    Jacobians are those of the same state on a plane, to the EPA's accuracy."""
    field, plane = _single("sphere", "field"), _single("sphere", "plane")
    states = []
    for m in (field, plane):
        d = mujoco.MjData(m)
        d.qpos[:3] = [-0.2, 0.3, -0.005]
        d.qvel[:] = np.random.default_rng(2).standard_normal(6)
        verify.settle_solver(m, d)
        states.append(d)
    assert hm.categories(field, states[0]) == {"inside"}
    assert states[0].ncon == states[1].ncon == 1
    np.testing.assert_allclose(states[0].contact.dist[0], -0.025, atol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error", AnalyticFallbackWarning)
        before = derivatives.fd_evaluations()
        (A, B), (A_plane, B_plane) = (
            derivatives.make_provider("analytic", m, threads=1).transition(d)
            for m, d in zip((field, plane), states, strict=True))
    assert derivatives.fd_evaluations() == before
    # MuJoCo's own contact normal differs from the plane's by up to √ccd_tolerance
    accuracy = np.sqrt(field.opt.ccd_tolerance)
    assert verify.relative_error(A, A_plane) < accuracy
    assert verify.relative_error(B, B_plane) < accuracy


def test_capsule_axis_inside_the_field_falls_back():
    """A capsule whose core segment enters a prism: MuJoCo's penetration solver, not
    reproduced; that knot by differences, counted."""
    m = _single("capsule", "field")
    d = mujoco.MjData(m)
    d.qpos[:3] = [-0.2, 0.3, 0.0]
    d.qpos[3:7] = [np.cos(0.3), np.sin(0.3), 0.0, 0.0]  # tilted 34°: one end below the surface
    mujoco.mj_forward(m, d)
    assert None in hm.categories(m, d)
    _fallback(m, d, "hfield-capsule contact not reproduced")


def test_libccd_contacts_fall_back():
    """With nativeccd disabled, libccd's MPR normals are only accurate to its tolerance."""
    m = ball("capsule")
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_NATIVECCD)
    d = mujoco.MjData(m)
    d.qpos[:3] = [-0.113, 0.031, 0.3]
    hm.lower_onto(m, d, 0.003)
    assert None in hm.categories(m, d)
    _fallback(m, d, "hfield-capsule contact not reproduced")


def test_feature_check_rejects_a_displaced_contact():
    """The check is real: the same contact with its point moved by 1e-8 m is not reproduced at
    1e-9, and is at 1e-7."""
    m = ball("sphere")
    d = hm.ball_state(m, "vertex", seed=0)
    model, data = bundles(m, d)
    verts = np.empty((6, 3))
    r = m.geom_size[1, 0]
    dist = d.contact.dist[0]
    assert hfield_feature(model, data, 0, dist, r, TOLERANCE, 0.0, verts)[0] == MATCHED
    d.contact.pos[0] += [1e-8, 0.0, 0.0]
    model, data = bundles(m, d)
    assert hfield_feature(model, data, 0, dist, r, TOLERANCE, 0.0, verts)[0] != MATCHED
    assert hfield_feature(model, data, 0, dist, r, 1e-7, 0.0, verts)[0] == MATCHED
