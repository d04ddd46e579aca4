"""The sphere-field contacts the lockstep terrain runs fell back on (issue 26), rebuilt on a small
model: a foot sphere (the Go2's: radius 22 mm, margin 1 mm) on a flat field of 5 cm cells.

* **kept by the margin**: an edge contact of the neighbouring prism with dist just below the
  margin. MuJoCo's normal is the difference of witness points |dist − margin| apart, rounded to
  about 1e-17/|dist − margin| (1.1e-9 at the run's 1.03e-8), which the feature check's bound
  (rounding over |dist|) rejected;
* **on the wall between two prisms**: a sunk centre 0.1 µm outside one prism (inside its
  neighbour). MuJoCo's GJK takes a distance below ``ccd_tolerance`` as a penetration and hands
  the full sphere to EPA, whose contact is the wall's (as for a centre inside) to EPA's
  accuracy, not the exact closest points the check held it to;
* **EPA near a face's edge** (the map step's run): converged on the depth, its normal only good
  to about ccd_tolerance/δ within δ of the face's edge (7e-3 at 30 µm), beyond √ccd_tolerance;
* **EPA's iteration limit**: a centre inside a prism within ~1 mm of three of its faces (the
  run's knot: 0.93 mm behind a wall, 1.05 mm below the top, 1.17 mm behind the other wall). At
  MuJoCo's default ``ccd_iterations`` (35) EPA stops unconverged, 0.3 mm shallow and 64° off
  the nearest face: no prism feature reproduces that, and it falls back, counted. A planning
  model with a height field runs EPA up to ``CCD_ITERATIONS`` (200), where it converges.

Derivatives against centered ``mjd_transitionFD`` at the relative 1e-6 of the other height-field
tests wherever the differences are a derivative; see each test for where they are not.
"""

from __future__ import annotations

import warnings

import analytic_verify as verify
import hfield_models as hm
import mujoco
import numpy as np
import pytest
from analytic_oracles import analytic_vs_oracle, bundles

import derivatives
from common.hfield_contacts import CCD_ITERATIONS
from derivatives.analytic import AnalyticFallbackWarning
from derivatives.analytic.hfield import (
    EDGE,
    MATCHED,
    ROUNDING,
    TOLERANCE,
    _point_prism,
    hfield_feature,
    prism_vertices,
)
from derivatives.counter import fallbacks_since

RADIUS, MARGIN, CELL = 0.022, 0.001, 0.05
LIMIT, EPS = 1e-6, 1e-7


def _model(ccd_iterations: int = CCD_ITERATIONS) -> mujoco.MjModel:
    """A free foot sphere over a flat 8 × 8-cell field whose surface is at z = 0 (the cell
    borders at multiples of 5 cm), the oracle's solver settings."""
    spec = mujoco.MjSpec()
    spec.option.timestep = 0.005
    hm.add_field(spec, np.zeros((9, 9)), CELL)
    body = spec.worldbody.add_body(pos=[0, 0, 0.5])
    body.add_freejoint()
    body.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[RADIUS, 0, 0], margin=MARGIN,
                  mass=0.3)
    m = verify.oracle_model(spec.compile())
    m.opt.ccd_iterations = ccd_iterations
    return m


def _state(m: mujoco.MjModel, centre, linear=(0.01, -0.02, 0.05)) -> mujoco.MjData:
    d = mujoco.MjData(m)
    d.qpos[:3] = centre
    d.qpos[3:7] = [1, 0, 0, 0]
    d.qvel[:] = [*linear, 0.3, -0.2, 0.1]
    verify.settle_solver(m, d)
    return d


def _no_fallback(m: mujoco.MjModel, d: mujoco.MjData) -> None:
    """The analytic step at d takes no finite difference and warns nothing."""
    start, before = derivatives.fallbacks(), derivatives.fd_evaluations()
    with warnings.catch_warnings():
        warnings.simplefilter("error", AnalyticFallbackWarning)
        derivatives.make_provider("analytic", m, threads=1).transition(d)
    assert derivatives.fd_evaluations() == before
    assert fallbacks_since(start) == {}


