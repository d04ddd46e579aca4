"""A moving sphere against a static box in the analytic backend.

* MuJoCo's contact is the closed form of :mod:`derivatives.analytic.box` (recomputed here
  independently for random placements around an aligned and a turned box, with and without a
  margin: position, frame and distance to 1e-12), and :func:`sphere_box_feature` names the
  region it comes from (the edge's or corner's closest point is MuJoCo's);
* the contact-Jacobian derivatives of each region (top face, side face, edge, corner, the
  centre inside the box) against centered differences of ``efc_J``, elliptic and pyramidal
  cones, aligned and turned box;
* whole steps A, B against centered ``mjd_transitionFD`` (Newton at tolerance 1e-12) on a free
  sphere (every region, two seeds, aligned and turned box; pyramidal condim 6) and on the Go2's
  planning model with a static box only its feet touch (as ``task.ground: felt``'s riser): a
  foot on its top, against its side, over an edge and over a corner, the box aligned and
  turned: relative error at most 1e-6 and no finite difference;
* what is not covered falls back, counted: a sphere against a moving box.

The oracle's step is 1e-7, as for the height field's edges and vertices (an edge or corner
contact's normal turns at the rate 1/L).
"""

from __future__ import annotations

import analytic_verify as verify
import box_models as bm
import mujoco
import numpy as np
import pytest
from analytic_oracles import analytic_vs_oracle, assert_contact_jacobian_matches_efc_j

import derivatives
from derivatives.analytic import AnalyticFallbackWarning, gate
from derivatives.analytic.box import sphere_box_feature
from derivatives.analytic.hfield import EDGE, FACE, VERTEX
from derivatives.counter import fallbacks_since
from derivatives.fd import transition_fd

#: Largest relative error of A and B allowed (as for the plane and the height field).
LIMIT = 1e-6
#: The oracle's difference step (see the module doc).
EPS = 1e-7
_models: dict[tuple, mujoco.MjModel] = {}


def ball(cone: str = "elliptic", condim: int = 3, turned: bool = False) -> mujoco.MjModel:
    key = (cone, condim, turned)
    if key not in _models:
        _models[key] = bm.ball_model(cone, condim, turned)
    return _models[key]


def _make_frame(n: np.ndarray) -> np.ndarray:
    """``mju_makeFrame(n)`` without a hint: t₁ = normalize(y − n (n·y)), y = e_y if
    |n_y| < 1/2 else e_z, t₂ = n × t₁."""
    y = np.array([0.0, 1.0, 0.0]) if abs(n[1]) < 0.5 else np.array([0.0, 0.0, 1.0])
    t1 = y - n * (n @ y)
    t1 /= np.linalg.norm(t1)
    return np.concatenate([n, t1, np.cross(n, t1)])


