"""The finite-difference oracle every derivative check uses: the run-time audit
(:mod:`mpc.app.runtime.audit`), the backend comparison (``scripts/compare_backends.py``) and
the analytic backend's tests.

The reference is centered ``mjd_transitionFD`` on a copy of the model whose Newton solver
converges to rounding (:func:`oracle_model`, :data:`TOLERANCE`; at MuJoCo's default 1e-8 the
differences themselves are off by up to tens of percent on contact-rich states), warm-started
at the solution of the state it differentiates (:func:`settle_solver`). Differences are only a
derivative where the contact set and the constraint states stay put within the step:
:func:`is_smooth` checks that by probing ±eps in every state and control coordinate.

Error measures of a Jacobian X against the reference R:

* :func:`relative_error`, ``‖X − R‖_F / ‖R‖_F``: one number per matrix;
* :func:`relative_max_error`, ``max|X − R| / max|R|``: the worst entry against the largest;
* :func:`median_column_error`, the median over columns j of ``‖X_j − R_j‖ / ‖R_j‖``: where an
  error sits (a change confined to a few columns and one spread over all of them can have the
  same Frobenius or max error).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np

#: Difference step of the reference (the audit retries 10x and 100x where it disagrees).
EPS = 1e-6
#: The reference model's Newton tolerance. MuJoCo stops the solver once an iteration improves
#: the (scaled) cost by less than it; near the minimum the cost is quadratic, so an error δ of
#: the acceleration improves it by O(δ²), and at 1e-12 a solve may stop with δ near 1e-6 of
#: the solution's scale: differences at step 1e-6 are then off by percent (a Go2 standing on a
#: height field, 24 contacts: 4.8e-4 relative against the analytic derivatives at 1e-12, 3.9e-6
#: at 1e-18, as with no tolerance at all; the cost is the same, ~15 ms, without a tolerance 0.5 s).
TOLERANCE = 1e-18
#: Its line search's tolerance.
LS_TOLERANCE = 1e-12



@dataclass(frozen=True)
class Knot:
    """One planner knot as a derivative check needs it (copies): the state the planner
    linearized at (time, qpos, qvel, act, ctrl and the solver's warm start) and the A, B it
    used there."""

    time: float
    qpos: np.ndarray
    qvel: np.ndarray
    act: np.ndarray
    ctrl: np.ndarray
    warmstart: np.ndarray
    A: np.ndarray
    B: np.ndarray

    @classmethod
    def of(cls, nominal: Any, lin: Any, t: int, **extra: Any) -> Knot:
        """Knot ``t`` of a nominal trajectory (:class:`common.trajectory.Trajectory`) and its
        linearization (:class:`derivatives.provider_base.Linearization`); ``extra``: the
        fields a subclass adds."""
        return cls(float(nominal.time[t]), nominal.qpos[t].copy(), nominal.qvel[t].copy(),
                   nominal.act[t].copy(), nominal.ctrl[t].copy(), nominal.warmstart[t].copy(),
                   lin.A[t].copy(), lin.B[t].copy(), **extra)

    def load(self, d: mujoco.MjData) -> mujoco.MjData:
        """``d`` set to this knot's state (returned)."""
        d.time = self.time
        d.qpos[:], d.qvel[:], d.act[:], d.ctrl[:] = self.qpos, self.qvel, self.act, self.ctrl
        d.qacc_warmstart[:] = self.warmstart
        return d


_INTEGRATORS = {"euler": mujoco.mjtIntegrator.mjINT_EULER,
                "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST}


def oracle_model(model: mujoco.MjModel, integrator: str | None = None) -> mujoco.MjModel:
    """A copy of ``model`` with the Newton solver converged to :data:`TOLERANCE` (and the given
    integrator, ``euler`` or ``implicitfast``; None keeps the model's)."""
    m = copy.copy(model)
    m.opt.solver = mujoco.mjtSolver.mjSOL_NEWTON
    m.opt.tolerance = TOLERANCE
    m.opt.ls_tolerance = LS_TOLERANCE
    m.opt.iterations = 1000
    m.opt.ls_iterations = 200
    if integrator is not None:
        m.opt.integrator = _INTEGRATORS[integrator]
    return m


def settle_solver(m: mujoco.MjModel, d: mujoco.MjData) -> None:
    """Forward twice, the second time warm-started at the first solution; ``d``'s warm start
    is left at the solution.

    Each of the oracle's solves starts from ``qacc_warmstart``. From a stale one (the previous
    step's acceleration, as a planner's knot carries, or another control) Newton stops once an
    iteration improves the cost by less than the tolerance, which happens with the solution
    still O(1e-7) away: the cost is quadratic near its minimum, so an error δ improves it by
    O(δ²). Perturbed solves then stop after different numbers of iterations at different
    distances, and differences at step 1e-6 turn that into errors of percent (measured on a
    Go2 knot standing on a height field, 24 contacts: 1.4e-2 relative against the analytic
    derivatives; 4e-6 from the settled start). From the solution itself each perturbed solve
    starts O(eps) away and converges in its first iteration.
    """
    mujoco.mj_forward(m, d)
    d.qacc_warmstart[:] = d.qacc
    mujoco.mj_forward(m, d)
    d.qacc_warmstart[:] = d.qacc


def centered_fd(m: mujoco.MjModel, d: mujoco.MjData, eps: float = EPS, sensors: bool = False
                ) -> tuple[np.ndarray, ...]:
    """(A, B), or (A, B, C, D) with ``sensors``, by centered ``mjd_transitionFD`` at ``d``'s
    state, the solver warm-started at its solution (:func:`settle_solver`, on a copy: ``d`` is
    not changed)."""
    scratch = _copy_state(m, d)
    settle_solver(m, scratch)
    nx = 2 * m.nv + m.na
    A, B = np.zeros((nx, nx)), np.zeros((nx, m.nu))
    if not sensors:
        mujoco.mjd_transitionFD(m, scratch, eps, True, A, B, None, None)
        return A, B
    C, D = np.zeros((m.nsensordata, nx)), np.zeros((m.nsensordata, m.nu))
    mujoco.mjd_transitionFD(m, scratch, eps, True, A, B, C if m.nsensordata else None,
                            D if m.nsensordata else None)
    return A, B, C, D


def signature(m: mujoco.MjModel, d: mujoco.MjData) -> tuple:
    """Contact set and constraint states at the solver's solution for ``d``'s state (on a
    scratch copy warm-started at the solution: with islands, ``efc_state`` after
    ``mj_forward`` is not that state, so it is recomputed from jar)."""
    scratch = _copy_state(m, d)
    mujoco.mj_forward(m, scratch)
    scratch.qacc_warmstart[:] = scratch.qacc
    mujoco.mj_forward(m, scratch)
    jar = np.zeros(scratch.nefc)
    mujoco.mj_mulJacVec(m, scratch, jar, scratch.qacc)  # dense or sparse efc_J
    jar -= scratch.efc_aref
    mujoco.mj_constraintUpdate(m, scratch, jar, None, 0)
    geoms = tuple(tuple(int(g) for g in scratch.contact[i].geom) for i in range(scratch.ncon))
    return geoms, tuple(int(s) for s in scratch.efc_state)


def is_smooth(m: mujoco.MjModel, d: mujoco.MjData, eps: float = 1e-5) -> bool:
    """True if perturbing each state and control coordinate by ±eps keeps the contact set and
    the constraint states (so centered differences with a step below eps are a derivative)."""
    base = signature(m, d)
    nv = m.nv
    for i in range(2 * nv + m.nu):
        for sign in (1.0, -1.0):
            probe = _copy_state(m, d)
            if i < nv:
                dq = np.zeros(nv)
                dq[i] = sign * eps
                mujoco.mj_integratePos(m, probe.qpos, dq, 1.0)
            elif i < 2 * nv:
                probe.qvel[i - nv] += sign * eps
            else:
                probe.ctrl[i - 2 * nv] += sign * eps
            if signature(m, probe) != base:
                return False
    return True


def relative_error(x: np.ndarray, ref: np.ndarray) -> float:
    """‖x − ref‖_F / ‖ref‖_F (‖x − ref‖_F if ref is zero)."""
    den = float(np.linalg.norm(ref))
    num = float(np.linalg.norm(x - ref))
    return num / den if den > 0 else num


def relative_max_error(x: np.ndarray, ref: np.ndarray) -> float:
    """max|x − ref| / max|ref|; 0 when both vanish, inf when only ref does (B of a robot whose
    actuators all saturate is zero)."""
    scale, diff = np.abs(ref).max(), np.abs(x - ref).max()
    if scale > 0:
        return float(diff / scale)
    return 0.0 if diff == 0 else float("inf")


def median_column_error(x: np.ndarray, ref: np.ndarray) -> float:
    """Median over the columns j with ‖ref_j‖ > 1e-9 max_j ‖ref_j‖ of ‖x_j − ref_j‖ / ‖ref_j‖
    (NaN when no column qualifies)."""
    norms = np.linalg.norm(ref, axis=0)
    cols = norms > 1e-9 * norms.max() if norms.size else norms.astype(bool)
    if not cols.any():
        return float("nan")
    return float(np.median(np.linalg.norm(x - ref, axis=0)[cols] / norms[cols]))


def _copy_state(m: mujoco.MjModel, d: mujoco.MjData) -> mujoco.MjData:
    out = mujoco.MjData(m)
    out.time = d.time
    out.qpos[:], out.qvel[:], out.act[:], out.ctrl[:] = d.qpos, d.qvel, d.act, d.ctrl
    out.qacc_warmstart[:] = d.qacc_warmstart
    out.mocap_pos[:], out.mocap_quat[:] = d.mocap_pos, d.mocap_quat
    return out
