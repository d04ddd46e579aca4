"""Height-field contacts: which feature of which prism a contact MuJoCo reports comes from.

What MuJoCo 4.0 does (``mjc_ConvexHField``; measured by ``scripts/hfield_contacts.py``, see
docs/derivatives.md, "Height fields"). A field of ``nrow`` × ``ncol`` samples and size
(sx, sy, sz, base) has sample (r, c) at (2 sx c/(ncol − 1) − sx, 2 sy r/(nrow − 1) − sy,
sz h[r, c]) in the geom's frame, the heights h normalised to [0, 1] at compile time. Each cell
(rows r, r + 1, columns c, c + 1) is split along its diagonal from (r, c) to (r + 1, c + 1)
into the triangles A = {(r + 1, c), (r, c), (r + 1, c + 1)} (above the diagonal) and
B = {(r, c), (r + 1, c + 1), (r, c + 1)}, and each triangle is the top of a convex prism with
vertical walls down to z = −base. MuJoCo tests every prism under the geom's bounding box on its
own: a sphere is shrunk to its centre and a capsule to its core segment, GJK finds the closest
points x₁ (on the prism) and w₂ (on the core), and if ‖w₂ − x₁‖ < R (R the geom's radius;
margin and gap only decide which contacts are kept, not the geometry) it reports one contact
per prism with

    n = (w₂ − x₁)/‖w₂ − x₁‖,    dist = ‖w₂ − x₁‖ − R,    pos = x₁ + n dist/2,

frame ``mju_makeFrame(n)`` (no tangent hint, capsules included), at most ``mjMAXCONPAIR`` (50)
contacts per geom pair, and no deduplication (a planning model may prune a sphere's contacts to
the deepest per direction inside the collision, ``task.map_contacts: pruned``:
:mod:`common.hfield_contacts`; the contacts kept are MuJoCo's, and this module sees only
those). Hence, on the field:

* over a triangle's interior: a face contact (n the triangle's normal);
* within √(R² − h²) of an edge shared by two triangles (h the core's height above it), the
  neighbouring prism adds an edge contact whose normal points from the edge to the core: two
  contacts, on a flat field too, at cell borders and diagonals alike;
* near a sample point: up to six (one per prism sharing it), those whose closest point is the
  sample identical to each other;
* at a steep rise (a step in the field): contacts with the vertical wall of a prism above the
  core (a horizontal normal) and with its vertical edges, besides the sloped faces'.

For a core outside the prism the closest points are a face, edge or vertex of the prism against
the centre, an end or an interior point of the segment, and GJK on a polytope against a point or
a segment stops on exactly that pair: MuJoCo's contact is the exact geometry to rounding, except
that its normal is a difference of two points |dist| apart, accurate to about 1e-15/|dist|.
A sphere whose centre is inside a prism, or outside it by at most ``ccd_tolerance`` (GJK's
distance counts as penetration there: a centre on the wall between two prisms), goes to EPA on
the full sphere, whose result is within 0.16 √ccd_tolerance (measured) of the exact one: the
nearest face (for a centre inside, the one below which it lies), n its outward normal,
dist = −(depth + R) — once EPA has converged. EPA converges on the depth, so within δ of the
face's edge its normal is only good to about ccd_tolerance/δ (8e-3 measured at δ = 8e-5 m).
And it stops after ``ccd_iterations``: at MuJoCo's default 35 a centre within about a
millimetre of two or three faces can stop unconverged (0.2 mm shallow, the normal 70° off), a
contact no feature reproduces; a planning model with a height field runs 200
(:data:`common.hfield_contacts.CCD_ITERATIONS`).

That is checked for every contact, not assumed: :func:`hfield_feature` recomputes the closest
points of the core to each prism that contains MuJoCo's x₁ = pos − n dist/2 and keeps the one
that reproduces MuJoCo's n, dist and x₁ to :data:`TOLERANCE` (√ccd_tolerance for EPA's
contacts, above). A contact none reproduces is not differentiated and the provider falls back
to finite differences for that knot, counted by reason: a capsule whose core enters a prism
(EPA on a segment), EPA stopped unconverged, libccd's MPR with ``nativeccd`` disabled, a
capsule parallel to a face or an edge (its closest points are not unique), GJK stopping on a
near tie.

The feature is static, so only the core moves: a face is a plane of fixed normal (the plane
case of :mod:`.contact_jacobian`, the frame fixed too), an edge a static segment of zero radius
and a vertex a static point of zero radius (the pair case, the field's side without dofs).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from derivatives.analytic.spatial import axpy3, cross3, dot3, mat_t_vec3, mat_vec3, sub3

HFIELD, CAPSULE = 1, 3
FACE, EDGE, VERTEX = 0, 1, 2
#: :func:`hfield_feature` results: the contact is reproduced, or it is not (see the module doc).
MATCHED, NOT_REPRODUCED = 0, 1
#: Largest difference (in metres for dist and x₁, absolute for the unit normal) between MuJoCo's
#: contact and the recomputed one for them to count as the same (measured agreement: 1e-15).
TOLERANCE = 1e-9
#: MuJoCo's normal is the normalised difference of two witness points |dist − margin| apart
#: (the core's closest points moved apart by the radius and the pair's margin; see
#: :func:`hfield_feature`), each rounded to about this (m): it is compared to
#: TOLERANCE + ROUNDING/|dist − margin|.
ROUNDING = 1e-14
#: A candidate prism may hold x₁ up to this far (in cell units) outside its triangle.
_SLACK = 1e-6
#: Below this ‖d₁ × d₂‖² / (‖d₁‖² ‖d₂‖²) a core segment and a prism edge count as parallel
#: (their closest points are then taken at the segment's start, which MuJoCo's unique closest
#: points of nearly parallel segments do not match: such a contact is not reproduced).
_PARALLEL = 1e-10

# prism vertices: 0, 1, 2 on top (the triangle's corners in MuJoCo's order), 3, 4, 5 below them
_FACES = np.array([[0, 1, 2, -1], [3, 4, 5, -1], [0, 1, 4, 3], [1, 2, 5, 4], [2, 0, 3, 5]],
                  dtype=np.int64)
_EDGES = np.array([[0, 1], [1, 2], [2, 0], [3, 4], [4, 5], [5, 3], [0, 3], [1, 4], [2, 5]],
                  dtype=np.int64)


@njit(inline="always")
def _row(v, i):
    return (v[i, 0], v[i, 1], v[i, 2])


@njit(inline="always")
def _segment_feature(t, i, j):
    """The feature of edge (i, j) at parameter t of its closest point: vertex i at t ≤ 0,
    vertex j at t ≥ 1, else the edge itself."""
    if t <= 0.0:
        return VERTEX, i, -1
    if t >= 1.0:
        return VERTEX, j, -1
    return EDGE, i, j


@njit(inline="always")
def _to_local(pos, mat, x):
    """x in the frame (pos, mat) of the field: matᵀ (x − pos)."""
    return mat_t_vec3(mat, sub3(x, pos))


@njit(cache=True, nogil=True)
def prism_vertices(m, hid, r, c, tri, out):
    """The six vertices of triangle ``tri`` (0: A, 1: B) of cell (r, c) of field ``hid``, in
    its frame, into ``out`` (6, 3): the top corners in MuJoCo's order, then below them."""
    size = m.hfield_size[hid]
    ncol = m.hfield_ncol[hid]
    adr = m.hfield_adr[hid]
    data = m.hfield_data
    dx = 2.0 * size[0] / (ncol - 1)
    dy = 2.0 * size[1] / (m.hfield_nrow[hid] - 1)
    for k in range(3):
        if tri == 0:
            rr = r + (1, 0, 1)[k]
            cc = c + (0, 0, 1)[k]
        else:
            rr = r + (0, 1, 0)[k]
            cc = c + (0, 1, 1)[k]
        out[k, 0] = out[k + 3, 0] = dx * cc - size[0]
        out[k, 1] = out[k + 3, 1] = dy * rr - size[1]
        out[k, 2] = data[adr + rr * ncol + cc] * size[2]
        out[k + 3, 2] = -size[3]


