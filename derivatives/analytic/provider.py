"""The ``analytic`` derivative backend: exact A, B, C, D in closed form, no finite differences.

Per knot: MuJoCo's forward pass (``mj_forward``, warm-started from the trajectory's solver
acceleration) on a scratch ``MjData``, then the closed form (:func:`.knot.linearize_knot`)
that differentiates what it computed. Worker threads, each with its own ``MjData``, take a
horizon's knots one at a time in one compiled call each (:func:`.horizon.linearize_knots`)
that releases the GIL: no Python runs per knot. They can start while the planner's rollout is
still recording the trajectory (:meth:`AnalyticProvider.stream`).

Fallbacks to finite differences (:func:`derivatives.fd.transition_fd`, counted by
:func:`derivatives.counter.fd_evaluations`) happen only where the recipe does not apply, each
announced once with an :class:`AnalyticFallbackWarning`:

* the whole model, if :func:`.gate.unsupported_features` names anything;
* one knot, if a contact the recipe does not cover is active there (a geometry other than
  sphere, capsule or box against a static plane, sphere and capsule against a static height
  field or a sphere against a static box, a pair of moving geometries other than spheres and
  capsules), if a contact's
  geometry is singular (an upright capsule on a plane under a pyramidal cone, parallel
  capsules), if a height-field contact is not reproduced by the exact geometry
  (:mod:`.hfield`), if ``xfrc_applied`` is set, if a system
  matrix is not positive definite or if a result is not finite.

The model's constants (masses, actuator and sensor parameters, ...) are read when the provider
is built: build a new one after changing them. Height-field samples are the exception: the
kernels read the model's ``hfield_data`` itself, so heights changed in place take effect at
the next call (sizes and grid dimensions are constants). Its options (timestep, gravity, integrator,
cone, flags, ...) are checked at every call and the provider reconfigures itself when they
changed; solver settings (tolerance, iterations) take effect at each forward pass anyway.
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import ClassVar

import mujoco
import numpy as np

from common.handover import READY, SCHED_YIELD, STOPPED, new_progress
from common.libmujoco import MJ_FORWARD, MJ_GETSTATE, MJ_SETSTATE
from common.trajectory import Trajectory
from derivatives.analytic import gate
from derivatives.analytic.bundles import (
    MODEL_FIELDS,
    NPARAMS,
    P_ACTUATION,
    P_CCD_TOLERANCE,
    P_GRAVITY,
    P_IMPLICITFAST,
    P_IMPRATIO,
    P_TIMESTEP,
    KnotDriver,
    ModelBundle,
    data_bundle,
)
from derivatives.analytic.horizon import linearize_knots, linearize_state
from derivatives.analytic.knot import (
    APPLIED_FORCES,
    HFIELD_NOT_REPRODUCED,
    NOT_FINITE,
    OK,
    SINGULAR_FRAME,
    UNSUPPORTED_CONTACT,
)
from derivatives.analytic.layout import data_layout
from derivatives.analytic.passive import integrated_damping, passive_derivatives
from derivatives.analytic.tables import TreeTables
from derivatives.counter import add_fd_evaluations, record_fallback
from derivatives.fd import FDProvider, transition_fd
from derivatives.provider_base import DerivativeProvider, Linearization, load_knot

log = logging.getLogger(__name__)
_D = mujoco.mjtDisableBit
_INTEGRATION = mujoco.mjtState.mjSTATE_INTEGRATION


class AnalyticFallbackWarning(UserWarning):
    """Part of a linearization is computed by finite differences instead."""


def model_tables(m: mujoco.MjModel) -> dict[str, np.ndarray]:
    """The constant tables of ``m`` that the stage kernels read, by field name
    (:data:`.bundles.MODEL_FIELDS`)."""
    t = TreeTables.of(m)
    disabled = m.opt.disableflags

    def off(flag) -> bool:
        return bool(disabled & int(flag))

    i64 = np.int64
    passive_dq, passive_dv = passive_derivatives(m)
    damping = integrated_damping(m)
    implicitfast = m.opt.integrator == mujoco.mjtIntegrator.mjINT_IMPLICITFAST

    nu = m.nu
    gain = np.zeros((nu, 3))
    bias = np.zeros((nu, 3))
    affine_gain = m.actuator_gaintype == mujoco.mjtGain.mjGAIN_AFFINE
    gain[:, 0] = m.actuator_gainprm[:, 0]
    gain[affine_gain, 1:] = m.actuator_gainprm[affine_gain, 1:3]
    affine_bias = m.actuator_biastype == mujoco.mjtBias.mjBIAS_AFFINE
    bias[affine_bias] = m.actuator_biasprm[affine_bias, :3]
    clamp = m.actuator_ctrllimited.astype(bool) & (not off(_D.mjDSBL_CLAMPCTRL))
    ctrl_lo = np.where(clamp, m.actuator_ctrlrange[:, 0], -np.inf)
    ctrl_hi = np.where(clamp, m.actuator_ctrlrange[:, 1], np.inf)
    flim = m.actuator_forcelimited.astype(bool)
    force_lo = np.where(flim, m.actuator_forcerange[:, 0], -np.inf)
    force_hi = np.where(flim, m.actuator_forcerange[:, 1], np.inf)

    sensor_bodyid = np.zeros(m.nsensor, dtype=i64)
    for i in range(m.nsensor):
        objtype, objid = m.sensor_objtype[i], m.sensor_objid[i]
        if objtype == mujoco.mjtObj.mjOBJ_SITE:
            sensor_bodyid[i] = m.site_bodyid[objid]
        elif objtype == mujoco.mjtObj.mjOBJ_GEOM:
            sensor_bodyid[i] = m.geom_bodyid[objid]
        elif objtype in (int(mujoco.mjtObj.mjOBJ_BODY), int(mujoco.mjtObj.mjOBJ_XBODY)):
            sensor_bodyid[i] = objid
    real = m.sensor_datatype == mujoco.mjtDataType.mjDATATYPE_REAL
    sensor_cutoff = np.where(real, m.sensor_cutoff, 0.0)

    params = np.zeros(NPARAMS)
    params[P_TIMESTEP] = m.opt.timestep
    if not off(_D.mjDSBL_GRAVITY):
        params[P_GRAVITY : P_GRAVITY + 3] = m.opt.gravity
    params[P_IMPRATIO] = m.opt.impratio
    params[P_IMPLICITFAST] = float(implicitfast)
    params[P_ACTUATION] = float(not off(_D.mjDSBL_ACTUATION))
    params[P_CCD_TOLERANCE] = m.opt.ccd_tolerance

    values = (
        t.body_parentid, t.body_rootid, t.body_dofadr, t.body_dofnum, t.body_subtree_end,
        t.body_dof_end, t.body_chain_end, t.body_mass, t.body_subtreemass, t.dof_bodyid,
        t.dof_parentid, t.dof_group_start, t.dof_group_end, t.dof_free_translation,
        t.rotation_dofs, m.jnt_dofadr.astype(i64), m.M_rownnz.astype(i64),
        m.M_rowadr.astype(i64), m.M_colind.astype(i64), m.geom_type.astype(i64),
        m.geom_bodyid.astype(i64), m.geom_size.copy(),
        (m.body_weldid[m.geom_bodyid] == 0).astype(i64), m.dof_frictionloss.copy(),
        m.jnt_dofadr[m.actuator_trnid[:, 0]].astype(i64), m.actuator_gear[:, 0].copy(), gain,
        bias, ctrl_lo, ctrl_hi, force_lo, force_hi, passive_dq, passive_dv, damping,
        m.sensor_type.astype(i64), m.sensor_objtype.astype(i64), m.sensor_objid.astype(i64),
        sensor_bodyid, m.sensor_adr.astype(i64), m.sensor_dim.astype(i64), sensor_cutoff,
        m.geom_dataid.astype(i64), m.hfield_size.copy(), m.hfield_nrow.astype(i64),
        m.hfield_ncol.astype(i64), m.hfield_adr.astype(i64), m.hfield_data, params,
    )
    return dict(zip(MODEL_FIELDS, values, strict=True))


def _options(o, gravity: np.ndarray) -> tuple:
    """The options (``mjModel.opt`` and a view of its gravity) the tables and gate depend on."""
    return (o.timestep, o.integrator, o.cone, o.jacobian, o.disableflags, o.enableflags,
            o.noslip_iterations, o.impratio, o.density, o.viscosity, o.ccd_tolerance,
            gravity[0], gravity[1], gravity[2])


class _Worker:
    """A scratch MjData and the bundle of its fixed-address arrays."""

    def __init__(self, model: mujoco.MjModel):
        self.data = mujoco.MjData(model)
        self.bundle = data_bundle(self.data)


def _float64(x: np.ndarray) -> np.ndarray:
    """x as a C-contiguous float64 array (itself when it already is one), so the kernel is
    compiled for one array layout."""
    return np.require(x, np.float64, "C")


class AnalyticProvider(DerivativeProvider):
    """Closed-form linearization (see :mod:`derivatives.analytic`).

    ``threads`` workers split the knots of a horizon; ``fallback_eps`` and ``fallback_centered``
    configure the finite differences used where the recipe does not apply.
    """

    name = "analytic"

    #: Bounds of the options, read by mpc.app.schema.check_kwargs (see mpc/app/schema.py).
    RANGES: ClassVar[dict[str, dict[str, float]]] = {
        "threads": {"min": 1, "max": 64},
        "fallback_eps": {"gt": 0.0, "max": 1e-2},
    }

    def __init__(self, model: mujoco.MjModel, threads: int = 2, fallback_eps: float = 1e-6,
                 fallback_centered: bool = False):
        super().__init__(model)
        if threads < 1:
            raise ValueError(f"analytic threads must be at least 1, got {threads}")
        self.threads = int(threads)
        self.fallback_eps = float(fallback_eps)
        self.fallback_centered = bool(fallback_centered)
        self._fd: FDProvider | None = None
        self._warned: set[str] = set()
        self._model_reason = ""
        self._fallback_knots: dict[str, int] = {}
        self._lock = threading.Lock()
        nx, ns = 2 * model.nv, model.nsensordata
        self._no_c = np.zeros((1, ns, nx))
        self._no_d = np.zeros((1, ns, model.nu))
        self._single = _Worker(model)
        self._state = np.empty(mujoco.mj_stateSize(model, _INTEGRATION))
        self._workers = [_Worker(model) for _ in range(self.threads)]
        self._executor = ThreadPoolExecutor(self.threads - 1) if self.threads > 1 else None
        self._opt, self._gravity = model.opt, model.opt.gravity
        self._configure()

    def _configure(self) -> None:
        """Gate the model and build its tables (again, if its options changed)."""
        m = self.model
        self._options = _options(self._opt, self._gravity)
        self._layout = data_layout(m)
        #: Model features outside the recipe; non-empty means every knot uses fd.
        self.unsupported = gate.unsupported_features(m)
        if self._layout is None:
            self.unsupported.append("this MuJoCo build's mjData layout (not recognised)")
        #: Geom pairs that may touch but are not covered (linearized by fd where they do).
        self.uncovered_pairs = gate.uncovered_contact_pairs(m)
        if self._fd is not None:
            self._fd.close()
            self._fd = None
        if self.unsupported:
            self._fd = FDProvider(m, eps=self.fallback_eps, centered=self.fallback_centered,
                                  threads=self.threads)
            self._model_reason = "model: " + ", ".join(self.unsupported)
            self._warn(self._model_reason,
                       "analytic derivatives do not cover " + ", ".join(self.unsupported)
                       + "; this model is linearized by finite differences")
            return
        tables = model_tables(m)
        self._model_bundle = ModelBundle(*(tables[f] for f in MODEL_FIELDS))
        self._driver = KnotDriver(MJ_FORWARD, MJ_GETSTATE, MJ_SETSTATE, m._address,
                                  self._single.data._address, np.int32(_INTEGRATION),
                                  self._layout, self._model_bundle, self._single.bundle,
                                  self._state, np.zeros(1, dtype=np.int64))
        self._sensors = m.nsensordata > 0 and not m.opt.disableflags & int(_D.mjDSBL_SENSOR)

    def _check_options(self) -> None:
        if _options(self._opt, self._gravity) != self._options:
            self._configure()

    @property
    def fallback(self) -> bool:
        """True if the whole model is linearized by finite differences."""
        return self._fd is not None

    # --- single knot ---------------------------------------------------------------------------
    def linearize(self, data, A, B, C=None, D=None) -> None:
        self._check_options()
        if self._fd is not None:
            self._fd.linearize(data, A, B, C, D)
            self._record(self._model_reason, 1, self._fd.simulations_per_knot, data.time)
            return
        with self._lock:
            # one compiled call: copy the state, forward pass, closed form
            sensors = self._sensors and C is not None and D is not None
            status, info = linearize_state(self._driver, data._address, A, B,
                                           self._no_c[0] if C is None else C,
                                           self._no_d[0] if D is None else D, sensors)
            if status != OK:
                self._finite_differences(self._single.data, A, B, C, D, status, info)

    # --- horizon ----------------------------------------------------------------------------
    def horizon(self, trajectory: Trajectory, knots: Sequence[int], out: Linearization) -> None:
        self._check_options()
        if self._fd is not None:
            self._fd.horizon(trajectory, knots, out)
            self.last_simulations = self._fd.last_simulations
            self._record(self._model_reason, len(knots), self.last_simulations,
                         float(trajectory.time[knots[0]]) if len(knots) else float("nan"))
            return
        self.stream(trajectory, knots, out, new_progress(trajectory.horizon))()

    def stream(self, trajectory: Trajectory, knots: Sequence[int], out: Linearization,
               progress: np.ndarray) -> Callable[[], None]:
        """The helper threads start on the knots as they are recorded; ``finish`` joins them
        with the calling thread, then linearizes the knots the recipe does not cover by
        finite differences."""
        self._check_options()
        if self._fd is not None:
            return super().stream(trajectory, knots, out, progress)
        knots = np.asarray(knots, dtype=np.int64)
        status = np.zeros(len(knots), dtype=np.int64)
        info = np.zeros(len(knots), dtype=np.int64)
        args = (knots, progress, trajectory, out, self._sensors, status, info)
        helpers = self._workers[1 : len(knots)] if self._executor is not None else []
        jobs = [self._executor.submit(self._linearize, w, *args) for w in helpers]

        def finish() -> None:
            self._linearize(self._workers[0], *args)
            for job in jobs:
                job.result()
            if progress[READY] == STOPPED:  # the trajectory is incomplete: nothing to repair
                self.last_simulations = 0
                return
            self.last_simulations = self._repair(trajectory, knots, out, status, info)

        return finish

    # --- internals --------------------------------------------------------------------------
    def _linearize(self, w: _Worker, knots: np.ndarray, progress: np.ndarray,
                   trajectory: Trajectory, out: Linearization, sensors: bool,
                   status: np.ndarray, info: np.ndarray) -> None:
        """Worker ``w`` linearizes the knots it claims (one compiled call). Without
        ``sensors`` the kernel zeroes C and D."""
        tr = trajectory
        linearize_knots(MJ_FORWARD, SCHED_YIELD, self.model._address, w.data._address,
                        self._layout, self._model_bundle, w.bundle, knots, progress,
                        _float64(tr.time), _float64(tr.qpos), _float64(tr.qvel),
                        _float64(tr.act), _float64(tr.ctrl), _float64(tr.warmstart), out.A,
                        out.B, out.C, out.D, sensors, status, info)

    def _repair(self, trajectory: Trajectory, knots: np.ndarray, out: Linearization,
                status: np.ndarray, info: np.ndarray) -> int:
        """Finite differences at the knots whose closed form failed; returns the simulations
        they cost."""
        simulations = 0
        data = self._workers[0].data
        for i in np.flatnonzero(status != OK):
            t = knots[i]
            load_knot(data, trajectory, t)
            mujoco.mj_forward(self.model, data)  # the contacts the warning names
            simulations += self._finite_differences(data, out.A[t], out.B[t], out.C[t],
                                                     out.D[t], status[i], info[i])
        return simulations

    def _finite_differences(self, data, A, B, C, D, status: int, info: int) -> int:
        """Finite differences at ``data``, whose analytic linearization failed with ``status``
        (``info``: the contact concerned, where there is one)."""
        m = self.model
        if status == UNSUPPORTED_CONTACT:
            pair = contact_pair(m, data, info)
            reason = f"contact {pair}"
            message = (f"a {pair} contact is active, which the analytic derivatives do not "
                       "cover")
        elif status == SINGULAR_FRAME:
            pair = contact_pair(m, data, info)
            reason = f"singular {pair} geometry"
            message = (f"a {pair} contact's geometry is singular (an upright capsule on the "
                       "floor under a pyramidal or anisotropic cone, where MuJoCo's contact "
                       "frame turns discontinuously, or parallel capsules)")
        elif status == HFIELD_NOT_REPRODUCED:
            pair = contact_pair(m, data, info)
            reason = f"{pair} contact not reproduced"
            message = (f"a {pair} contact does not match the exact closest points of any of "
                       "the height field's prisms (a capsule axis inside the field, EPA "
                       "stopped by ccd_iterations, a capsule parallel to a face or an edge, or "
                       "nativeccd disabled)")
        elif status == APPLIED_FORCES:
            reason = "xfrc_applied"
            message = "xfrc_applied is not covered by the analytic derivatives"
        elif status == NOT_FINITE:
            reason = "non-finite result"
            message = "the closed form gave a non-finite Jacobian"
        else:
            reason = "system not positive definite"
            message = "a system matrix was not positive definite"
        self._warn(reason, message + "; such knots are linearized by finite differences")
        simulations = transition_fd(m, data, self.fallback_eps, self.fallback_centered, A, B,
                                    C if m.nsensordata else None,
                                    D if m.nsensordata else None)
        add_fd_evaluations(simulations)
        self._record(reason, 1, simulations, data.time)
        return simulations

    def _warn(self, key: str, message: str) -> None:
        """Warn once per provider and ``key`` (a fallback reason)."""
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(message, AnalyticFallbackWarning, stacklevel=3)
            log.warning("analytic fallback (%s): %s", key, message)

    def _record(self, reason: str, knots: int, evaluations: int, time: float) -> None:
        """Count a fallback by reason (process-wide: :func:`derivatives.fallbacks`); the log
        gets this provider's 1st, 2nd, 4th, 8th, ... knot of each reason with its running
        total (every fallback is in the total, and the log stays short when a reason recurs
        at every knot)."""
        record_fallback(reason, knots, evaluations)
        before = self._fallback_knots.get(reason, 0)
        total = self._fallback_knots[reason] = before + knots
        if total.bit_length() > before.bit_length():
            log.info("analytic fallback (%s) at t=%.4f s: %d knots so far", reason, time, total)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)
        if self._fd is not None:
            self._fd.close()


def contact_pair(m: mujoco.MjModel, data: mujoco.MjData, contact: int) -> str:
    """Contact ``contact``'s geom types as a warning names them, e.g. ``sphere-hfield``."""
    return "-".join(mujoco.mjtGeom(m.geom_type[g]).name[7:].lower()
                    for g in data.contact.geom[contact])
