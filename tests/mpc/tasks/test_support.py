"""The support term's polygon and residual (mpc.tasks.support)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpc.tasks.support import support_edges, support_residual

#: A quadruped's feet seen from above (FL, FR, RL, RR), listed out of the polygon's order.
FEET = np.array([[0.2, 0.15], [0.2, -0.15], [-0.2, 0.15], [-0.2, -0.15]])


def residual(p, points, on, margin=0.03):
    return support_residual(np.asarray(p, float), *support_edges(points, np.asarray(on), margin))


def test_a_point_well_inside_the_polygon_has_no_residual():
    r, jac = residual([0.0, 0.0], FEET, [True] * 4)
    assert np.all(r == 0.0) and np.all(jac == 0.0)
    r, _ = residual([-0.05, -0.04], FEET, [False, True, True, True])  # a front foot lifted
    assert np.all(r == 0.0)


def test_outside_an_edge_the_residual_points_back_in_by_the_distance_plus_the_margin():
    r, jac = residual([0.3, 0.0], FEET, [True] * 4)  # 0.1 m ahead of the front edge
    np.testing.assert_allclose(r, [-0.13, 0.0], atol=1e-12)
    np.testing.assert_allclose(jac, [[-1.0, 0.0], [0.0, 0.0]], atol=1e-12)
    # the front-left lifted: the centre of the rectangle lies on the diagonal FR-RL, 3 cm
    # short of the margin, pushed toward the remaining triangle along the diagonal's normal
    r, _ = residual([0.0, 0.0], FEET, [False, True, True, True])
    normal = np.array([-0.3, -0.4]) / 0.5  # inward, toward RR
    np.testing.assert_allclose(r, 0.03 * normal, atol=1e-12)


def test_fewer_than_three_feet_make_no_polygon():
    normals, offsets = support_edges(FEET, np.array([True, False, False, True]), 0.03)
    assert np.all(normals == 0.0) and np.all(offsets == -np.inf)
    r, _ = residual([1.0, 1.0], FEET, [True, False, False, True])
    assert np.all(r == 0.0)


def test_the_edges_are_the_hull_of_the_feet_on():
    normals, _ = support_edges(FEET, np.ones(4, bool), 0.0)
    assert np.count_nonzero(np.abs(normals).sum(axis=-1)) == 4  # a rectangle's four sides
    normals, _ = support_edges(FEET, np.array([True, True, True, False]), 0.0)
    assert np.count_nonzero(np.abs(normals).sum(axis=-1)) == 3


def test_edges_are_made_for_every_knot_at_once():
    on = np.array([[True] * 4, [False, True, True, True]])
    normals, offsets = support_edges(np.broadcast_to(FEET, (2, 4, 2)), on, 0.03)
    assert normals.shape == (2, 12, 2) and offsets.shape == (2, 12)
    r, _ = support_residual(np.zeros((2, 2)), normals, offsets)
    assert np.all(r[0] == 0.0) and np.linalg.norm(r[1]) == pytest.approx(0.03)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-0.4, 0.4), min_size=8, max_size=8),
       st.lists(st.booleans(), min_size=4, max_size=4),
       st.floats(-0.6, 0.6), st.floats(-0.6, 0.6))
def test_the_jacobian_matches_centred_differences(coords, on, x, y):
    points = np.array(coords).reshape(4, 2)
    edges = support_edges(points, np.array(on), 0.03)
    p = np.array([x, y])
    _, jac = support_residual(p, *edges)
    depth = edges[1] - edges[0] @ p
    if np.any(np.abs(depth[np.isfinite(depth)]) < 1e-5):
        return  # on a hinge's kink: no derivative
    for k in range(2):
        e = np.zeros(2)
        e[k] = 1e-7
        fd = (support_residual(p + e, *edges)[0] - support_residual(p - e, *edges)[0]) / 2e-7
        np.testing.assert_allclose(jac[:, k], fd, atol=1e-6)