@njit(inline="always")
def _segment_closest(q, a, b):
    """Closest point of segment ab to q: (distance², point, parameter t ∈ [0, 1])."""
    ab = sub3(b, a)
    den = dot3(ab, ab)
    t = dot3(sub3(q, a), ab) / den if den > 0.0 else 0.0
    t = min(1.0, max(0.0, t))
    p = axpy3(a, t, ab)
    e = sub3(q, p)
    return dot3(e, e), p, t


@njit(cache=True, nogil=True)
def _point_prism(q, v):
    """Closest point of the boundary of the prism with vertices ``v`` to q: (signed distance,
    point, kind, i, j) with kind FACE, EDGE (between vertices i and j) or VERTEX (i).

    Outside: the minimum over the five faces of the closest point of each face polygon (the
    projection onto its plane if it falls inside, else the closest point of its boundary
    segments). Inside (q behind every face's plane): minus the depth below the nearest face's
    plane and the projection onto it (which lies in that face), kind FACE."""
    best = np.inf
    point = (0.0, 0.0, 0.0)
    kind = FACE
    bi = bj = -1
    centroid = (0.0, 0.0, 0.0)
    for i in range(6):
        centroid = axpy3(centroid, 1.0 / 6.0, _row(v, i))
    inside = True
    depth = np.inf
    deep_point = point
    deep_face = -1
    for f in range(5):
        k = 3 if f < 2 else 4
        idx = _FACES[f]
        p0 = _row(v, idx[0])
        # Newell's normal: robust for the walls' quadrilaterals (a wall end may have zero height)
        nrm = (0.0, 0.0, 0.0)
        for e in range(k):
            a = _row(v, idx[e])
            b = _row(v, idx[(e + 1) % k])
            nrm = (nrm[0] + (a[1] - b[1]) * (a[2] + b[2]), nrm[1] + (a[2] - b[2]) * (a[0] + b[0]),
                   nrm[2] + (a[0] - b[0]) * (a[1] + b[1]))
        nn = dot3(nrm, nrm)
        if nn > 0.0:
            s = dot3(sub3(q, p0), nrm) / nn
            proj = axpy3(q, -s, nrm)
            # the signed distance to the face's plane, positive outside the prism
            out = s * np.sqrt(nn)
            if dot3(sub3(centroid, p0), nrm) > 0.0:
                out = -out
            if out > 0.0:
                inside = False
            elif -out < depth:
                depth, deep_point, deep_face = -out, proj, f
            polygon = True
            for e in range(k):
                a = _row(v, idx[e])
                b = _row(v, idx[(e + 1) % k])
                if dot3(cross3(sub3(b, a), sub3(proj, a)), nrm) < 0.0:
                    polygon = False
                    break
            if polygon:
                d2 = s * s * nn
                if d2 < best:
                    best, point, kind, bi, bj = d2, proj, FACE, f, -1
                continue
        for e in range(k):
            i = idx[e]
            j = idx[(e + 1) % k]
            d2, p, t = _segment_closest(q, _row(v, i), _row(v, j))
            if d2 < best:
                best, point = d2, p
                kind, bi, bj = _segment_feature(t, i, j)
    if inside:
        return -depth, deep_point, FACE, deep_face, -1
    return np.sqrt(best), point, kind, bi, bj


