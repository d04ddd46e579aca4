"""All stages of one knot in one compiled call: MuJoCo's forward-pass data in, A, B, C, D out.

Every stage takes the model and the data bundles (:mod:`.bundles`), plus the constraint bundle
of the knot and a few explicit outputs. Order of the stages: constraint state and Hessian at the
solver's acceleration (:mod:`.constraint`), the integration matrix W and a_e (:mod:`.step`), RNEA
derivatives (:mod:`.rnea`), actuator derivatives (:mod:`.actuation`), contact-Jacobian
derivatives (:mod:`.contact_jacobian`), the implicit-function-theorem system and the discrete
Jacobians (:mod:`.step`), sensors (:mod:`.sensor`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from derivatives.analytic.actuation import actuator_derivatives
from derivatives.analytic.bundles import P_ACTUATION, P_IMPRATIO, new_constraint_bundle
from derivatives.analytic.constraint import (
    constraint_update,
    contact_rows,
    ift_terms,
    impedance_terms,
)
from derivatives.analytic.contact_jacobian import (
    GEOMETRY_NOT_REPRODUCED,
    GEOMETRY_OK,
    contact_jacobian_derivatives,
    contact_supported,
)
from derivatives.analytic.linalg import cholesky
from derivatives.analytic.rnea import rnea_derivatives
from derivatives.analytic.sensor import sensor_jacobians
from derivatives.analytic.step import discrete_jacobians, integration_matrix

OK, UNSUPPORTED_CONTACT, NOT_POSITIVE_DEFINITE, NOT_FINITE, SINGULAR_FRAME = 0, 1, 2, 3, 4
APPLIED_FORCES, HFIELD_NOT_REPRODUCED = 5, 6


@njit(cache=True, nogil=True)
def _smooth_rhs(m, dtau_dq, dbias_dv, dforce_dlen, dforce_dvel, dforce_dctrl, rhs):
    """rhs = [∂qfrc_smooth/∂q − ∂RNEA/∂q | ∂qfrc_smooth/∂v | ∂qfrc_actuator/∂u]: passive
    diagonals and the actuators' joint transmissions (qfrc = g force, length = g q)."""
    nv = dtau_dq.shape[0]
    passive_dq = m.passive_dq
    passive_dv = m.passive_dv
    actuator_dof = m.actuator_dof
    actuator_gear = m.actuator_gear
    for i in range(nv):
        for k in range(nv):
            rhs[i, k] = -dtau_dq[i, k]
            rhs[i, nv + k] = -dbias_dv[i, k]
        rhs[i, i] += passive_dq[i]
        rhs[i, nv + i] += passive_dv[i]
    for a in range(dforce_dlen.shape[0]):
        dof = actuator_dof[a]
        g = actuator_gear[a]
        rhs[dof, dof] += g * g * dforce_dlen[a]
        rhs[dof, nv + dof] += g * g * dforce_dvel[a]
        rhs[dof, 2 * nv + a] += g * dforce_dctrl[a]


@njit(cache=True, nogil=True)
def linearize_knot(m, d, A, B, C, D, with_sensors, info):
    """Fill A, B (and C, D when ``with_sensors``) at the forward-pass data ``d`` (its arena
    fields pointing at this pass's constraints and contacts); returns a status:
    OK, UNSUPPORTED_CONTACT (a contact the recipe does not cover is active; its index goes to
    ``info[0]``), SINGULAR_FRAME (a contact's geometry is singular: an upright capsule's
    turning friction frame, parallel capsules; index in ``info[0]``), HFIELD_NOT_REPRODUCED
    (a height-field contact no prism's exact closest points reproduce, :mod:`.hfield`; index
    in ``info[0]``), NOT_POSITIVE_DEFINITE, NOT_FINITE (a result is not finite) or
    APPLIED_FORCES (``xfrc_applied`` is set: its configuration derivative is not covered)."""
    nv = d.qvel.shape[0]
    nu = d.ctrl.shape[0]
    nefc = d.efc_type.shape[0]
    ncon = d.contact_geom.shape[0]
    params = m.params
    xfrc = d.xfrc_applied
    for b in range(xfrc.shape[0]):
        for i in range(6):
            if xfrc[b, i] != 0.0:
                return APPLIED_FORCES

    # --- constraints at the solution ---------------------------------------------------------
    efc = new_constraint_bundle(nefc, ncon, nv)
    contact_rows(d, efc)
    contact_adr = efc.contact_adr
    contact_mu = efc.contact_mu
    contact_geom = d.contact_geom
    contact_friction = d.contact_friction
    mu_scale = 1.0 / np.sqrt(max(1e-15, params[P_IMPRATIO]))
    for k in range(ncon):
        if contact_adr[k] >= 0 and not contact_supported(m.geom_type, m.geom_static,
                                                         contact_geom[k, 0], contact_geom[k, 1]):
            info[0] = k
            return UNSUPPORTED_CONTACT
        contact_mu[k] = contact_friction[k, 0] * mu_scale
    constraint_update(m, d, efc)
    impedance_terms(d, efc)

    # --- mass matrix, integration matrix W = M + h diag(d) and a_e = W⁻¹ M a ------------------
    M = np.empty((nv, nv))
    damping = m.damping.copy()
    damping_factor = np.empty((nv, nv))
    acc_e = np.empty((nv, 1))
    if not integration_matrix(m, d, M, damping, damping_factor, acc_e):
        return NOT_POSITIVE_DEFINITE
    qacc = d.qacc
    y = np.empty(nv)
    for i in range(nv):
        y[i] = qacc[i] - acc_e[i, 0]

    # --- smooth dynamics ----------------------------------------------------------------------
    dtau_dq = np.empty((nv, nv))
    dmy_dq = np.empty((nv, nv))
    dbias_dv = np.empty((nv, nv))
    rnea_derivatives(m, d, y, dtau_dq, dmy_dq, dbias_dv)
    dforce_dlen = np.zeros(nu)
    dforce_dvel = np.zeros(nu)
    dforce_dctrl = np.zeros(nu)
    if params[P_ACTUATION] != 0.0:
        actuator_derivatives(m, d, dforce_dlen, dforce_dvel, dforce_dctrl)
    rhs = np.zeros((nv, 2 * nv + nu))
    _smooth_rhs(m, dtau_dq, dbias_dv, dforce_dlen, dforce_dvel, dforce_dctrl, rhs)

    # --- constraint terms ---------------------------------------------------------------------
    djtf = np.zeros((nv, nv))
    geometry, contact = contact_jacobian_derivatives(m, d, efc, djtf)
    if geometry != GEOMETRY_OK:
        info[0] = contact
        return HFIELD_NOT_REPRODUCED if geometry == GEOMETRY_NOT_REPRODUCED else SINGULAR_FRAME
    for i in range(nv):
        for k in range(nv):
            rhs[i, k] += djtf[i, k]
    system = M.copy()
    ift_terms(d, efc, system, rhs[:, :nv], rhs[:, nv : 2 * nv])
    system_factor = np.empty((nv, nv))
    if not cholesky(system, system_factor):
        return NOT_POSITIVE_DEFINITE

    # --- discrete step ------------------------------------------------------------------------
    discrete_jacobians(m, d, system_factor, rhs, damping, damping_factor, acc_e[:, 0], dmy_dq,
                       A, B)

    if with_sensors:
        sensor_jacobians(m, d, dforce_dlen, dforce_dvel, dforce_dctrl, C, D)
        if not (np.all(np.isfinite(C)) and np.all(np.isfinite(D))):
            return NOT_FINITE
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(B))):
        return NOT_FINITE
    return OK
