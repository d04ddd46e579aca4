"""Finite-difference backend: ``mujoco.mjd_transitionFD`` per knot, knots spread over threads.

Forward differences by default: the hardware work on Unitree robots found centered differences
uninformative for locomotion (probing into the ground). The sensor Jacobians C, D come from the
same simulations.

**Contact switches.** A contact is active where its distance is below zero, and its force jumps
when it switches on (the constraint's reference acceleration damps the approach velocity at once).
A position perturbation that carries a state across a switch within ε returns the secant Δ/ε across
that jump, which is no derivative: a sphere touching down at 0.3 m/s 0.5 µm into the ground has
∂v_z/∂z ≈ −23 s⁻¹ and a forward difference of −3.7·10⁵ s⁻¹. Planned footholds sit at the switch
(the gait targets end a swing at the resting height), so in closed loop some knot straddles one
every second or so, and the backward pass turns the secant into feedback gains that saturate the
motors (the H1's first 2.5 s of walking: gains up to 2·10⁶, 26 of 501 plans above 10⁴; with the
one-sided columns none, the largest 6.4·10³); whether a knot straddles depends on the last bits of
the state, so the robot's walk then depended on the processor. The nominal state lies on one side
of the switch, and the one-sided difference toward that side is the derivative of the piece it is
on; the other is larger by orders of magnitude. So :func:`transition_fd` takes each column of a
position perturbation (A's and C's first nv columns) from the one-sided difference, +ε or −ε, whose
A column has the smaller largest entry. Velocity, activation and control perturbations do not
change the contact set of a step (collision detection reads positions only), and their columns are
forward or centered as asked. Cost per knot: 1 + n simulations forward, 1 + 2n centered (n = 2nv +
na + nu), and 1 + 2nv + na for the other side of the position columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import ClassVar

import mujoco
import numpy as np

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
        return fd_simulations(self.model, self.centered)

    def linearize(self, data, A, B, C=None, D=None) -> None:
        add_fd_evaluations(transition_fd(self.model, data, self.eps, self.centered, A, B, C, D))

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


def fd_simulations(model: mujoco.MjModel, centered: bool) -> int:
    """Simulations of one :func:`transition_fd` call."""
    n = 2 * model.nv + model.na + model.nu
    return 1 + (2 * n if centered else n) + 1 + 2 * model.nv + model.na


def transition_fd(model: mujoco.MjModel, data: mujoco.MjData, eps: float, centered: bool,
                  A: np.ndarray, B: np.ndarray, C: np.ndarray | None = None,
                  D: np.ndarray | None = None) -> int:
    """A, B (and C, D if given) of one step at ``data`` in ``mjd_transitionFD``'s conventions;
    returns the simulations it ran (:func:`fd_simulations`).

    ``mjd_transitionFD`` with step ε, forward or ``centered``, but with each column j < nv of A
    and C (a position perturbation) the one-sided difference of ε or −ε whose A column has the
    smaller largest entry: on the nominal's side of a contact switch (module docstring). From a
    centered call the forward column is 2 A_j − A⁻_j, A⁻ the backward one-sided difference.
    ``data`` is left as it was.
    """
    mujoco.mjd_transitionFD(model, data, eps, centered, A, B, C, D)
    back_A = np.empty_like(A)
    back_C = None if C is None else np.empty_like(C)
    mujoco.mjd_transitionFD(model, data, -eps, False, back_A, None, back_C, None)
    nv = model.nv
    fwd_A = 2.0 * A[:, :nv] - back_A[:, :nv] if centered else A[:, :nv].copy()
    use_back = np.abs(back_A[:, :nv]).max(axis=0) < np.abs(fwd_A).max(axis=0)
    A[:, :nv] = np.where(use_back, back_A[:, :nv], fwd_A)
    if C is not None:
        fwd_C = 2.0 * C[:, :nv] - back_C[:, :nv] if centered else C[:, :nv].copy()
        C[:, :nv] = np.where(use_back, back_C[:, :nv], fwd_C)
    return fd_simulations(model, centered)
