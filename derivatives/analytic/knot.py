"""All stages of one knot in one compiled call: MuJoCo's forward-pass data in, A, B, C, D out.

The stage kernels take plain arrays. This driver takes two bundles instead (numba StructRefs):
the model's constant tables and the fixed-address arrays of one ``MjData`` (``qvel``, ``cdof``,
``cinert``, ...: ``mj_makeData`` allocates them once). numba spends about a quarter of a
microsecond unboxing each array argument, so passing the ~80 arrays one by one would cost more
than the arithmetic; the per-knot arguments are only the arena arrays (constraints and contacts,
reallocated by every forward pass) and the outputs.

Order of the stages: constraint state and Hessian at the solver's acceleration
(:mod:`.constraint`), the integration matrix W and a_e, RNEA derivatives (:mod:`.rnea`),
actuator derivatives (:mod:`.actuation`), contact-Jacobian derivatives
(:mod:`.contact_jacobian`), the implicit-function-theorem system and the discrete Jacobians
(:mod:`.step`), sensors (:mod:`.sensor`).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.experimental import structref

from derivatives.analytic.actuation import actuator_derivatives, implicit_damping
from derivatives.analytic.constraint import (
    constraint_update,
    contact_rows,
    ift_terms,
    impedance_terms,
)
from derivatives.analytic.contact_jacobian import (
    contact_jacobian_derivatives,
    contact_supported,
)
from derivatives.analytic.linalg import cholesky, cholesky_solve, dense_from_sparse
from derivatives.analytic.rnea import rnea_derivatives
from derivatives.analytic.sensor import sensor_jacobians
from derivatives.analytic.step import discrete_jacobians

OK, UNSUPPORTED_CONTACT, NOT_POSITIVE_DEFINITE, NOT_FINITE, SINGULAR_FRAME = 0, 1, 2, 3, 4
APPLIED_FORCES = 5

#: Scalars of the model bundle's ``params`` array.
P_TIMESTEP, P_GRAVITY, P_IMPRATIO, P_IMPLICITFAST, P_ACTUATION = 0, 1, 4, 5, 6
NPARAMS = 7

MODEL_FIELDS = (
    "body_parentid", "body_rootid", "body_dofadr", "body_dofnum", "body_subtree_end",
    "body_dof_end", "body_chain_end", "body_mass", "body_subtreemass", "dof_bodyid",
    "dof_parentid", "dof_group_start", "dof_group_end", "dof_free_translation", "rotation_dofs",
    "jnt_dofadr", "M_rownnz", "M_rowadr", "M_colind", "geom_type", "geom_bodyid", "geom_size",
    "geom_static", "dof_frictionloss", "actuator_dof", "actuator_gear", "actuator_gainprm",
    "actuator_biasprm", "ctrl_lo", "ctrl_hi", "force_lo", "force_hi", "passive_dq", "passive_dv",
    "damping", "sensor_type", "sensor_objtype", "sensor_objid", "sensor_bodyid", "sensor_adr",
    "sensor_dim", "sensor_cutoff", "params",
)
DATA_FIELDS = (
    "qpos", "qvel", "act", "qacc_warmstart", "qacc", "ctrl", "cdof", "cdof_dot", "cinert",
    "cvel", "subtree_com", "xpos", "xmat", "xipos", "ximat", "geom_xpos", "geom_xmat",
    "site_xpos", "site_xmat", "M",
    "actuator_length", "actuator_velocity", "actuator_force", "sensordata", "xfrc_applied",
)


@structref.register
class ModelBundleType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


@structref.register
class DataBundleType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class ModelBundle(structref.StructRefProxy):
    """The model's constant tables, in the order of :data:`MODEL_FIELDS`."""

    def __new__(cls, *values):
        # a cached constructor: numba's default one compiles anew in every process
        return _new_model_bundle(values)


class DataBundle(structref.StructRefProxy):
    """Views of one MjData's fixed-address arrays, in the order of :data:`DATA_FIELDS`."""

    def __new__(cls, *values):
        return _new_data_bundle(values)


structref.define_proxy(ModelBundle, ModelBundleType, list(MODEL_FIELDS))
structref.define_proxy(DataBundle, DataBundleType, list(DATA_FIELDS))


@njit(cache=True)
def _new_model_bundle(values):
    return ModelBundle(*values)


@njit(cache=True)
def _new_data_bundle(values):
    return DataBundle(*values)