def _edge_state(m: mujoco.MjModel, below_margin: float) -> tuple[mujoco.MjData, np.ndarray]:
    """The centre 15 mm above the field over triangle A of a cell, RADIUS + MARGIN −
    ``below_margin`` from the diagonal edge it shares with triangle B, moving towards it at
    5 cm/s; also the exact normal of B's edge contact."""
    h = 0.015
    length = RADIUS + MARGIN - below_margin
    w = np.sqrt(length**2 - h**2)
    on_edge = np.array([-0.08, -0.08])  # on the diagonal of the cell at x, y ∈ [−0.1, −0.05]
    across = np.array([-1.0, 1.0]) / np.sqrt(2)
    normal = np.array([*(w * across), h]) / length
    centre = [*(on_edge + w * across), h]
    return _state(m, centre, linear=-0.05 * normal), normal


def _edge_contact(d: mujoco.MjData, below_margin: float) -> int:
    (c,) = [c for c in range(d.ncon) if abs(d.contact.dist[c] - MARGIN + below_margin) < 1e-12]
    return c


def test_a_contact_kept_by_the_margin_is_reproduced():
    """Like the run's knot (dist − margin = −1.03e-8 m, ~1 m from the origin: the normal 1.1e-9
    off), here −3e-10 m near the origin: MuJoCo's normal is off the exact edge normal by more
    than the old bound TOLERANCE + ROUNDING/|dist| allowed, within the new
    TOLERANCE + ROUNDING/|dist − margin|; the knot takes no finite difference."""
    m = _model()
    d, normal = _edge_state(m, 3e-10)
    c = _edge_contact(d, 3e-10)
    dist = d.contact.dist[c]
    error = np.abs(d.contact.frame[c, :3] - normal).max()
    assert TOLERANCE + ROUNDING / abs(dist) < error < TOLERANCE + ROUNDING / abs(dist - MARGIN)
    model, data = bundles(m, d)
    verts = np.empty((6, 3))
    found = hfield_feature(model, data, c, dist, RADIUS, TOLERANCE, 1e-3, verts, MARGIN)
    assert found[:2] == (MATCHED, EDGE)
    assert hfield_feature(model, data, c, dist, RADIUS, TOLERANCE, 1e-3, verts)[0] != MATCHED
    # the contact appears and disappears within the differences' step: they are no reference
    assert not verify.is_smooth(m, d, EPS)
    _no_fallback(m, d)


@pytest.mark.parametrize("below_margin", [1e-6, 1e-4])
def test_a_contact_kept_by_the_margin_matches_centered_fd(below_margin):
    """The same edge contact where the differences are a derivative (the contact set does not
    change within their step): relative error below 1e-6."""
    m = _model()
    d, _ = _edge_state(m, below_margin)
    _edge_contact(d, below_margin)
    assert verify.is_smooth(m, d, EPS)
    err_a, err_b = analytic_vs_oracle(m, d, EPS)
    assert err_a <= LIMIT and err_b <= LIMIT, (err_a, err_b)


def _exact(m: mujoco.MjModel, d: mujoco.MjData, r: int, c: int, tri: int) -> tuple:
    """The centre's signed distance to prism (r, c, tri) and its feature."""
    model, _ = bundles(m, d)
    verts = np.empty((6, 3))
    prism_vertices(model, 0, r, c, tri, verts)
    local = d.geom_xpos[1] - d.geom_xpos[0]
    length, _, kind, _, _ = _point_prism((local[0], local[1], local[2]), verts)
    return length, kind