# --- what MuJoCo reports ---------------------------------------------------------------------
@pytest.mark.parametrize("margin", [0.0, 0.005])
@pytest.mark.parametrize("turned", [False, True])
def test_contact_is_the_closed_form(turned, margin):
    """Random placements around the box: MuJoCo's contact is the module doc's closed form
    (recomputed here in numpy), every region is met, and the feature found reproduces the
    closest point of an edge or a corner."""
    m = bm.ball_model(turned=turned)
    box = m.geom("box").id
    m.geom_margin[box] = margin
    d = mujoco.MjData(m)
    rng = np.random.default_rng(5)
    size = m.geom_size[box]
    r = bm.RADIUS
    seen: set[str] = set()
    for _ in range(3000):
        mujoco.mj_kinematics(m, d)
        R = d.geom_xmat[box].reshape(3, 3)
        local = rng.uniform(-1.3, 1.3, 3) * (size + r)
        d.qpos[:3] = d.geom_xpos[box] + R @ local
        mujoco.mj_forward(m, d)
        if d.ncon == 0:
            continue
        assert d.ncon == 1 and tuple(d.contact.geom[0]) == (1 - box, box)
        clipped = np.clip(local, -size, size)
        gap = np.linalg.norm(clipped - local)
        if gap > mujoco.mjMINVAL:
            normal, dist = (clipped - local) / gap, gap
        else:
            depths = [abs((1 if i % 2 else -1) * size[i // 2] - local[i // 2])
                      for i in range(6)]
            k = int(np.argmin(depths))
            normal = np.zeros(3)
            normal[k // 2] = -1.0 if k % 2 else 1.0
            dist = -depths[k]
        np.testing.assert_allclose(d.contact.dist[0], dist - r, rtol=0, atol=1e-12)
        np.testing.assert_allclose(
            d.contact.pos[0], d.geom_xpos[box] + R @ (local + normal * (r + dist) / 2),
            rtol=0, atol=1e-12)
        np.testing.assert_allclose(d.contact.frame[0], _make_frame(R @ normal), rtol=0,
                                   atol=1e-12)
        kind, centre, half, x = sphere_box_feature(d.geom_xpos, d.geom_xmat, size, 1 - box,
                                                   box)
        outside = int(np.sum(clipped != local))
        assert kind == (FACE, FACE, EDGE, VERTEX)[outside]
        if kind != FACE:
            np.testing.assert_allclose(np.asarray(centre) + x * np.asarray(half),
                                       d.geom_xpos[box] + R @ clipped, rtol=0, atol=1e-12)
        seen.add(bm.category(m, d, 0))
    assert seen == set(bm.CATEGORIES)


# --- contact-Jacobian stage ------------------------------------------------------------------
@pytest.mark.parametrize("turned", [False, True])
@pytest.mark.parametrize("cone", ["elliptic", "pyramidal"])
@pytest.mark.parametrize("category", bm.CATEGORIES)
def test_contact_jacobian_derivatives_match_efc_j(category, cone, turned):
    """(∂J/∂q) a, (∂J/∂q) v and ∂(Jᵀf)/∂q against centered differences of MuJoCo's efc_J, every
    row (the turning frame of edge and corner contacts included)."""
    m = ball(cone, turned=turned)
    d = bm.ball_state(m, category, seed=0)
    assert_contact_jacobian_matches_efc_j(m, d)


# --- whole step ------------------------------------------------------------------------------
@pytest.mark.parametrize("turned", [False, True])
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("category", bm.CATEGORIES)
def test_free_sphere_step_matches_centered_fd(category, seed, turned):
    m = ball(turned=turned)
    d = bm.ball_state(m, category, seed)
    assert verify.contacts_covered(m, d)
    err_a, err_b = analytic_vs_oracle(m, d, EPS)
    assert err_a <= LIMIT and err_b <= LIMIT, (err_a, err_b)


@pytest.mark.parametrize("category", bm.CATEGORIES)
def test_free_sphere_step_pyramidal_condim_6(category):
    """Pyramidal cones of dimension 6 see the frame of an edge or corner contact turn in every
    friction row; on a face the frame is the negated plane frame."""
    m = ball("pyramidal", 6, turned=True)
    d = bm.ball_state(m, category, seed=2)
    err_a, err_b = analytic_vs_oracle(m, d, EPS)
    assert err_a <= LIMIT and err_b <= LIMIT, (err_a, err_b)


@pytest.fixture(scope="module")
def go2_with_box():
    return bm.robot_model("go2")


@pytest.mark.parametrize("turned", [False, True])
@pytest.mark.parametrize("category", ["top face", "side face", "edge", "vertex"])
def test_go2_foot_on_a_box(go2_with_box, category, turned):
    """The Go2's planning model on its floor, one foot touching the static box (the riser's
    case: only the feet touch it), random velocities and controls."""
    m = go2_with_box
    d = bm.robot_state(m, category, seed=1 if turned else 0, turned=turned)
    err_a, err_b = analytic_vs_oracle(m, d, EPS)
    assert err_a <= LIMIT and err_b <= LIMIT, (err_a, err_b)


# --- what is covered and what is not ---------------------------------------------------------
def _sphere_and_box(box_moves: bool) -> mujoco.MjModel:
    """A free sphere and a box, the box static or on a free body of its own."""
    spec = mujoco.MjSpec()
    holder = spec.worldbody.add_body(pos=[0, 0, 0])
    if box_moves:
        holder.add_freejoint()
    holder.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.1, 0.1, 0.05], mass=1.0)
    body = spec.worldbody.add_body(pos=[0.02, 0.01, 0.066])
    body.add_freejoint()
    body.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[0.02, 0, 0], mass=0.3)
    return verify.oracle_model(spec.compile())


def test_gate_covers_a_sphere_on_a_static_box_only():
    assert "sphere-box" not in gate.uncovered_contact_pairs(_sphere_and_box(False))
    assert "sphere-box" in gate.uncovered_contact_pairs(_sphere_and_box(True))


def test_sphere_on_a_moving_box_falls_back():
    """Both bodies move: not covered; that knot by differences, counted by reason."""
    m = _sphere_and_box(True)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    assert d.ncon == 1
    provider = derivatives.make_provider("analytic", m, threads=1)
    before = derivatives.fd_evaluations()
    start = derivatives.fallbacks()
    with pytest.warns(AnalyticFallbackWarning, match="sphere-box"):
        A, _ = provider.transition(d)
    assert derivatives.fd_evaluations() > before
    assert "contact sphere-box" in fallbacks_since(start)
    A_ref, B_ref = np.zeros_like(A), np.zeros((A.shape[0], m.nu))
    transition_fd(m, d, 1e-6, False, A_ref, B_ref)  # the fd backend's differences
    np.testing.assert_array_equal(A, A_ref)
