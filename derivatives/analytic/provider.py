"""The ``analytic`` derivative backend: exact A, B, C, D in closed form, no finite differences.

Per knot: MuJoCo's forward pass (``mj_forward``, warm-started from the trajectory's solver
acceleration) on a scratch ``MjData``, then the closed form (:func:`.knot.linearize_knot`)
that differentiates what it computed. A horizon's knots are split into one chunk per worker
thread, each with its own ``MjData``, and each chunk is one compiled call
(:func:`.horizon.linearize_knots`) that releases the GIL: no Python runs per knot.

Fallbacks to finite differences (``mjd_transitionFD``, counted by
:func:`derivatives.counter.fd_evaluations`) happen only where the recipe does not apply, each
announced once with an :class:`AnalyticFallbackWarning`:

* the whole model, if :func:`.gate.unsupported_features` names anything;
* one knot, if a contact the recipe does not cover is active there (two moving bodies, a
  geometry other than sphere, capsule or box against a static plane, or an upright capsule
  under a pyramidal cone), if ``xfrc_applied`` is set, if a system matrix is not positive
  definite or if a result is not finite.

The model's constants (masses, actuator and sensor parameters, ...) are read when the provider
is built: build a new one after changing them. Its options (timestep, gravity, integrator,
cone, flags, ...) are checked at every call and the provider reconfigures itself when they
changed; solver settings (tolerance, iterations) take effect at each forward pass anyway.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import mujoco
import numpy as np

from derivatives.analytic import gate
from derivatives.analytic.bundles import (
    MODEL_FIELDS,
    NPARAMS,
    P_ACTUATION,
    P_GRAVITY,
    P_IMPLICITFAST,
    P_IMPRATIO,
    P_TIMESTEP,
    ModelBundle,
    data_bundle,
)
from derivatives.analytic.horizon import linearize_knots
from derivatives.analytic.knot import (
    APPLIED_FORCES,
    NOT_FINITE,
    OK,
    SINGULAR_FRAME,
    UNSUPPORTED_CONTACT,
)
from derivatives.analytic.layout import data_layout
from derivatives.analytic.passive import integrated_damping, passive_derivatives
from derivatives.analytic.tables import TreeTables
from derivatives.counter import add_fd_evaluations
from derivatives.fd import FDProvider
from derivatives.mjc import MJ_FORWARD
from derivatives.provider_base import DerivativeProvider, Linearization, load_knot
from derivatives.trajectory import Trajectory

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
        params,
    )
    return dict(zip(MODEL_FIELDS, values, strict=True))


def _options(o, gravity: np.ndarray) -> tuple:
    """The options (``mjModel.opt`` and a view of its gravity) the tables and gate depend on."""
    return (o.timestep, o.integrator, o.cone, o.jacobian, o.disableflags, o.enableflags,
            o.noslip_iterations, o.impratio, o.density, o.viscosity, gravity[0], gravity[1],
            gravity[2])


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
        self._lock = threading.Lock()
        nx, ns = 2 * model.nv, model.nsensordata
        self._no_c = np.zeros((1, ns, nx))
        self._no_d = np.zeros((1, ns, model.nu))
        # the knot arrays of a call on data that already holds its knot (never read)
        self._held = Trajectory(np.zeros(1), np.zeros((1, model.nq)), np.zeros((1, model.nv)),
                                np.zeros((1, model.na)), np.zeros((1, model.nu)),
                                np.zeros((1, ns)), np.zeros((1, model.nv)))
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
            self._warn("model " + ", ".join(self.unsupported),
                       "analytic derivatives do not cover " + ", ".join(self.unsupported)
                       + "; this model is linearized by finite differences (mjd_transitionFD)")
            return
        tables = model_tables(m)
        self._model_bundle = ModelBundle(*(tables[f] for f in MODEL_FIELDS))
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
            return
        with self._lock:
            w = self._single
            # the whole integration state (time, qpos, qvel, act, ctrl, warm start, applied
            # forces, mocap) in two calls
            mujoco.mj_getState(self.model, data, self._state, _INTEGRATION)
            mujoco.mj_setState(self.model, w.data, self._state, _INTEGRATION)
            sensors = self._sensors and C is not None and D is not None
            out = Linearization(A[None], B[None], self._no_c if C is None else C[None],
                                self._no_d if D is None else D[None])
            self._run(w, False, np.zeros(1, dtype=np.int64), self._held, out, sensors)

    # --- horizon ----------------------------------------------------------------------------
    def horizon(self, trajectory: Trajectory, knots: Sequence[int], out: Linearization) -> None:
        self._check_options()
        if self._fd is not None:
            self._fd.horizon(trajectory, knots, out)
            self.last_simulations = self._fd.last_simulations
            return
        knots = np.asarray(knots, dtype=np.int64)
        if self._executor is None or len(knots) < 2:
            counts = [self._run(self._workers[0], True, knots, trajectory, out, self._sensors)]
        else:
            jobs = [self._executor.submit(self._run, w, True, knots[i :: self.threads],
                                          trajectory, out, self._sensors)
                    for i, w in enumerate(self._workers[1:], 1) if knots[i :: self.threads].size]
            # the calling thread takes the first chunk itself
            counts = [self._run(self._workers[0], True, knots[:: self.threads], trajectory, out,
                                self._sensors)]
            counts += [job.result() for job in jobs]
        self.last_simulations = sum(counts)

    # --- internals --------------------------------------------------------------------------
    def _run(self, w: _Worker, load: bool, knots: np.ndarray, trajectory: Trajectory,
             out: Linearization, sensors: bool) -> int:
        """Linearize ``knots`` on worker ``w`` (one compiled call; ``load``: put each knot of
        ``trajectory`` into the data first), then the knots the recipe does not cover by
        finite differences; returns the simulations these cost. Without ``sensors`` the
        kernel zeroes C and D (``out.C``/``out.D`` may be the provider's placeholders)."""
        status = np.empty(len(knots), dtype=np.int64)
        info = np.empty(len(knots), dtype=np.int64)
        tr = trajectory
        linearize_knots(MJ_FORWARD, self.model._address, w.data._address, self._layout,
                        self._model_bundle, w.bundle, load, knots, _float64(tr.time),
                        _float64(tr.qpos), _float64(tr.qvel), _float64(tr.act), _float64(tr.ctrl),
                        _float64(tr.warmstart), out.A, out.B, out.C, out.D, sensors, status,
                        info)
        simulations = 0
        for i in np.flatnonzero(status != OK):
            t = knots[i]
            if load:
                load_knot(w.data, trajectory, t)
                mujoco.mj_forward(self.model, w.data)  # the contacts the warning names
            simulations += self._finite_differences(
                w.data, out.A[t], out.B[t], None if out.C is self._no_c else out.C[t],
                None if out.D is self._no_d else out.D[t], status[i], info[i])
        return simulations

    def _finite_differences(self, data, A, B, C, D, status: int, info: int) -> int:
        """mjd_transitionFD at ``data``, whose analytic linearization failed with ``status``
        (``info``: the contact concerned, where there is one)."""
        m = self.model
        if status == UNSUPPORTED_CONTACT:
            geoms = data.contact.geom[info]
            pair = "-".join(mujoco.mjtGeom(m.geom_type[g]).name[7:].lower() for g in geoms)
            self._warn(f"contact {pair}", f"a {pair} contact is active, which the analytic "
                       "derivatives do not cover; knots with such contacts are linearized "
                       "by finite differences (mjd_transitionFD)")
        elif status == SINGULAR_FRAME:
            self._warn("frame", "a capsule stands upright on the floor under a pyramidal "
                       "or anisotropic cone, where MuJoCo's contact frame turns "
                       "discontinuously; such knots are linearized by finite differences "
                       "(mjd_transitionFD)")
        elif status == APPLIED_FORCES:
            self._warn("xfrc", "xfrc_applied is not covered by the analytic derivatives; "
                       "such knots are linearized by finite differences (mjd_transitionFD)")
        elif status == NOT_FINITE:
            self._warn("finite", "the closed form gave a non-finite Jacobian; such knots "
                       "are linearized by finite differences (mjd_transitionFD)")
        else:
            self._warn("system", "a system matrix was not positive definite; such knots "
                       "are linearized by finite differences (mjd_transitionFD)")
        mujoco.mjd_transitionFD(m, data, self.fallback_eps, self.fallback_centered, A, B,
                                C if m.nsensordata else None, D if m.nsensordata else None)
        n = 2 * m.nv + m.na + m.nu
        simulations = 1 + (2 * n if self.fallback_centered else n)
        add_fd_evaluations(simulations)
        return simulations

    def _warn(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(message, AnalyticFallbackWarning, stacklevel=3)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)
        if self._fd is not None:
            self._fd.close()
