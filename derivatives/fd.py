"""Finite-difference backend: ``mujoco.mjd_transitionFD`` per knot, knots spread over threads.

Forward differences by default: the hardware work on Unitree robots found centered differences
uninformative for locomotion (probing into the ground). One forward linearization costs
1 + 2nv + na + nu simulations, a centered one 1 + 2 (2nv + na + nu); the sensor Jacobians C, D
come from the same simulations.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import ClassVar

import mujoco

from common.trajectory import Trajectory
from derivatives.counter import add_fd_evaluations
from derivatives.provider_base import DerivativeProvider, Linearization, load_knot


class FDProvider(DerivativeProvider):
    """``mjd_transitionFD`` with step ``eps``, forward or centered, over ``threads`` threads."""

    name = "fd"

    #: Bounds of the options, read by mpc.app.schema.check_kwargs (see mpc/app/schema.py).
    RANGES: ClassVar[dict[str, dict[str, float]]] = {
        "eps": {"gt": 0.0, "max": 1e-2},
        "threads": {"min": 1, "max": 64},
    }

    def __init__(self, model: mujoco.MjModel, eps: float = 1e-6, centered: bool = False,
                 threads: int = 1):
        super().__init__(model)
        if not eps > 0:
            raise ValueError(f"fd eps must be positive, got {eps}")
        if threads < 1:
            raise ValueError(f"fd threads must be at least 1, got {threads}")
        self.eps = float(eps)
        self.centered = bool(centered)
        self.threads = int(threads)
        self._datas = [mujoco.MjData(model) for _ in range(self.threads)]
        self._executor = ThreadPoolExecutor(self.threads) if self.threads > 1 else None

    @property
    def simulations_per_knot(self) -> int:
        m = self.model
        n = 2 * m.nv + m.na + m.nu
        return 1 + (2 * n if self.centered else n)

    def linearize(self, data, A, B, C=None, D=None) -> None:
        mujoco.mjd_transitionFD(self.model, data, self.eps, self.centered, A, B, C, D)
        add_fd_evaluations(self.simulations_per_knot)

    def horizon(self, trajectory: Trajectory, knots: Sequence[int], out: Linearization) -> None:
        knots = list(knots)
        if self._executor is None or len(knots) < 2:
            self._work(0, knots, trajectory, out)
        else:
            chunks = [knots[w :: self.threads] for w in range(self.threads)]
            jobs = [self._executor.submit(self._work, w, chunk, trajectory, out)
                    for w, chunk in enumerate(chunks) if chunk]
            for job in jobs:
                job.result()
        self.last_simulations = self.simulations_per_knot * len(knots)

    def _work(self, worker: int, knots: list[int], trajectory: Trajectory,
              out: Linearization) -> None:
        data = self._datas[worker]
        C = out.C if self.model.nsensordata else None
        D = out.D if self.model.nsensordata else None
        for t in knots:
            load_knot(data, trajectory, t)
            self.linearize(data, out.A[t], out.B[t],
                           None if C is None else C[t], None if D is None else D[t])

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)
