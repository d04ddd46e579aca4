"""The model and the data every stage kernel takes, as numba StructRefs (MJX's ``Model`` and
``Data``, for compiled code).

numba spends about a quarter of a microsecond unboxing each array argument of a call from
Python, and a kernel signature listing every table it reads is hard to check against its
caller; two bundles fix both. ``ModelBundle`` holds the model's constant tables (built once per
provider by :func:`.provider.model_tables`); ``DataBundle`` holds views of one ``MjData``: the
fixed-address arrays ``mj_makeData`` allocates once (``qvel``, ``cdof``, ``cinert``, ...) and the
constraint and contact arrays of the arena, which every forward pass reallocates, so the driver
(:func:`.horizon.linearize_knots`) points those fields at the new arena after each pass.

``ConstraintBundle`` holds what the constraint stages compute for one knot and hand to each
other (per contact: efc address, cone dimension, friction; per row: jar, state, force, Hessian
block, impedance terms and the contact Jacobian derivatives), sized by that knot's counts.

Kernels read a bundle's fields into locals once: each attribute access increments a reference
count, which would cost something inside a loop.
"""

from __future__ import annotations

import mujoco
import numpy as np
from numba import njit, types
from numba.experimental import structref

#: Scalars of the model bundle's ``params`` array.
P_TIMESTEP, P_GRAVITY, P_IMPRATIO, P_IMPLICITFAST, P_ACTUATION = 0, 1, 4, 5, 6
P_CCD_TOLERANCE = 7
NPARAMS = 8

MODEL_FIELDS = (
    "body_parentid", "body_rootid", "body_dofadr", "body_dofnum", "body_subtree_end",
    "body_dof_end", "body_chain_end", "body_mass", "body_subtreemass", "dof_bodyid",
    "dof_parentid", "dof_group_start", "dof_group_end", "dof_free_translation", "rotation_dofs",
    "jnt_dofadr", "M_rownnz", "M_rowadr", "M_colind", "geom_type", "geom_bodyid", "geom_size",
    "geom_static", "dof_frictionloss", "actuator_dof", "actuator_gear", "actuator_gainprm",
    "actuator_biasprm", "ctrl_lo", "ctrl_hi", "force_lo", "force_hi", "passive_dq", "passive_dv",
    "damping", "sensor_type", "sensor_objtype", "sensor_objid", "sensor_bodyid", "sensor_adr",
    "sensor_dim", "sensor_cutoff", "geom_dataid", "hfield_size", "hfield_nrow", "hfield_ncol",
    "hfield_adr", "hfield_data", "params",
)
#: MjData's fixed-address arrays, read from the MjData itself.
FIXED_FIELDS = (
    "qpos", "qvel", "act", "qacc_warmstart", "qacc", "ctrl", "cdof", "cdof_dot", "cinert",
    "cvel", "subtree_com", "xpos", "xmat", "xipos", "ximat", "geom_xpos", "geom_xmat",
    "site_xpos", "site_xmat", "M",
    "actuator_length", "actuator_velocity", "actuator_force", "sensordata", "xfrc_applied",
)
#: Arena arrays: constraint rows (nefc), then fields of ``mjContact`` (ncon rows; strided views
#: of the contact structs).
ARENA_FIELDS = (
    "efc_type", "efc_id", "efc_J", "efc_pos", "efc_margin", "efc_D", "efc_KBIP", "efc_aref",
    "contact_geom", "contact_pos", "contact_frame", "contact_friction",
)
DATA_FIELDS = FIXED_FIELDS + ARENA_FIELDS
#: The single-knot driver (:func:`.horizon.linearize_state`): libmujoco addresses, the model and
#: the provider's own scratch data (pointers and bundles), the layout, a state buffer and the
#: index of the contact a status refers to.
DRIVER_FIELDS = (
    "mj_forward", "mj_getstate", "mj_setstate", "m_ptr", "d_ptr", "state_sig", "layout", "m",
    "d", "state", "info",
)
CONSTRAINT_FIELDS = (
    "contact_adr", "contact_dim", "contact_mu", "jar", "state", "force", "hessian",
    "block_start", "block_size", "rho", "kfac", "pos_jac", "dja", "djv",
)


