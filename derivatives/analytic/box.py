"""Sphere–box contacts: which face, edge or corner of a static box a sphere's contact comes from.

What MuJoCo 4.0 does (``mjraw_SphereBox``; geom 1 the sphere, radius r, centre c; geom 2 the
box, half sizes s, centre b, axes R; MuJoCo orders the pair by type, so the sphere is always
geom 1). In the box's frame the centre is x = Rᵀ (c − b), its closest point of the box
x̂ = clip(x, −s, s) and L = ‖x̂ − x‖:

* outside (L > ``mjMINVAL``): n = R (x̂ − x)/L, from the sphere into the box, and
  dist = L − r;
* centre inside the box (or on its surface): the face of least depth δ = s_k − |x_k| (the
  first of −x, +x, −y, +y, −z, +z on a tie), n = R e with e the unit vector along axis k
  pointing from that face into the box, dist = −δ − r;

pos = c + n (r + dist/2) in both (midway between the box's surface and the sphere's deepest
point), frame ``mju_makeFrame(n)`` (no tangent hint: MuJoCo zeroes the contact's tangent).
Margin and gap only decide whether the contact is kept. Checked against MuJoCo 4.0.0 over
random placements: position, frame and distance agree to 5e-15.

Which of x's coordinates the clip changes says where the centre is, and what moves the
contact when the centre does:

* none (inside) or one (over a face): a face of the box, a plane of fixed normal −n_face;
  inside, dist = n·(f − c) − r for a point f of that face, the continuation of the outside
  formula, so both are the plane case of :mod:`.contact_jacobian` with the box on the plane's
  side (the sphere is geom 1 here, so the contact's rows carry the opposite sign);
* two (axis k unclipped): the edge along axis k, a static segment of zero radius;
* three: the corner x̂, a static point of zero radius.

An edge or a corner is then the pair case, the box the side without dofs, as a height field's
edge or vertex is (:mod:`.hfield`). On the boundaries between these regions (the centre in a
plane through a face, a tie between two faces inside) the contact is not differentiable; the
region of the computed clip is used, as MuJoCo's.
"""

from __future__ import annotations

from numba import njit

from derivatives.analytic.hfield import EDGE, FACE, VERTEX
from derivatives.analytic.spatial import axpy3, mat_t_vec3, mat_vec3, row3, sub3


@njit(cache=True, nogil=True)
def sphere_box_feature(geom_xpos, geom_xmat, size, sphere, box):
    """The feature of box ``box`` (half sizes ``size``) nearest the centre of sphere ``sphere``
    (see the module doc): (kind, centre, half, x) with kind FACE (the centre over a face or
    inside the box), EDGE or VERTEX; for an edge its centre and half vector in world
    coordinates (its points are centre + t half, t ∈ [−1, 1], the closest at t = x); for a
    corner its point (half = 0, x = 0); zeros for a face."""
    zero = (0.0, 0.0, 0.0)
    mat = geom_xmat[box]
    local = mat_t_vec3(mat, sub3(row3(geom_xpos, sphere), row3(geom_xpos, box)))
    clipped = 0
    free = -1
    corner = [0.0, 0.0, 0.0]
    for i in range(3):
        v = local[i]
        if v > size[i]:
            corner[i] = size[i]
            clipped += 1
        elif v < -size[i]:
            corner[i] = -size[i]
            clipped += 1
        else:
            free = i
    if clipped < 2:
        return FACE, zero, zero, 0.0
    centre = axpy3(row3(geom_xpos, box), 1.0, mat_vec3(mat, (corner[0], corner[1], corner[2])))
    if clipped == 3:
        return VERTEX, centre, zero, 0.0
    half = [0.0, 0.0, 0.0]
    half[free] = size[free]
    return (EDGE, centre, mat_vec3(mat, (half[0], half[1], half[2])),
            local[free] / size[free])
