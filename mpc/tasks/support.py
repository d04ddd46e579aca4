"""The support term: the centre of mass kept over the polygon of the feet in planned stance.

At a knot time t, with S(t) the feet in their planned stance and a_i(t) where each stands
(:meth:`mpc.tasks.map_swing.SwingPlan.anchor`: known from the plan alone), the support polygon
is the convex hull of {a_i(t) : i ∈ S(t)}. Each hull edge e from a_i to a_j (counter-clockwise)
has the inward unit normal n_e = perp(a_j − a_i) / |a_j − a_i| (perp(x, y) = (−y, x)) and
offset b_e = n_e · a_i + m, m the margin. With p = c_xy the centre of mass,

    r = Σ_e max(0, b_e − n_e · p) n_e        (2)
    ∂r/∂p = −Σ_{e : b_e − n_e · p > 0} n_e n_eᵀ

zero where p stands at least m inside every edge, growing with how far it is outside the
polygon shrunk by m (r points back in). Fewer than three feet (a trot's diagonal pair) have no
polygon: r = 0. The edges depend on the time only, so they are made once per plan; the
residual is affine in p piece by piece, its Jacobian exact off the hinges' kinks.

Why: in a walk three feet carry the robot while the fourth swings, and on the stairs the Go2
and Go1 lifted a foot with the centre of mass on the far side of the other three's diagonal;
the foot planned to stand opposite the lifted one carried nothing, and the robot tipped over
the diagonal (docs/terrain.md, "The centre of mass over three feet"). The balance term pulls
toward the middle of all four feet, on that diagonal. The centre of mass, not the capture point
c + ċ √(2h/g) (4 cm ahead of it at the stairs' walk): with the capture point the Go2 fell or
was stopped on the climb in each of the 10 runs tried (weights 30 and 100).
"""

from __future__ import annotations

import numpy as np


def support_edges(points: np.ndarray, on: np.ndarray,
                  margin: float) -> tuple[np.ndarray, np.ndarray]:
    """The edges of the support polygons: normals (..., n(n−1), 2) and offsets (..., n(n−1)),
    one per ordered pair of feet, of the feet ``on`` (..., n) at ``points`` (..., n, 2); a pair
    that is no counter-clockwise hull edge (or with fewer than three feet on) has a zero
    normal and offset −inf (never active)."""
    n = points.shape[-2]
    off = ~np.eye(n, dtype=bool)
    i, j = (a.ravel() for a in np.nonzero(off))
    edge = points[..., j, :] - points[..., i, :]
    length = np.linalg.norm(edge, axis=-1)
    normal = np.stack([-edge[..., 1], edge[..., 0]], axis=-1) / np.maximum(length, 1e-9)[..., None]
    # every other foot on stands on the inner side (or on the line) of a hull edge
    side = np.einsum("...ec,...kc->...ek", normal, points) - np.einsum(
        "...ec,...ec->...e", normal, points[..., i, :])[..., None]
    others = on[..., None, :] & off[i] & off[j]
    hull = np.all(np.where(others, side >= -1e-9, True), axis=-1)
    edge_on = on[..., i] & on[..., j] & hull & (length > 1e-6)
    edge_on &= on.sum(axis=-1, keepdims=True) >= 3
    offset = np.einsum("...ec,...ec->...e", normal, points[..., i, :]) + margin
    return (np.where(edge_on[..., None], normal, 0.0), np.where(edge_on, offset, -np.inf))


def support_residual(p: np.ndarray, normals: np.ndarray,
                     offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """r (..., 2) and ∂r/∂p (..., 2, 2) at centre-of-mass points ``p`` (..., 2) for the edges of
    :func:`support_edges` (module docstring)."""
    depth = offsets - np.einsum("...ec,...c->...e", normals, p)
    active = depth > 0.0
    v = np.where(active, depth, 0.0)
    r = np.einsum("...e,...ec->...c", v, normals)
    jac = -np.einsum("...e,...ec,...ed->...cd", active.astype(float), normals, normals)
    return r, jac