@njit(cache=True, nogil=True)
def _edge_distance(q, v, f):
    """Distance from q (a point of face ``f`` of the prism ``v``) to the face's boundary."""
    k = 3 if f < 2 else 4
    idx = _FACES[f]
    best = np.inf
    for e in range(k):
        d2, _, _ = _segment_closest(q, _row(v, idx[e]), _row(v, idx[(e + 1) % k]))
        best = min(best, d2)
    return np.sqrt(best)


@njit(inline="always")
def _segments_closest(p1, d1, p2, d2):
    """Closest points of segments p1 + s d1 and p2 + t d2 (s, t ∈ [0, 1]; Ericson's
    algorithm): (s, t)."""
    r = sub3(p1, p2)
    a = dot3(d1, d1)
    e = dot3(d2, d2)
    f = dot3(d2, r)
    c = dot3(d1, r)
    b = dot3(d1, d2)
    den = a * e - b * b
    s = 0.0 if den <= _PARALLEL * a * e else min(1.0, max(0.0, (b * f - c * e) / den))
    t = (b * s + f) / e
    if t < 0.0:
        t = 0.0
        s = min(1.0, max(0.0, -c / a))
    elif t > 1.0:
        t = 1.0
        s = min(1.0, max(0.0, (b - c) / a))
    return s, t


