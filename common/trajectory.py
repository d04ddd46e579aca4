"""Containers for trajectories and the model layout the kernels need.

They live with the derivative providers, the lowest layer that takes a whole horizon: the
planner (:mod:`mpc`) builds trajectories and hands them down to a provider.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np


@dataclass(frozen=True)
class ModelLayout:
    """Joint layout and control limits of a model, as plain arrays for numba kernels."""

    nq: int
    nv: int
    na: int
    nu: int
    nsensordata: int
    jnt_type: np.ndarray
    jnt_qposadr: np.ndarray
    jnt_dofadr: np.ndarray
    ctrl_lo: np.ndarray
    ctrl_hi: np.ndarray

    @property
    def nx(self) -> int:
        """Dimension of the tangent state (dq, dv, dact)."""
        return 2 * self.nv + self.na

    @classmethod
    def of(cls, model: mujoco.MjModel) -> ModelLayout:
        limited = model.actuator_ctrllimited.astype(bool)
        lo = np.where(limited, model.actuator_ctrlrange[:, 0], -np.inf)
        hi = np.where(limited, model.actuator_ctrlrange[:, 1], np.inf)
        return cls(
            nq=model.nq, nv=model.nv, na=model.na, nu=model.nu, nsensordata=model.nsensordata,
            jnt_type=model.jnt_type.astype(np.int64),
            jnt_qposadr=model.jnt_qposadr.astype(np.int64),
            jnt_dofadr=model.jnt_dofadr.astype(np.int64),
            ctrl_lo=np.ascontiguousarray(lo, dtype=np.float64),
            ctrl_hi=np.ascontiguousarray(hi, dtype=np.float64),
        )


@dataclass
class Trajectory:
    """One trajectory of T knots: state, control and sensors at each knot.

    ``sensordata[t]`` is evaluated at (x_t, u_t); ``warmstart[t]`` is the constraint solver's
    acceleration at knot t (a good warm start for derivatives there).
    """

    time: np.ndarray  # (T,)
    qpos: np.ndarray  # (T, nq)
    qvel: np.ndarray  # (T, nv)
    act: np.ndarray  # (T, na)
    ctrl: np.ndarray  # (T, nu)
    sensordata: np.ndarray  # (T, ns)
    warmstart: np.ndarray  # (T, nv)

    @property
    def horizon(self) -> int:
        return self.time.shape[0]

    def copy(self) -> Trajectory:
        return Trajectory(*(getattr(self, f).copy() for f in _FIELDS))


_FIELDS = ("time", "qpos", "qvel", "act", "ctrl", "sensordata", "warmstart")


@dataclass
class TrajectoryBatch:
    """N trajectories in contiguous arrays (N, T, ...), so costs can be evaluated at once."""

    time: np.ndarray
    qpos: np.ndarray
    qvel: np.ndarray
    act: np.ndarray
    ctrl: np.ndarray
    sensordata: np.ndarray
    warmstart: np.ndarray
    status: np.ndarray  # (N,) 0 ok, nonzero failed

    @classmethod
    def allocate(cls, layout: ModelLayout, count: int, horizon: int) -> TrajectoryBatch:
        n, t = count, horizon
        return cls(
            time=np.zeros((n, t)),
            qpos=np.zeros((n, t, layout.nq)),
            qvel=np.zeros((n, t, layout.nv)),
            act=np.zeros((n, t, layout.na)),
            ctrl=np.zeros((n, t, layout.nu)),
            sensordata=np.zeros((n, t, layout.nsensordata)),
            warmstart=np.zeros((n, t, layout.nv)),
            status=np.zeros(n, dtype=np.int64),
        )

    def __len__(self) -> int:
        return self.time.shape[0]

    def trajectory(self, i: int) -> Trajectory:
        """View of trajectory i (not a copy)."""
        return Trajectory(*(getattr(self, f)[i] for f in _FIELDS))