@njit(cache=True, nogil=True)
def linearize_knot(mb, db, efc_type, efc_id, efc_J, efc_pos, efc_margin, efc_D, efc_KBIP,
                   efc_aref, contact_geom, contact_pos, contact_frame, contact_friction, A, B,
                   C, D, with_sensors, info):
    """Fill A, B (and C, D when ``with_sensors``) at the forward-pass data; returns a status:
    OK, UNSUPPORTED_CONTACT (a contact the recipe does not cover is active; its index goes to
    ``info[0]``), SINGULAR_FRAME (a capsule's turning friction frame is singular; index in
    ``info[0]``), NOT_POSITIVE_DEFINITE, NOT_FINITE (a result is not finite) or
    APPLIED_FORCES (``xfrc_applied`` is set: its configuration derivative is not covered)."""
    nv = db.qvel.shape[0]
    nu = db.ctrl.shape[0]
    nefc = efc_type.shape[0]
    ncon = contact_geom.shape[0]
    params = mb.params
    h = params[P_TIMESTEP]
    xfrc = db.xfrc_applied
    for b in range(xfrc.shape[0]):
        for i in range(6):
            if xfrc[b, i] != 0.0:
                return APPLIED_FORCES

    # --- constraints at the solution ---------------------------------------------------------
    contact_adr = np.empty(ncon, dtype=np.int64)
    contact_dim = np.empty(ncon, dtype=np.int64)
    contact_rows(efc_type, efc_id, ncon, contact_adr, contact_dim)
    contact_mu = np.empty(ncon)
    mu_scale = 1.0 / np.sqrt(max(1e-15, params[P_IMPRATIO]))
    for c in range(ncon):
        if contact_adr[c] >= 0 and not contact_supported(mb.geom_type, mb.geom_static,
                                                         contact_geom[c, 0], contact_geom[c, 1]):
            info[0] = c
            return UNSUPPORTED_CONTACT
        contact_mu[c] = contact_friction[c, 0] * mu_scale
    jar = np.empty(nefc)
    state = np.empty(nefc, dtype=np.int64)
    force = np.empty(nefc)
    hessian = np.zeros((nefc, nefc))
    block_start = np.empty(nefc, dtype=np.int64)
    block_size = np.empty(nefc, dtype=np.int64)
    constraint_update(efc_type, efc_id, efc_J, efc_D, efc_aref, mb.dof_frictionloss, db.qacc,
                      contact_adr, contact_dim, contact_mu, contact_friction, jar, state, force,
                      hessian, block_start, block_size)
    rho = np.empty(nefc)
    kfac = np.empty(nefc)
    pos_jac = np.empty((nefc, nv))
    impedance_terms(efc_type, efc_id, efc_J, efc_pos, efc_margin, efc_KBIP, contact_adr, rho,
                    kfac, pos_jac)

    # --- mass matrix, integration matrix W = M + h diag(d) and a_e = W⁻¹ M a ------------------
    M = np.empty((nv, nv))
    dense_from_sparse(db.M, mb.M_rownnz, mb.M_rowadr, mb.M_colind, M)
    damping = mb.damping.copy()
    if params[P_IMPLICITFAST] != 0.0 and params[P_ACTUATION] != 0.0:
        implicit_damping(mb.actuator_dof, mb.actuator_gear, mb.actuator_gainprm,
                         mb.actuator_biasprm, mb.force_lo, mb.force_hi, db.ctrl,
                         db.actuator_force, damping)
    W = M.copy()
    for i in range(nv):
        W[i, i] += h * damping[i]
    damping_factor = np.empty((nv, nv))
    if not cholesky(W, damping_factor):
        return NOT_POSITIVE_DEFINITE
    acc_e = np.empty((nv, 1))
    for i in range(nv):
        s = 0.0
        for k in range(nv):
            s += M[i, k] * db.qacc[k]
        acc_e[i, 0] = s
    cholesky_solve(damping_factor, acc_e)
    y = np.empty(nv)
    for i in range(nv):
        y[i] = db.qacc[i] - acc_e[i, 0]

    # --- smooth dynamics ----------------------------------------------------------------------
    dtau_dq = np.empty((nv, nv))
    dmy_dq = np.empty((nv, nv))
    dbias_dv = np.empty((nv, nv))
    rnea_derivatives(mb.body_parentid, mb.body_dofadr, mb.body_dofnum, mb.body_subtree_end,
                     mb.body_dof_end, mb.dof_bodyid, mb.dof_parentid, mb.dof_group_start,
                     mb.dof_group_end, mb.dof_free_translation, db.cdof, db.cdof_dot, db.cinert,
                     db.cvel, db.qvel, db.qacc, params[P_GRAVITY : P_GRAVITY + 3], y, dtau_dq,
                     dmy_dq, dbias_dv)
    dforce_dlen = np.zeros(nu)
    dforce_dvel = np.zeros(nu)
    dforce_dctrl = np.zeros(nu)
    if params[P_ACTUATION] != 0.0:
        actuator_derivatives(mb.actuator_gear, mb.actuator_gainprm, mb.actuator_biasprm,
                             mb.ctrl_lo, mb.ctrl_hi, mb.force_lo, mb.force_hi, db.ctrl,
                             db.actuator_length, db.actuator_velocity, db.actuator_force,
                             dforce_dlen, dforce_dvel, dforce_dctrl)
    rhs = np.zeros((nv, 2 * nv + nu))
    for i in range(nv):
        for k in range(nv):
            rhs[i, k] = -dtau_dq[i, k]
            rhs[i, nv + k] = -dbias_dv[i, k]
        rhs[i, i] += mb.passive_dq[i]
        rhs[i, nv + i] += mb.passive_dv[i]
    for a in range(nu):
        dof = mb.actuator_dof[a]
        g = mb.actuator_gear[a]
        rhs[dof, dof] += g * g * dforce_dlen[a]
        rhs[dof, nv + dof] += g * g * dforce_dvel[a]
        rhs[dof, 2 * nv + a] += g * dforce_dctrl[a]

    # --- constraint terms ---------------------------------------------------------------------
    dja = np.zeros((nefc, nv))
    djv = np.zeros((nefc, nv))
    djtf = np.zeros((nv, nv))
    singular = contact_jacobian_derivatives(
        mb.dof_parentid, mb.dof_group_start, mb.body_chain_end, mb.body_rootid, mb.geom_type,
        mb.geom_bodyid, mb.geom_size, db.geom_xmat, db.cdof, db.subtree_com, db.qacc, db.qvel,
        efc_type, efc_pos, force, contact_geom, contact_pos, contact_frame, contact_friction,
        contact_adr, contact_dim, dja, djv, djtf)
    if singular >= 0:
        info[0] = singular
        return SINGULAR_FRAME
    for i in range(nv):
        for k in range(nv):
            rhs[i, k] += djtf[i, k]
    system = M.copy()
    rhs_q = rhs[:, :nv]
    rhs_v = rhs[:, nv : 2 * nv]
    ift_terms(efc_J, hessian, block_start, block_size, efc_KBIP, force, rho, kfac, pos_jac, dja,
              djv, system, rhs_q, rhs_v)
    system_factor = np.empty((nv, nv))
    if not cholesky(system, system_factor):
        return NOT_POSITIVE_DEFINITE

    # --- discrete step ------------------------------------------------------------------------
    discrete_jacobians(system_factor, rhs, damping, damping_factor, h, db.qvel, acc_e[:, 0],
                       dmy_dq, mb.rotation_dofs, A, B)

    if with_sensors:
        sensor_jacobians(mb.sensor_type, mb.sensor_objtype, mb.sensor_objid, mb.sensor_bodyid,
                         mb.sensor_adr, mb.sensor_dim, mb.sensor_cutoff, mb.dof_parentid,
                         mb.dof_bodyid, mb.dof_group_start, mb.body_parentid, mb.body_chain_end,
                         mb.body_rootid, mb.body_subtree_end, mb.body_dofadr, mb.body_mass,
                         mb.body_subtreemass, mb.jnt_dofadr, mb.actuator_dof, mb.actuator_gear,
                         db.cdof, db.cvel, db.subtree_com, db.xpos, db.xmat, db.xipos, db.ximat,
                         db.geom_xpos, db.geom_xmat, db.site_xpos, db.site_xmat, db.qvel,
                         db.sensordata, dforce_dlen, dforce_dvel, dforce_dctrl, C, D)
        if not (np.all(np.isfinite(C)) and np.all(np.isfinite(D))):
            return NOT_FINITE
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(B))):
        return NOT_FINITE
    return OK