@structref.register
class ModelBundleType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


@structref.register
class DataBundleType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


@structref.register
class KnotDriverType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


@structref.register
class ConstraintBundleType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class ModelBundle(structref.StructRefProxy):
    """The model's constant tables, in the order of :data:`MODEL_FIELDS`."""

    def __new__(cls, *values):
        # a cached constructor: numba's default one compiles anew in every process
        return _new_model_bundle(values)


class DataBundle(structref.StructRefProxy):
    """Views of one MjData's arrays, in the order of :data:`DATA_FIELDS`."""

    def __new__(cls, *values):
        return _new_data_bundle(values)


class KnotDriver(structref.StructRefProxy):
    """What a single-knot call needs besides the caller's data, in the order of
    :data:`DRIVER_FIELDS`: one argument instead of eleven, so the call from Python costs
    little more than the kernel."""

    def __new__(cls, *values):
        return _new_knot_driver(values)


class ConstraintBundle(structref.StructRefProxy):
    """One knot's constraint quantities, in the order of :data:`CONSTRAINT_FIELDS`."""

    def __new__(cls, *values):
        return _new_constraint_bundle(values)


structref.define_proxy(ModelBundle, ModelBundleType, list(MODEL_FIELDS))
structref.define_proxy(DataBundle, DataBundleType, list(DATA_FIELDS))
structref.define_proxy(KnotDriver, KnotDriverType, list(DRIVER_FIELDS))
structref.define_proxy(ConstraintBundle, ConstraintBundleType, list(CONSTRAINT_FIELDS))


@njit(cache=True)
def _new_model_bundle(values):
    return ModelBundle(*values)


@njit(cache=True)
def _new_data_bundle(values):
    return DataBundle(*values)


@njit(cache=True)
def _new_knot_driver(values):
    return KnotDriver(*values)


@njit(cache=True)
def _new_constraint_bundle(values):
    return ConstraintBundle(*values)


@njit(cache=True)
def _with_empty_arena(fixed, nv):
    """A data bundle of the fixed arrays and empty arena fields, typed like the driver's views
    of the arena (the same slicing of the same array kinds, so assigning them type-checks)."""
    ints = np.zeros((0, 2), dtype=np.int32)
    reals = np.zeros((0, 9))
    arena = (np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros((0, nv)),
             np.zeros(0), np.zeros(0), np.zeros(0), np.zeros((0, 4)), np.zeros(0),
             ints[:, 0:2], reals[:, 0:3], reals[:, 0:9], reals[:, 0:5])
    return DataBundle(*(fixed + arena))


def data_bundle(data: mujoco.MjData) -> DataBundle:
    """The bundle of ``data``'s fixed-address arrays, its arena fields empty until the driver
    points them at a forward pass's constraints and contacts."""
    return _with_empty_arena(tuple(getattr(data, f) for f in FIXED_FIELDS), data.qvel.shape[0])


@njit(cache=True, nogil=True)
def new_constraint_bundle(nefc, ncon, nv):
    """An uninitialised constraint bundle for ``nefc`` rows and ``ncon`` contacts (the Hessian
    and the contact Jacobian derivatives zeroed: stages write only their nonzero parts)."""
    return ConstraintBundle(
        np.empty(ncon, dtype=np.int64), np.empty(ncon, dtype=np.int64), np.empty(ncon),
        np.empty(nefc), np.empty(nefc, dtype=np.int64), np.empty(nefc), np.zeros((nefc, nefc)),
        np.empty(nefc, dtype=np.int64), np.empty(nefc, dtype=np.int64), np.empty(nefc),
        np.empty(nefc), np.empty((nefc, nv)), np.zeros((nefc, nv)), np.zeros((nefc, nv)))
