"""Configuration derivatives of contact Jacobians: planes and height fields against spheres,
capsules (and box corners on planes), static boxes against spheres, and spheres and capsules
against each other.

A contact between a static plane (geom 1, normal n) and a point-like feature of a body b
(sphere centre, capsule end centre, box corner c, with radius r = 0 for a corner) sits at
p = c − n (r + dist/2). Its Jacobian rows, in the contact frame R = (n, t₁, t₂), are

    translational: R (v_lin + ω × (p − c₀)),      rotational: R ω,

with (ω, v_lin) = Σ_k cdof_k x_k over the dofs that move b. Perturbing dof j moves b with twist
s = cdof_j, so, as in :mod:`.rnea`,

    d(ω, v_lin) = s ×ₘ (V(x) − W₀(x)),     dc = s_v + s_ω × (c − c₀),     dp = (I − n nᵀ/2) dc

(the point slides: half the change of distance moves it along n). The plane's frame is constant
except for capsules, whose first tangent MuJoCo aligns with the capsule axis ℓ:
t₁ = normalize(ℓ − n (n·ℓ)), so dt₁ = (I − t₁t₁ᵀ)(dℓ − n (n·dℓ)) / ‖ℓ − n (n·ℓ)‖, dℓ = s_ω × ℓ,
dt₂ = n × dt₁. Isotropic elliptic cones do not see this rotation (it is left out for them),
pyramidal ones do.

Efc rows are the frame rows (elliptic: the first ``dim``) or pyramid edges J_n ± μ_k J_k. The
transposed product Jᵀf is the wrench W = (τ + (p − c₀) × F, F) of the contact force
(F = Rᵀ f_t, τ = Rᵀ f_r) read by every dof, (Jᵀf)_k = cdof_k · W, whose derivative is
cdof_k · dW for dofs that j does not turn and cdof_k · (dW − s ×* W) for those it turns.

Contacts between two spheres or capsules (self-collisions; either may be static) are
differentiated by :func:`_round_pair`: both bodies move, so the normal turns and the contact
point slides along both surfaces (see there).

A static height field's contact with a sphere or capsule comes from one face, edge or vertex
of one of its prisms (:mod:`.hfield` finds which, and checks that it reproduces MuJoCo's
contact): a face is the plane case with that face's fixed normal and a frame that does not
turn (MuJoCo gives height-field contacts no tangent hint), an edge or a vertex the pair case
with a static segment or point of zero radius on the field's side.

A moving sphere's contact with a static box (:mod:`.box` finds the region MuJoCo's closed
form puts it in) is the same: over a face or with the centre inside, the plane case (the
sphere is geom 1 there, so MuJoCo's rows are −R J(b₁) and its normal points into the box: the
plane case with the frame negated); over an edge or a corner, the pair case with the box's
static segment or point of zero radius as side 2.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from derivatives.analytic.box import sphere_box_feature
from derivatives.analytic.bundles import P_CCD_TOLERANCE
from derivatives.analytic.constraint import CONTACT_PYRAMIDAL
from derivatives.analytic.hfield import (
    EDGE,
    FACE,
    HFIELD,
    MATCHED,
    TOLERANCE,
    hfield_feature,
)
from derivatives.analytic.spatial import (
    FASTMATH,
    axpy3,
    axpy6,
    cross3,
    cross_force,
    cross_motion,
    dot3,
    dot_row6,
    point_velocity,
    row3,
    row6,
    store6,
    sub3,
    sub6,
)

PLANE, SPHERE, CAPSULE, BOX = 0, 2, 3, 6
#: What :func:`contact_jacobian_derivatives` returns about the contacts' geometry.
GEOMETRY_OK, GEOMETRY_SINGULAR, GEOMETRY_NOT_REPRODUCED = 0, 1, 2


#: Below this ‖ℓ₁ × ℓ₂‖² / (‖ℓ₁‖² ‖ℓ₂‖²) two capsules count as parallel: MuJoCo switches to
#: a branch with up to two contacts per pair at (numerically) zero, and the sliding of the
#: witness points grows as its inverse on the way there.
PARALLEL = 1e-10


@njit(cache=True, nogil=True)
def contact_supported(geom_type, geom_static, g1, g2):
    """True if the pair (g1, g2) is a static plane against a sphere, capsule or box, a static
    height field against a sphere or capsule, a sphere against a static box, or a sphere or
    capsule against a sphere or capsule."""
    t1, t2 = geom_type[g1], geom_type[g2]
    if t1 == SPHERE and t2 == BOX:
        return geom_static[g1] == 0 and geom_static[g2] == 1
    if t1 == PLANE:
        return geom_static[g1] == 1 and geom_static[g2] == 0 and t2 in (SPHERE, CAPSULE, BOX)
    if t1 == HFIELD:
        return geom_static[g1] == 1 and geom_static[g2] == 0 and t2 in (SPHERE, CAPSULE)
    return t1 in (SPHERE, CAPSULE) and t2 in (SPHERE, CAPSULE)


@njit(inline="always")
def _chain_of(b, body_chain_end, dof_parentid, chain):
    """The dofs that move body b, in increasing order, into ``chain``; returns their count."""
    n = 0
    k = body_chain_end[b]
    while k >= 0:
        n += 1
        k = dof_parentid[k]
    k = body_chain_end[b]
    for i in range(n - 1, -1, -1):
        chain[i] = k
        k = dof_parentid[k]
    return n


@njit(inline="always")
def _frame_force(efc_force, adr, dim, pyramidal, fr, c):
    """The contact force in its frame (normal, t₁, t₂, spin, roll₁, roll₂) from its efc rows
    (pyramid edges: f_n = Σ f_e, f_k = μ_k (f₊ − f₋))."""
    f0 = f1 = f2 = f3 = f4 = f5 = 0.0
    if pyramidal:
        for e in range(2 * (dim - 1)):
            f0 += efc_force[adr + e]
        if dim > 1:
            f1 = fr[c, 0] * (efc_force[adr] - efc_force[adr + 1])
        if dim > 2:
            f2 = fr[c, 1] * (efc_force[adr + 2] - efc_force[adr + 3])
        if dim > 3:
            f3 = fr[c, 2] * (efc_force[adr + 4] - efc_force[adr + 5])
        if dim > 4:
            f4 = fr[c, 3] * (efc_force[adr + 6] - efc_force[adr + 7])
            f5 = fr[c, 4] * (efc_force[adr + 8] - efc_force[adr + 9])
    else:
        f0 = efc_force[adr]
        if dim > 1:
            f1 = efc_force[adr + 1]
            f2 = efc_force[adr + 2]
        if dim > 3:
            f3 = efc_force[adr + 3]
        if dim > 4:
            f4 = efc_force[adr + 4]
            f5 = efc_force[adr + 5]
    return f0, f1, f2, f3, f4, f5


@njit(inline="always")
def _frame_rows(s, vel, unmoved, rel, dp, nrm, t1, t2):
    """Derivative of the frame rows (normal, t₁, t₂ of the point velocity, then of the angular
    velocity) of the twist ``vel`` along dof twist s, frame held fixed: dV = s ×ₘ (V − W₀),
    d(point velocity) = dV_v + dV_ω × (p − c₀) + V_ω × dp."""
    dvel = cross_motion(s, sub6(vel, unmoved))
    dv = point_velocity(dvel, rel)
    w = cross3((vel[0], vel[1], vel[2]), dp)
    dv = (dv[0] + w[0], dv[1] + w[1], dv[2] + w[2])
    dw = (dvel[0], dvel[1], dvel[2])
    return (dot3(nrm, dv), dot3(t1, dv), dot3(t2, dv), dot3(nrm, dw), dot3(t1, dw), dot3(t2, dw))


@njit(inline="always")
def _store_rows(out, j, d6, adr, dim, pyramidal, friction, c):
    """Column j of the efc rows of one contact from its frame-row derivative ``d6``."""
    if pyramidal:
        for e in range(1, dim):
            mu = friction[c, e - 1]
            out[adr + 2 * e - 2, j] = d6[0] + mu * d6[e]
            out[adr + 2 * e - 1, j] = d6[0] - mu * d6[e]
    else:
        for e in range(dim):
            out[adr + e, j] = d6[e]


@njit(inline="always")
def _segment(geom_type, geom_size, geom_xpos, geom_xmat, g):
    """Centre and half axis ℓ of geom g's core segment (a sphere's is a point: ℓ = 0)."""
    half = geom_size[g, 1] if geom_type[g] == CAPSULE else 0.0
    return (row3(geom_xpos, g),
            (geom_xmat[g, 2] * half, geom_xmat[g, 5] * half, geom_xmat[g, 8] * half))


@njit(inline="always")
def _clip(x):
    return min(1.0, max(-1.0, x))


@njit(inline="always")
def _witness_parameters(c1, a1, c2, a2, capsule1, capsule2):
    """MuJoCo's parameters x₁, x₂ ∈ [−1, 1] of the witness points wᵢ = cᵢ + xᵢ ℓᵢ of two core
    segments (geom 1 is never a capsule when geom 2 is a sphere: MuJoCo orders pairs by type),
    and the Gram terms (ℓ₁·ℓ₁, −ℓ₁·ℓ₂, ℓ₂·ℓ₂, their determinant).

    Sphere–capsule: the projection of the centre onto the segment, clipped. Capsule–capsule:
    the closest points of the two lines, (ℓ₁·ℓ₁) x₁ − (ℓ₁·ℓ₂) x₂ = −ℓ₁·(c₁ − c₂),
    (ℓ₁·ℓ₂) x₁ − (ℓ₂·ℓ₂) x₂ = −ℓ₂·(c₁ − c₂); if x₁ leaves [−1, 1] it is clipped and x₂
    re-projected from that end, then if x₂ leaves it, x₂ is clipped and x₁ re-projected (and
    clipped) — the same order as MuJoCo, so the same face of the clipping is active.
    """
    ma = dot3(a1, a1)
    mb = -dot3(a1, a2)
    mc = dot3(a2, a2)
    det = ma * mc - mb * mb
    dif = (c1[0] - c2[0], c1[1] - c2[1], c1[2] - c2[2])
    x1 = 0.0
    x2 = 0.0
    if capsule2 and not capsule1:
        x2 = _clip(dot3(a2, dif) / mc)
    elif capsule1 and capsule2 and det > 0.0:
        u = -dot3(a1, dif)
        v = dot3(a2, dif)
        x1 = (mc * u - mb * v) / det
        x2 = (ma * v - mb * u) / det
        if x1 > 1.0 or x1 < -1.0:
            x1 = _clip(x1)
            x2 = (v - mb * x1) / mc
        if x2 > 1.0 or x2 < -1.0:
            x2 = _clip(x2)
            x1 = _clip((u - mb * x2) / ma)
    return x1, x2, ma, mb, mc, det


@njit(inline="always")
def _body_side(m, d, b, side, chain, index, prefix):
    """Chain, dof positions and prefix sums of Σ cdof_k a_k, Σ cdof_k v_k (rows 0 and 1 of
    ``prefix[side]``) of body b; returns the chain length."""
    cdof = d.cdof
    qacc = d.qacc
    qvel = d.qvel
    n = _chain_of(b, m.body_chain_end, m.dof_parentid, chain[side])
    va = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    vv = va
    store6(prefix[side, 0], 0, va)
    store6(prefix[side, 1], 0, vv)
    for i in range(n):
        k = chain[side, i]
        index[side, k] = i
        ck = row6(cdof, k)
        va = axpy6(va, qacc[k], ck)
        vv = axpy6(vv, qvel[k], ck)
        store6(prefix[side, 0], i + 1, va)
        store6(prefix[side, 1], i + 1, vv)
    return n


@njit(inline="always")
def _relative_rows(s, moved1, moved2, p1, p2, v1, v2, rel1, rel2, dp, nrm, t1, t2, dn, dt1,
                   dt2):
    """Derivative along dof twist s of the frame rows R (v₂(p) − v₁(p); ω₂ − ω₁) of the
    relative twist, each body's twist Vᵢ = Σ cdof_k x_k with the part pᵢ that s does not turn
    (dVᵢ = s ×ₘ (Vᵢ − pᵢ) if s moves body i, else 0), the point moving by dp and the frame by
    (dn, dt₁, dt₂)."""
    z = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    dv1 = cross_motion(s, sub6(v1, p1)) if moved1 else z
    dv2 = cross_motion(s, sub6(v2, p2)) if moved2 else z
    lin = sub3(point_velocity(v2, rel2), point_velocity(v1, rel1))
    ang = (v2[0] - v1[0], v2[1] - v1[1], v2[2] - v1[2])
    dlin = sub3(point_velocity(dv2, rel2), point_velocity(dv1, rel1))
    w = cross3(ang, dp)
    dlin = (dlin[0] + w[0], dlin[1] + w[1], dlin[2] + w[2])
    dang = (dv2[0] - dv1[0], dv2[1] - dv1[1], dv2[2] - dv1[2])
    return (dot3(nrm, dlin) + dot3(dn, lin), dot3(t1, dlin) + dot3(dt1, lin),
            dot3(t2, dlin) + dot3(dt2, lin), dot3(nrm, dang) + dot3(dn, ang),
            dot3(t1, dang) + dot3(dt1, ang), dot3(t2, dang) + dot3(dt2, ang))


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _pair_derivatives(m, d, efc, djtf, c, chain, index, prefix):
    """Contact c between two spheres or capsules (either may be static): its columns of
    ``efc.dja``, ``efc.djv`` and its part of djtf += ∂(Jᵀf)/∂q (:func:`_round_pair`). False if
    its geometry is singular (parallel capsules, coincident witness points)."""
    geom_type = m.geom_type
    geom_size = m.geom_size
    g1 = d.contact_geom[c, 0]
    g2 = d.contact_geom[c, 1]
    capsule1 = geom_type[g1] == CAPSULE
    capsule2 = geom_type[g2] == CAPSULE
    cc1, a1 = _segment(geom_type, geom_size, d.geom_xpos, d.geom_xmat, g1)
    cc2, a2 = _segment(geom_type, geom_size, d.geom_xpos, d.geom_xmat, g2)
    x1, x2, ma, _, mc, det = _witness_parameters(cc1, a1, cc2, a2, capsule1, capsule2)
    if capsule1 and capsule2 and det <= PARALLEL * ma * mc:
        return False
    return _round_pair(m, d, efc, djtf, c, chain, index, prefix, cc1, a1, x1,
                       capsule1 and -1.0 < x1 < 1.0, geom_size[g1, 0], cc2, a2, x2,
                       capsule2 and -1.0 < x2 < 1.0, geom_size[g2, 0])


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _round_pair(m, d, efc, djtf, c, chain, index, prefix, cc1, a1, x1, free1, r1, cc2, a2, x2,
                free2, r2):
    """Contact c between round features of two bodies: its columns of ``efc.dja``,
    ``efc.djv`` and its part of djtf += ∂(Jᵀf)/∂q. False if the witness points coincide.

    Side i = 1, 2 (body bᵢ of geom i of the contact) is a segment cᵢ ± ℓᵢ (a point: ℓᵢ = 0)
    of radius rᵢ (a height field's or a box's edge or corner has radius 0);
    MuJoCo's contact joins the witness points wᵢ = cᵢ + xᵢ ℓᵢ (for two geoms,
    :func:`_witness_parameters`; parameter i is free if 0 < |xᵢ| < 1 is not clipped):
    e = w₂ − w₁, L = ‖e‖, n = e / L, dist = L − r₁ − r₂, p = w₁ + n (r₁ + dist/2), frame
    (n, t₁, t₂) with t₁ = normalize(y − n (n·y)), t₂ = n × t₁ and y = e_y if |n_y| < 1/2 else
    e_z (``mju_makeFrame``). The Jacobian rows are R (Jₚ(b₂, p) − Jₚ(b₁, p); J_ω(b₂) − J_ω(b₁)).

    Along dof j (twist s, moving body i if j is in its chain; material velocity
    uᵢ(x) = s_v + s_ω × (x − c₀ᵢ), dℓᵢ = s_ω × ℓᵢ, else 0), a free parameter stays stationary
    (ℓᵢ·(w₁ − w₂) = 0), so with δu = u₂(w₂) − u₁(w₁)

        (ℓ₁·ℓ₁) dx₁ − (ℓ₁·ℓ₂) dx₂ = dℓ₁·e + ℓ₁·δu,   (ℓ₁·ℓ₂) dx₁ − (ℓ₂·ℓ₂) dx₂ = dℓ₂·e + ℓ₂·δu

    over the free parameters (a clipped one has dxᵢ = 0 and drops its equation); then
    dwᵢ = uᵢ(wᵢ) + dxᵢ ℓᵢ, de = dw₂ − dw₁, dn = (I − n nᵀ) de / L, d dist = n·de,
    dp = dw₁ + dn (r₁ + dist/2) + n (d dist)/2, dt₁ = (I − t₁t₁ᵀ) (−dn (n·y) − n (dn·y)) / ‖y −
    n (n·y)‖, dt₂ = dn × t₁ + n × dt₁. Each body's twist changes as in the plane case
    (:func:`_relative_rows`), and Jᵀf reads the wrench ±Wᵢ = ±(τ + (p − c₀ᵢ) × F, F) on body
    i's dofs (+ for body 2), so d(Jᵀf)_k = ±cdof_k · (dWᵢ [− s ×* Wᵢ if j turns k]) with
    dWᵢ = (dτ + dp × F + (p − c₀ᵢ) × dF, dF), dF = dRᵀ f_t, dτ = dRᵀ f_r. Dofs in both chains
    (same tree) read W₂ − W₁ = 0 and are skipped.
    """
    geom_bodyid = m.geom_bodyid
    body_rootid = m.body_rootid
    dof_group_start = m.dof_group_start
    cdof = d.cdof
    subtree_com = d.subtree_com
    contact_geom = d.contact_geom
    contact_frame = d.contact_frame
    fr = d.contact_friction
    adr = efc.contact_adr[c]
    dim = efc.contact_dim[c]
    pyramidal = d.efc_type[adr] == CONTACT_PYRAMIDAL
    nv = cdof.shape[0]
    g1 = contact_geom[c, 0]
    g2 = contact_geom[c, 1]
    b1 = geom_bodyid[g1]
    b2 = geom_bodyid[g2]

    # --- geometry -----------------------------------------------------------------------------
    ma = dot3(a1, a1)
    mb = -dot3(a1, a2)
    mc = dot3(a2, a2)
    det = ma * mc - mb * mb
    w1 = axpy3(cc1, x1, a1)
    w2 = axpy3(cc2, x2, a2)
    e = sub3(w2, w1)
    length = np.sqrt(dot3(e, e))
    if length < 1e-12:
        return False
    n1 = _body_side(m, d, b1, 0, chain, index, prefix)
    n2 = _body_side(m, d, b2, 1, chain, index, prefix)
    same_tree = body_rootid[b1] == body_rootid[b2]
    c01 = row3(subtree_com, body_rootid[b1])
    c02 = row3(subtree_com, body_rootid[b2])
    lift = r1 + 0.5 * (length - r1 - r2)
    nrm = (contact_frame[c, 0], contact_frame[c, 1], contact_frame[c, 2])
    t1 = (contact_frame[c, 3], contact_frame[c, 4], contact_frame[c, 5])
    t2 = (contact_frame[c, 6], contact_frame[c, 7], contact_frame[c, 8])
    y = (0.0, 1.0, 0.0) if abs(nrm[1]) < 0.5 else (0.0, 0.0, 1.0)
    ny = dot3(nrm, y)
    ty = axpy3(y, -ny, nrm)
    perp = np.sqrt(dot3(ty, ty))
    p = row3(d.contact_pos, c)
    rel1 = sub3(p, c01)
    rel2 = sub3(p, c02)

    # --- force and wrenches -------------------------------------------------------------------
    f0, f1, f2, f3, f4, f5 = _frame_force(efc.force, adr, dim, pyramidal, fr, c)
    frc = (nrm[0] * f0 + t1[0] * f1 + t2[0] * f2, nrm[1] * f0 + t1[1] * f1 + t2[1] * f2,
           nrm[2] * f0 + t1[2] * f1 + t2[2] * f2)
    trq = (nrm[0] * f3 + t1[0] * f4 + t2[0] * f5, nrm[1] * f3 + t1[1] * f4 + t2[1] * f5,
           nrm[2] * f3 + t1[2] * f4 + t2[2] * f5)
    mo1 = cross3(rel1, frc)
    mo2 = cross3(rel2, frc)
    wrench1 = (trq[0] + mo1[0], trq[1] + mo1[1], trq[2] + mo1[2], frc[0], frc[1], frc[2])
    wrench2 = (trq[0] + mo2[0], trq[1] + mo2[1], trq[2] + mo2[2], frc[0], frc[1], frc[2])
    va1 = row6(prefix[0, 0], n1)
    vv1 = row6(prefix[0, 1], n1)
    va2 = row6(prefix[1, 0], n2)
    vv2 = row6(prefix[1, 1], n2)
    zero3 = (0.0, 0.0, 0.0)
    zero6 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

    for j in range(nv):
        i1 = index[0, j]
        i2 = index[1, j]
        moved1 = i1 >= 0
        moved2 = i2 >= 0
        if not (moved1 or moved2):
            continue
        s = row6(cdof, j)
        sw = (s[0], s[1], s[2])
        group = j - dof_group_start[j]
        first1 = i1 - group
        first2 = i2 - group
        # witness points: material motion, then sliding of the free parameters
        u1 = point_velocity(s, sub3(w1, c01)) if moved1 else zero3
        u2 = point_velocity(s, sub3(w2, c02)) if moved2 else zero3
        da1 = cross3(sw, a1) if moved1 else zero3
        da2 = cross3(sw, a2) if moved2 else zero3
        du = sub3(u2, u1)
        rhs1 = dot3(da1, e) + dot3(a1, du)
        rhs2 = -dot3(da2, e) - dot3(a2, du)
        dx1 = 0.0
        dx2 = 0.0
        if free1 and free2:
            dx1 = (mc * rhs1 - mb * rhs2) / det
            dx2 = (ma * rhs2 - mb * rhs1) / det
        elif free1:
            dx1 = rhs1 / ma
        elif free2:
            dx2 = rhs2 / mc
        de = sub3(axpy3(u2, dx2, a2), axpy3(u1, dx1, a1))
        nde = dot3(nrm, de)
        dn = ((de[0] - nrm[0] * nde) / length, (de[1] - nrm[1] * nde) / length,
              (de[2] - nrm[2] * nde) / length)
        dw1 = axpy3(u1, dx1, a1)
        dp = axpy3(axpy3(dw1, lift, dn), 0.5 * nde, nrm)
        dty = axpy3(axpy3(zero3, -ny, dn), -dot3(dn, y), nrm)
        td = dot3(t1, dty)
        dt1 = ((dty[0] - t1[0] * td) / perp, (dty[1] - t1[1] * td) / perp,
               (dty[2] - t1[2] * td) / perp)
        c1 = cross3(dn, t1)
        c2 = cross3(nrm, dt1)
        dt2 = (c1[0] + c2[0], c1[1] + c2[1], c1[2] + c2[2])

        p1a = row6(prefix[0, 0], first1) if moved1 else zero6
        p1v = row6(prefix[0, 1], first1) if moved1 else zero6
        p2a = row6(prefix[1, 0], first2) if moved2 else zero6
        p2v = row6(prefix[1, 1], first2) if moved2 else zero6
        d6a = _relative_rows(s, moved1, moved2, p1a, p2a, va1, va2, rel1, rel2, dp, nrm, t1,
                             t2, dn, dt1, dt2)
        d6v = _relative_rows(s, moved1, moved2, p1v, p2v, vv1, vv2, rel1, rel2, dp, nrm, t1,
                             t2, dn, dt1, dt2)
        _store_rows(efc.dja, j, d6a, adr, dim, pyramidal, fr, c)
        _store_rows(efc.djv, j, d6v, adr, dim, pyramidal, fr, c)

        dfrc = (dn[0] * f0 + dt1[0] * f1 + dt2[0] * f2, dn[1] * f0 + dt1[1] * f1 + dt2[1] * f2,
                dn[2] * f0 + dt1[2] * f1 + dt2[2] * f2)
        dtrq = (dn[0] * f3 + dt1[0] * f4 + dt2[0] * f5, dn[1] * f3 + dt1[1] * f4 + dt2[1] * f5,
                dn[2] * f3 + dt1[2] * f4 + dt2[2] * f5)
        mp = cross3(dp, frc)
        for side in range(2):
            if side == 0:
                rel, wrench, moved, first, count, sign = rel1, wrench1, moved1, first1, n1, -1.0
            else:
                rel, wrench, moved, first, count, sign = rel2, wrench2, moved2, first2, n2, 1.0
            mf = cross3(rel, dfrc)
            dwrench = (dtrq[0] + mp[0] + mf[0], dtrq[1] + mp[1] + mf[1],
                       dtrq[2] + mp[2] + mf[2], dfrc[0], dfrc[1], dfrc[2])
            turned = sub6(dwrench, cross_force(s, wrench))
            for ik in range(count):
                k = chain[side, ik]
                if same_tree and index[1 - side, k] >= 0:
                    continue
                djtf[k, j] += sign * dot_row6(cdof, k, turned if moved and ik >= first
                                              else dwrench)
    _clear_pair(chain, index, n1, n2)
    return True


@njit(inline="always")
def _clear_pair(chain, index, n1, n2):
    """Reset the dof positions of both sides to −1 for the next contact."""
    for i in range(n1):
        index[0, chain[0, i]] = -1
    for i in range(n2):
        index[1, chain[1, i]] = -1


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _plane_rows(m, d, efc, djtf, c, radius, rotating, chain, prefix_a, prefix_v, sign):
    """Contact c of a static plane (or a height field's or a box's face: a plane of fixed
    normal) with a point-like feature of radius ``radius`` of a body: its columns of
    ``efc.dja``, ``efc.djv`` and its part of djtf += ∂(Jᵀf)/∂q (see the module doc).
    ``rotating``: MuJoCo turns the frame's first tangent with the capsule's axis and the cone
    can tell. False if that frame is singular (the capsule within a millidegree of upright).

    ``sign`` 1: the plane is geom 1 and the feature geom 2's. ``sign`` −1: the other way round
    (a sphere, geom 1, on a box's face, geom 2): MuJoCo's rows R (J(b₂) − J(b₁)) are then
    −R J(b₁) and its normal points into the plane, and with the frame read as −R both are the
    first case's (c = p − (−n)(r + dist/2), the same sliding of p)."""
    dof_parentid = m.dof_parentid
    dof_group_start = m.dof_group_start
    body_chain_end = m.body_chain_end
    body_rootid = m.body_rootid
    cdof = d.cdof
    qacc = d.qacc
    qvel = d.qvel
    fr = d.contact_friction
    contact_frame = d.contact_frame
    dja = efc.dja
    djv = efc.djv
    adr = efc.contact_adr[c]
    dim = efc.contact_dim[c]
    pyramidal = d.efc_type[adr] == CONTACT_PYRAMIDAL
    g = d.contact_geom[c, 1 if sign > 0 else 0]  # the moving feature's geom
    zero3 = (0.0, 0.0, 0.0)
    b = m.geom_bodyid[g]
    n = _chain_of(b, body_chain_end, dof_parentid, chain)
    c0 = row3(d.subtree_com, body_rootid[b])
    va = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    vv = va
    store6(prefix_a, 0, va)
    store6(prefix_v, 0, vv)
    for i in range(n):
        k = chain[i]
        ck = row6(cdof, k)
        va = axpy6(va, qacc[k], ck)
        vv = axpy6(vv, qvel[k], ck)
        store6(prefix_a, i + 1, va)
        store6(prefix_v, i + 1, vv)
    nrm = (sign * contact_frame[c, 0], sign * contact_frame[c, 1], sign * contact_frame[c, 2])
    t1 = (sign * contact_frame[c, 3], sign * contact_frame[c, 4], sign * contact_frame[c, 5])
    t2 = (sign * contact_frame[c, 6], sign * contact_frame[c, 7], sign * contact_frame[c, 8])
    p = row3(d.contact_pos, c)
    lift = radius + 0.5 * d.efc_pos[adr]
    rel = (p[0] - c0[0], p[1] - c0[1], p[2] - c0[2])
    crel = (rel[0] + nrm[0] * lift, rel[1] + nrm[1] * lift, rel[2] + nrm[2] * lift)
    perp = 1.0
    axis = zero3
    if rotating:
        geom_xmat = d.geom_xmat
        axis = (geom_xmat[g, 2], geom_xmat[g, 5], geom_xmat[g, 8])
        na = dot3(nrm, axis)
        perp = np.sqrt(max(1.0 - na * na, 0.0))
        if perp < 1e-5:
            return False

    f0, f1, f2, f3, f4, f5 = _frame_force(efc.force, adr, dim, pyramidal, fr, c)
    frc = (nrm[0] * f0 + t1[0] * f1 + t2[0] * f2, nrm[1] * f0 + t1[1] * f1 + t2[1] * f2,
           nrm[2] * f0 + t1[2] * f1 + t2[2] * f2)
    trq = (nrm[0] * f3 + t1[0] * f4 + t2[0] * f5, nrm[1] * f3 + t1[1] * f4 + t2[1] * f5,
           nrm[2] * f3 + t1[2] * f4 + t2[2] * f5)
    moment = cross3(rel, frc)
    wrench = (trq[0] + moment[0], trq[1] + moment[1], trq[2] + moment[2], frc[0], frc[1],
              frc[2])
    vp_a = point_velocity(va, rel)
    vp_v = point_velocity(vv, rel)

    for i in range(n):
        j = chain[i]
        s = row6(cdof, j)
        first = i - (j - dof_group_start[j])
        # the point slides: dp = (I − n nᵀ/2) dc
        dc = point_velocity(s, crel)
        dn = 0.5 * dot3(nrm, dc)
        dp = (dc[0] - nrm[0] * dn, dc[1] - nrm[1] * dn, dc[2] - nrm[2] * dn)
        dt1 = zero3
        dt2 = zero3
        if rotating:
            da = cross3((s[0], s[1], s[2]), axis)
            nd = dot3(nrm, da)
            da = (da[0] - nrm[0] * nd, da[1] - nrm[1] * nd, da[2] - nrm[2] * nd)
            td = dot3(t1, da)
            dt1 = ((da[0] - t1[0] * td) / perp, (da[1] - t1[1] * td) / perp,
                   (da[2] - t1[2] * td) / perp)
            dt2 = cross3(nrm, dt1)
        d6a = _frame_rows(s, va, row6(prefix_a, first), rel, dp, nrm, t1, t2)
        d6v = _frame_rows(s, vv, row6(prefix_v, first), rel, dp, nrm, t1, t2)
        if rotating:
            d6a = (d6a[0], d6a[1] + dot3(dt1, vp_a), d6a[2] + dot3(dt2, vp_a), d6a[3],
                   d6a[4] + dt1[0] * va[0] + dt1[1] * va[1] + dt1[2] * va[2],
                   d6a[5] + dt2[0] * va[0] + dt2[1] * va[1] + dt2[2] * va[2])
            d6v = (d6v[0], d6v[1] + dot3(dt1, vp_v), d6v[2] + dot3(dt2, vp_v), d6v[3],
                   d6v[4] + dt1[0] * vv[0] + dt1[1] * vv[1] + dt1[2] * vv[2],
                   d6v[5] + dt2[0] * vv[0] + dt2[1] * vv[1] + dt2[2] * vv[2])
        _store_rows(dja, j, d6a, adr, dim, pyramidal, fr, c)
        _store_rows(djv, j, d6v, adr, dim, pyramidal, fr, c)

        # dW = (dτ + dp × F + (p − c₀) × dF, dF) with dF = dRᵀ f_t, dτ = dRᵀ f_r
        dfrc = (dt1[0] * f1 + dt2[0] * f2, dt1[1] * f1 + dt2[1] * f2,
                dt1[2] * f1 + dt2[2] * f2)
        dtrq = (dt1[0] * f4 + dt2[0] * f5, dt1[1] * f4 + dt2[1] * f5,
                dt1[2] * f4 + dt2[2] * f5)
        m1 = cross3(dp, frc)
        m2 = cross3(rel, dfrc)
        dwrench = (dtrq[0] + m1[0] + m2[0], dtrq[1] + m1[1] + m2[1],
                   dtrq[2] + m1[2] + m2[2], dfrc[0], dfrc[1], dfrc[2])
        # dofs that j turns read dW − s ×* W, the others dW
        turned = sub6(dwrench, cross_force(s, wrench))
        for i2 in range(n):
            k = chain[i2]
            djtf[k, j] += dot_row6(cdof, k, turned if i2 >= first else dwrench)
    return True


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def contact_jacobian_derivatives(m, d, efc, djtf):
    """``efc.dja`` = (∂J/∂q) a, ``efc.djv`` = (∂J/∂q) v (nefc, nv; rows of other constraints
    untouched) and djtf += ∂(Jᵀf)/∂q with f = ``efc.force`` fixed (nv, nv), for all contacts
    (a = ``d.qacc``, v = ``d.qvel``).

    Returns (status, contact): (GEOMETRY_OK, −1), or the first contact that is not
    differentiated and why: GEOMETRY_SINGULAR (a capsule within a millidegree of upright on a
    plane under a pyramidal or anisotropic cone, where MuJoCo's frame itself jumps; two
    parallel capsules; coincident centres) or GEOMETRY_NOT_REPRODUCED (a height-field contact
    that no prism's exact closest points reproduce: :mod:`.hfield`).
    """
    geom_type = m.geom_type
    geom_size = m.geom_size
    contact_geom = d.contact_geom
    contact_friction = d.contact_friction
    contact_adr = efc.contact_adr
    contact_dim = efc.contact_dim
    efc_type = d.efc_type
    nv = d.cdof.shape[0]
    chain = np.empty(nv, dtype=np.int64)
    # prefix sums of cdof_k a_k and cdof_k v_k along the chain: the motion of the dofs before
    # each one (what it does not turn)
    prefix_a = np.empty((nv + 1, 6))
    prefix_v = np.empty((nv + 1, 6))
    # per side of a contact between two moving bodies: chain, position of each dof in it (−1:
    # not in it), motion prefix sums over acceleration and velocity
    pair_chain = np.empty((2, nv), dtype=np.int64)
    pair_index = np.full((2, nv), -1, dtype=np.int64)
    pair_prefix = np.empty((2, 2, nv + 1, 6))
    verts = np.empty((6, 3))
    # MuJoCo's contact for a sphere centre inside a prism comes from EPA (see .hfield)
    deep_tolerance = np.sqrt(m.params[P_CCD_TOLERANCE])
    for c in range(contact_adr.shape[0]):
        adr = contact_adr[c]
        if adr < 0:
            continue
        g1 = contact_geom[c, 0]
        g2 = contact_geom[c, 1]
        t1 = geom_type[g1]
        if t1 == PLANE:
            # the turning frame matters to pyramids and anisotropic friction only; for
            # isotropic elliptic cones it cancels exactly, and leaving it out avoids
            # 1/‖ℓ − n (n·ℓ)‖ for a capsule standing upright
            fr = contact_friction
            dim = contact_dim[c]
            rotating = geom_type[g2] == CAPSULE and dim > 1 and (
                efc_type[adr] == CONTACT_PYRAMIDAL or fr[c, 0] != fr[c, 1]
                or (dim == 6 and fr[c, 3] != fr[c, 4]))
            radius = geom_size[g2, 0] if geom_type[g2] != BOX else 0.0
            if not _plane_rows(m, d, efc, djtf, c, radius, rotating, chain, prefix_a,
                               prefix_v, 1.0):
                return GEOMETRY_SINGULAR, c
        elif t1 == HFIELD:
            radius = geom_size[g2, 0]
            status, kind, centre, half, x1, x2, free2 = hfield_feature(
                m, d, c, d.efc_pos[adr], radius, TOLERANCE, deep_tolerance, verts,
                d.efc_margin[adr])
            if status != MATCHED:
                return GEOMETRY_NOT_REPRODUCED, c
            if kind == FACE:
                # a plane of fixed normal; MuJoCo's frame has no tangent hint: fixed too
                if not _plane_rows(m, d, efc, djtf, c, radius, False, chain, prefix_a,
                                   prefix_v, 1.0):
                    return GEOMETRY_SINGULAR, c
            else:
                cc2, a2 = _segment(geom_type, geom_size, d.geom_xpos, d.geom_xmat, g2)
                if not _round_pair(m, d, efc, djtf, c, pair_chain, pair_index, pair_prefix,
                                   centre, half, x1, kind == EDGE, 0.0, cc2, a2, x2, free2,
                                   radius):
                    return GEOMETRY_SINGULAR, c
        elif geom_type[g2] == BOX:
            # a sphere (geom 1) on a static box (:mod:`.box`)
            radius = geom_size[g1, 0]
            kind, centre, half, x2 = sphere_box_feature(d.geom_xpos, d.geom_xmat,
                                                        geom_size[g2], g1, g2)
            if kind == FACE:
                # a plane of fixed normal, the box on geom 2's side; no tangent hint
                if not _plane_rows(m, d, efc, djtf, c, radius, False, chain, prefix_a,
                                   prefix_v, -1.0):
                    return GEOMETRY_SINGULAR, c
            elif not _round_pair(m, d, efc, djtf, c, pair_chain, pair_index, pair_prefix,
                                 row3(d.geom_xpos, g1), (0.0, 0.0, 0.0), 0.0, False, radius,
                                 centre, half, x2, kind == EDGE, 0.0):
                return GEOMETRY_SINGULAR, c
        elif not _pair_derivatives(m, d, efc, djtf, c, pair_chain, pair_index, pair_prefix):
            return GEOMETRY_SINGULAR, c
    return GEOMETRY_OK, -1
