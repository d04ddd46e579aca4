"""The published plan: a time-indexed linear feedback policy.

A :class:`Policy` is immutable once built; the planner publishes a new one by swapping a
reference, and any thread may evaluate the current one without locks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from common.trajectory import ModelLayout
from mpc.planner.kernels.policy import policy_action


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=np.float64).copy()
    a.flags.writeable = False
    return a


@dataclass(frozen=True)
class Policy:
    """Nominal states and controls x*_t, u*_t with feedback gains K_t at times t.

    ``u(τ, x) = clamp(u*(τ) + K(τ) (x ⊖ x*(τ)))``, interpolated in time; see
    :mod:`mpc.planner.kernels.policy`. ``feedforward`` is the improvement k_t of the backward pass
    that produced it (zero for a published plan, whose u* already contains it).
    """

    layout: ModelLayout
    times: np.ndarray  # (N,)
    qpos: np.ndarray  # (N, nq)
    qvel: np.ndarray  # (N, nv)
    act: np.ndarray  # (N, na)
    ctrl: np.ndarray  # (N, nu)
    gains: np.ndarray  # (N, nu, nx)
    feedforward: np.ndarray  # (N, nu)
    #: Planner iteration that produced the policy (for the age shown to the user).
    iteration: int = 0

    @classmethod
    def build(cls, layout: ModelLayout, times, qpos, qvel, act, ctrl, gains=None,
              feedforward=None, iteration: int = 0) -> Policy:
        n = len(times)
        if gains is None:
            gains = np.zeros((n, layout.nu, layout.nx))
        if feedforward is None:
            feedforward = np.zeros((n, layout.nu))
        return cls(layout, _frozen(times), _frozen(qpos), _frozen(qvel), _frozen(act),
                   _frozen(ctrl), _frozen(gains), _frozen(feedforward), iteration)

    @classmethod
    def hold(cls, layout: ModelLayout, time: float, qpos, qvel, act, ctrl) -> Policy:
        """A constant policy without feedback: hold ``ctrl`` (used before the first plan)."""
        one = np.ones((1, 1))
        return cls.build(layout, np.array([time]), one * qpos, one * qvel,
                         np.reshape(act, (1, -1)), one * ctrl)

    @property
    def start(self) -> float:
        return float(self.times[0])

    @property
    def end(self) -> float:
        return float(self.times[-1])

    def action(self, time: float, qpos, qvel, act, out: np.ndarray | None = None,
               feedback: float = 1.0) -> tuple[np.ndarray, bool]:
        """Control at ``time`` for state (qpos, qvel, act), and whether it was finite."""
        if out is None:
            out = np.empty(self.layout.nu)
        lay = self.layout
        finite = policy_action(
            lay.jnt_type, lay.jnt_qposadr, lay.jnt_dofadr, lay.ctrl_lo, lay.ctrl_hi,
            self.times, self.qpos, self.qvel, self.act, self.ctrl, self.feedforward, self.gains,
            float(time), qpos, qvel, act, 0.0, float(feedback), out,
        )
        return out, bool(finite)