def test_a_centre_on_the_wall_between_prisms_is_the_wall_face():
    """The Go1 run's knot: the sphere sunk 2 mm past its radius, its centre 0.1 µm outside the
    wall x = −0.05 of triangle A of cell (2, 3) (inside triangle B of cell (2, 2)). Both prisms'
    contacts come from EPA: normals ±x within √ccd_tolerance, dist −R to EPA's accuracy; each is
    taken as that wall (a face), no finite difference."""
    m = _model()
    d = _state(m, [-0.05 - 1e-7, -0.07, -0.002])
    inside, _ = _exact(m, d, 2, 2, 1)
    outside, kind = _exact(m, d, 2, 3, 0)
    assert -2e-7 < inside < 0.0 < outside < m.opt.ccd_tolerance and kind == 0
    tol = np.sqrt(m.opt.ccd_tolerance)
    walls = [c for c in range(d.ncon) if abs(abs(d.contact.frame[c, 0]) - 1.0) < tol]
    assert len(walls) == 2
    for c in walls:
        assert abs(d.contact.dist[c] + RADIUS) < tol
    _no_fallback(m, d)


#: The GO2 run's knot, in the frame of the cell x ∈ [0, 0.05], y ∈ [−0.05, 0] (triangle A's walls
#: x = 0 and y = 0): depths below the walls and the top.
CORNER = [0.000933, -0.001167, -0.001047]


def test_epa_stopped_by_its_iteration_limit_is_not_reproduced():
    """At MuJoCo's default ccd_iterations EPA stops on a contact 0.3 mm shallower than the
    penetration with its normal 64° off the nearest face (the wall x = 0: dist −(R + 0.933
    mm), n = −x): no prism feature gives it; that knot by differences, counted."""
    m = _model(ccd_iterations=35)
    d = _state(m, CORNER)
    exact = -(RADIUS + CORNER[0])
    (c,) = [c for c in range(d.ncon) if d.contact.frame[c, 0] < -0.5]
    assert d.contact.dist[c] - exact > 2e-4
    assert d.contact.frame[c, 0] > -0.95
    start = derivatives.fallbacks()
    with pytest.warns(AnalyticFallbackWarning):
        derivatives.make_provider("analytic", m, threads=1).transition(d)
    assert list(fallbacks_since(start)) == ["hfield-sphere contact not reproduced"]


def test_epa_with_the_planning_models_iterations_converges():
    """With CCD_ITERATIONS EPA converges on the same state: the wall's contact to
    ccd_tolerance, taken as that face, no finite difference."""
    m = _model()
    d = _state(m, CORNER)
    (c,) = [c for c in range(d.ncon) if d.contact.frame[c, 0] < -0.5]
    assert abs(d.contact.dist[c] + RADIUS + CORNER[0]) < m.opt.ccd_tolerance
    assert d.contact.frame[c, 0] < -1 + m.opt.ccd_tolerance
    _no_fallback(m, d)


def test_epa_near_a_faces_edge_is_that_face():
    """The map run's knot (the centre 16 µm under a sloped top, 83 µm from a wall: the normal
    8.2e-3 off), here on a flat field: 16 µm under the top of triangle A of the cell x ∈ [0,
    0.05], y ∈ [−0.05, 0], 30 µm from its wall y = 0. EPA converges on the depth (within
    ccd_tolerance of R + 16 µm) with its normal 7e-3 off the top's: a turn θ towards the edge
    δ away changes the depth by only about δθ. Beyond √ccd_tolerance, within √ccd_tolerance +
    ccd_tolerance/δ: taken as the top face, no finite difference."""
    m = _model()
    depth, off = 1.6e-5, 3e-5
    d = _state(m, [0.02, -off, -depth])
    (c,) = [c for c in range(d.ncon) if d.contact.frame[c, 2] > 0.5]
    tol = m.opt.ccd_tolerance
    assert abs(d.contact.dist[c] + RADIUS + depth) < tol
    error = np.abs(d.contact.frame[c, :3] - [0.0, 0.0, 1.0]).max()
    assert np.sqrt(tol) < error < np.sqrt(tol) + tol / off
    _no_fallback(m, d)