@njit(cache=True, nogil=True)
def _segment_prism(c, half, v):
    """Closest points of the segment c ± half to the prism ``v``: the minimum over its two
    ends against the prism and the segment against the nine edges. Returns (distance, x₁ on
    the prism, w₂ on the segment, kind, i, j, segment parameter x ∈ [−1, 1]) with kind and
    i, j as :func:`_point_prism`; distance −1 if an end is inside the prism (a segment that
    crosses the prism without an end inside gets a positive distance that MuJoCo's contact
    does not match)."""
    best = np.inf
    x1 = w2 = (0.0, 0.0, 0.0)
    kind = FACE
    bi = bj = -1
    param = 0.0
    for side in (-1.0, 1.0):
        end = axpy3(c, side, half)
        dist, p, k, i, j = _point_prism(end, v)
        if dist < 0.0:
            return -1.0, x1, w2, kind, bi, bj, param
        if dist < best:
            best, x1, w2, kind, bi, bj, param = dist, p, end, k, i, j, side
    start = axpy3(c, -1.0, half)
    axis = (2.0 * half[0], 2.0 * half[1], 2.0 * half[2])
    for e in range(9):
        i = _EDGES[e, 0]
        j = _EDGES[e, 1]
        a = _row(v, i)
        s, t = _segments_closest(start, axis, a, sub3(_row(v, j), a))
        w = axpy3(start, s, axis)
        p = axpy3(a, t, sub3(_row(v, j), a))
        g = sub3(w, p)
        dist = np.sqrt(dot3(g, g))
        if dist < best:
            best, x1, w2, param = dist, p, w, 2.0 * s - 1.0
            kind, bi, bj = _segment_feature(t, i, j)
    return best, x1, w2, kind, bi, bj, param


