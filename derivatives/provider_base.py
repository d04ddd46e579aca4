"""The derivative-provider interface shared by every backend.

A provider linearizes one MuJoCo step of a model in the conventions of
``mujoco.mjd_transitionFD``: with x = (dq, dv, dact) in the tangent space (free joint:
[world-frame translation, body-frame rotation vector]) of size nx = 2nv + na,

    x_{t+1} ≈ A x_t + B u_t,          sensordata_t ≈ C x_t + D u_t,

A (nx, nx), B (nx, nu), C (nsensordata, nx), D (nsensordata, nu), all at the state, control and
time held in an ``MjData``. Tasks define their residuals from the model's sensors, so C and D
are what the planner turns into residual (cost) Jacobians.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import mujoco
import numpy as np
from numba import njit

from common.handover import READY, STOPPED
from common.trajectory import Trajectory


@dataclass
class Linearization:
    """Per-knot Jacobians of a horizon.

    A (T, nx, nx), B (T, nx, nu), C (T, ns, nx), D (T, ns, nu).
    """

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray

    @classmethod
    def allocate(cls, model: mujoco.MjModel, horizon: int) -> Linearization:
        nx = 2 * model.nv + model.na
        ns = model.nsensordata
        return cls(
            A=np.zeros((horizon, nx, nx)),
            B=np.zeros((horizon, nx, model.nu)),
            C=np.zeros((horizon, ns, nx)),
            D=np.zeros((horizon, ns, model.nu)),
        )

    def interpolate(self, knots: Sequence[int]) -> None:
        """Fill the knots between the computed ``knots`` (sorted) by linear interpolation:
        J_t = (1 − w) J_lo + w J_hi with w = (t − lo)/(hi − lo), for J in A, B, C, D."""
        knots = np.asarray(knots, dtype=np.int64)
        for a in (self.A, self.B, self.C, self.D):
            _interpolate(a.reshape(a.shape[0], -1), knots)


class DerivativeProvider(ABC):
    """A derivative backend. Subclasses register a ``name`` and implement :meth:`linearize`."""

    name: ClassVar[str]

    def __init__(self, model: mujoco.MjModel):
        self.model = model
        #: Simulations used by the last call of :meth:`horizon` (reported to the user).
        self.last_simulations = 0

    @abstractmethod
    def linearize(self, data: mujoco.MjData, A: np.ndarray, B: np.ndarray,
                  C: np.ndarray | None = None, D: np.ndarray | None = None) -> None:
        """Fill A, B (and C, D when given) at the state, ctrl and time in ``data``.

        ``data`` is left as it was (state, controls, warm start).
        """

    def transition(self, data: mujoco.MjData) -> tuple[np.ndarray, np.ndarray]:
        """(A, B) of one step at ``data``, in ``mjd_transitionFD``'s conventions."""
        nx = 2 * self.model.nv + self.model.na
        A = np.zeros((nx, nx))
        B = np.zeros((nx, self.model.nu))
        self.linearize(data, A, B)
        return A, B

    def horizon(self, trajectory: Trajectory, knots: Sequence[int], out: Linearization) -> None:
        """Linearize ``trajectory`` at ``knots``; the default visits them one by one."""
        data = mujoco.MjData(self.model)
        for t in knots:
            load_knot(data, trajectory, t)
            self.linearize(data, out.A[t], out.B[t], out.C[t], out.D[t])

    def stream(self, trajectory: Trajectory, knots: Sequence[int], out: Linearization,
               progress: np.ndarray) -> Callable[[], None]:
        """Start linearizing ``trajectory`` at ``knots`` while a compiled producer is still
        recording it, knot by knot into ``progress`` (:mod:`common.handover`). Returns
        ``finish``, which returns once every knot is linearized, or at once if the producer
        stopped early (``out`` is then incomplete). By default nothing starts early:
        ``finish`` calls :meth:`horizon` on the finished trajectory."""

        def finish() -> None:
            if progress[READY] != STOPPED:
                self.horizon(trajectory, knots, out)

        return finish

    def shift(self, knots: int) -> None:  # noqa: B027
        """The planner's horizon moved ``knots`` knots forward (backends with caches shift them)."""

    def reset(self) -> None:  # noqa: B027
        """The planner was reset (backends with caches clear them)."""

    def close(self) -> None:  # noqa: B027
        """Release threads or other resources."""


def load_knot(data: mujoco.MjData, trajectory: Trajectory, t: int) -> None:
    """Put knot t of ``trajectory`` (state, ctrl, time, solver warm start) into ``data``."""
    data.time = trajectory.time[t]
    data.qpos[:] = trajectory.qpos[t]
    data.qvel[:] = trajectory.qvel[t]
    data.act[:] = trajectory.act[t]
    data.ctrl[:] = trajectory.ctrl[t]
    data.qacc_warmstart[:] = trajectory.warmstart[t]


@njit(cache=True, nogil=True)
def _interpolate(a, knots):
    """Rows of a (T, n) strictly between consecutive ``knots``, linearly from the knots' rows
    (one compiled pass: per knot gap and array, numpy would take two calls)."""
    for j in range(knots.shape[0] - 1):
        lo, hi = knots[j], knots[j + 1]
        for t in range(lo + 1, hi):
            w = (t - lo) / (hi - lo)
            for c in range(a.shape[1]):
                a[t, c] = (1.0 - w) * a[lo, c] + w * a[hi, c]