@njit(cache=True, nogil=True)
def hfield_feature(m, d, c, dist, radius, tolerance, deep_tolerance, verts, margin=0.0):
    """The prism feature that contact c (geom 1 a height field, geom 2 a sphere or capsule of
    radius ``radius``; ``dist`` its distance, ``margin`` the pair's margin) comes from,
    recomputed and checked against MuJoCo's contact to ``tolerance`` (:data:`TOLERANCE`), or to
    ``deep_tolerance`` for a sphere whose centre is inside the prism (see the module doc);
    ``verts`` is (6, 3) scratch.

    MuJoCo takes the normal of a core outside the prism as the normalised difference of the
    witness points after moving them apart by the radius and the margin, |dist − margin|
    apart: a contact kept by the margin with dist just below it (a foot 1 mm above the field
    with the feet's 1 mm margin) has a normal rounded to about 1e-17/|dist − margin|
    (measured: 7e-10 at 1e-8, 8e-8 at 1e-10), which the normal's comparison allows for.

    Returns (status, kind, centre, half, x₁, x₂, free₂), points and vectors in world
    coordinates: status MATCHED or NOT_REPRODUCED; kind FACE, EDGE or VERTEX; for an
    edge its centre and half vector (its points are centre + x half, x ∈ [−1, 1], the closest
    at x = x₁); for a vertex the point (half = 0, x₁ = 0); x₂ ∈ [−1, 1] the closest point's
    parameter on the capsule's core segment centre + x₂ ℓ (0 for a sphere), free₂ whether it
    lies strictly inside.
    """
    zero = (0.0, 0.0, 0.0)
    g1 = d.contact_geom[c, 0]
    g2 = d.contact_geom[c, 1]
    hid = m.geom_dataid[g1]
    pos = (d.geom_xpos[g1, 0], d.geom_xpos[g1, 1], d.geom_xpos[g1, 2])
    mat = d.geom_xmat[g1]
    capsule = m.geom_type[g2] == CAPSULE
    core = _to_local(pos, mat, (d.geom_xpos[g2, 0], d.geom_xpos[g2, 1], d.geom_xpos[g2, 2]))
    half = zero
    if capsule:
        h = m.geom_size[g2, 1]
        xm = d.geom_xmat[g2]
        half = mat_t_vec3(mat, (xm[2] * h, xm[5] * h, xm[8] * h))
    # MuJoCo's contact in the field's frame: normal and closest point x₁ on the prism
    nrm = mat_t_vec3(mat, (d.contact_frame[c, 0], d.contact_frame[c, 1],
                             d.contact_frame[c, 2]))
    x1 = axpy3(_to_local(pos, mat, (d.contact_pos[c, 0], d.contact_pos[c, 1],
                                    d.contact_pos[c, 2])), -0.5 * dist, nrm)

    normal_tolerance = tolerance + ROUNDING / max(abs(dist - margin), 1e-300)
    size = m.hfield_size[hid]
    nrow = m.hfield_nrow[hid]
    ncol = m.hfield_ncol[hid]
    u = (x1[0] + size[0]) * (ncol - 1) / (2.0 * size[0])
    v = (x1[1] + size[1]) * (nrow - 1) / (2.0 * size[1])
    c_lo = max(0, int(np.floor(u - _SLACK)))
    c_hi = min(ncol - 2, int(np.floor(u + _SLACK)))
    r_lo = max(0, int(np.floor(v - _SLACK)))
    r_hi = min(nrow - 2, int(np.floor(v + _SLACK)))
    for r in range(r_lo, r_hi + 1):
        for col in range(c_lo, c_hi + 1):
            above = (v - r) - (u - col)  # ≥ 0 in triangle A, ≤ 0 in B
            for tri in range(2):
                if (tri == 0 and above < -_SLACK) or (tri == 1 and above > _SLACK):
                    continue
                prism_vertices(m, hid, r, col, tri, verts)
                # the core's signed distance to the prism (negative: a sphere's centre inside,
                # the depth below the nearest face), closest points and feature
                tol = tolerance
                ntol = normal_tolerance
                if capsule:
                    length, p, w, kind, i, j, x2 = _segment_prism(core, half, verts)
                    if length < 0.0:
                        continue
                else:
                    length, p, kind, i, j = _point_prism(core, verts)
                    w, x2 = core, 0.0
                    # MuJoCo's GJK takes a centre within ccd_tolerance of the prism (inside, or
                    # outside by less: on the wall between two prisms) as penetrating and hands
                    # the full sphere to EPA: the nearest face, to EPA's accuracy
                    if length < 0.0 or (kind == FACE
                                        and length <= deep_tolerance * deep_tolerance):
                        # EPA stops when its depth is within ccd_tolerance: a normal turned by θ
                        # towards the face's edge δ away changes the depth by about δθ, so the
                        # normal is only good to ccd_tolerance/δ near an edge
                        tol = deep_tolerance
                        ntol = deep_tolerance + deep_tolerance * deep_tolerance / max(
                            _edge_distance(p, verts, i), 1e-300)
                if length == 0.0:
                    continue
                g = sub3(w, p)
                if not (abs(length - radius - dist) <= tol
                        and max(abs(g[0] / length - nrm[0]), abs(g[1] / length - nrm[1]),
                                abs(g[2] / length - nrm[2])) <= ntol
                        and max(abs(p[0] - x1[0]), abs(p[1] - x1[1]),
                                abs(p[2] - x1[2])) <= tol):
                    continue
                free2 = capsule and -1.0 < x2 < 1.0
                if kind == FACE:
                    return MATCHED, FACE, zero, zero, 0.0, x2, free2
                a = _row(verts, i)
                if kind == VERTEX:
                    return (MATCHED, VERTEX, axpy3(pos, 1.0, mat_vec3(mat, a)), zero, 0.0,
                            x2, free2)
                b = _row(verts, j)
                mid = (0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1]), 0.5 * (a[2] + b[2]))
                hv = (0.5 * (b[0] - a[0]), 0.5 * (b[1] - a[1]), 0.5 * (b[2] - a[2]))
                x_1 = dot3(sub3(p, mid), hv) / dot3(hv, hv)
                return (MATCHED, EDGE, axpy3(pos, 1.0, mat_vec3(mat, mid)), mat_vec3(mat, hv),
                        x_1, x2, free2)
    return NOT_REPRODUCED, FACE, zero, zero, 0.0, 0.0, False
