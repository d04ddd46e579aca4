"""The ``wasp`` backend: WASP-approximated A, B, C, D per knot, knots spread over threads.

Per knot and input block (ctrl, act, qvel, qpos) of size n, one call measures JVPs along the
block's directions in round-robin order, continuing where the previous call at that knot
stopped: at least p_min = max(1, floor(frac n)) of them, then one at a time until a fresh JVP
agrees with the cache's prediction for it (:func:`derivatives.wasp.update.agrees`), at most n.
Every JVP updates the estimate (rank one, :mod:`derivatives.wasp.update`). A cold knot fails
every test, so its first call is a full forward-difference sweep (1 + 2nv + na + nu
simulations, exactly ``mjd_transitionFD``'s count); warm knots cost 1 + Σ_b p_b or a little
more. The first ``full_first`` knots of the horizon take every JVP in every call.

Sensor Jacobians C, D come out of the same JVPs (sensordata is part of each JVP's output): a
simulation yields a column of [A; C] or [B; D] at once, so the residual Jacobians cost nothing
extra and are approximated exactly like A and B. The agreement test is applied to the
next-state part and to the sensor part separately, both must pass: tested as one vector, the
larger part decides alone. On the A1 the actuator-force sensors (kp·I, constant) are ~5x the
dynamics part of a ctrl JVP, so a joint test passed whatever became of B.

Measurements behind the defaults and the departures from the paper (coordinate directions,
the first knots in full, warm knots entering the horizon): docs/derivatives_wasp.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import ClassVar

import mujoco
import numpy as np

from common.trajectory import Trajectory
from derivatives.counter import add_fd_evaluations
from derivatives.provider_base import DerivativeProvider, Linearization
from derivatives.wasp.basis import (
    ACT,
    BLOCKS,
    CTRL,
    QPOS,
    QVEL,
    block_offsets,
    min_jvps,
    packed_directions,
)
from derivatives.wasp.cache import WaspCache
from derivatives.wasp.kernel import linearize_knots
from derivatives.wasp.mujoco_c import FUNCTIONS

_BASES = ("random", "axes")


class WaspProvider(DerivativeProvider):
    """WASP derivatives with JVP step ``eps``.

    ``frac_x``/``tol_x`` apply to the state blocks (qpos, qvel, act), ``frac_u``/``tol_u`` to
    ctrl. Contact-rich Jacobians are not very coherent from one planner iteration to the next
    (Go2 trot: the exact B at one instant moves by a median 31 % between consecutive
    iterations, A by 11 %), so every reused column is that far off until it is measured again;
    the fraction decides how often that happens, and with coordinate directions the agreement
    test sees one column, so at tolerance 0.2 it passes at ~80 % of the blocks and the budget is
    mostly p_min. The defaults (frac_x 0.4, frac_u 0.3, tolerance 0.2) were chosen by closed-loop
    comparison with fd on the A1, Go1, Go2 and H1 trots (scripts/compare_backends.py).

    ``full_first``: knots t < full_first of the horizon are differenced in full in every call
    (every JVP, exactly ``mjd_transitionFD``'s count). They set the feedback gains the robot
    follows until the next plan. Along an A1 trot at derivative skip 3, the gain K_0 computed
    from wasp's derivatives was 29 % (relative Frobenius, median) away from fd's with every
    knot approximated, 11 % with knot 0 in full and 1.5 % with the first 7 knots (knots 0, 3,
    6), for 357 simulations per call instead of 266 (fd: 686). 0 is the paper's algorithm.

    ``basis``: the JVP directions of each block (:mod:`derivatives.wasp.basis`). ``axes``, the
    default, are the coordinate directions: column j of the estimate is the last forward
    difference along input j (with ``frac = 1``, ``mjd_transitionFD`` bit for bit).
    ``random`` are the paper's seeded random orthonormal directions (``seed`` draws them):
    every column of the estimate then mixes all of the block's cached JVPs, so the stale part
    of contact-driven columns spreads into every column. On the Go2 trot at derivative skip 3
    the median per-column error was 13 % for A and 25 % for B with random directions, 0.001 %
    and 5 % with the axes, at the same simulations, and the robot missed its goal with random
    ones. ``threads`` workers share the knots of a horizon.
    """

    name = "wasp"

    #: Bounds of the options, read by mpc.app.schema.check_kwargs (see mpc/app/schema.py).
    RANGES: ClassVar[dict[str, dict[str, float]]] = {
        "frac_x": {"gt": 0.0, "max": 1.0},
        "frac_u": {"gt": 0.0, "max": 1.0},
        "tol_x": {"min": 0.0, "max": 10.0},
        "tol_u": {"min": 0.0, "max": 10.0},
        "eps": {"gt": 0.0, "max": 1e-2},
        "seed": {"min": 0, "max": 2**32 - 1},
        "threads": {"min": 1, "max": 64},
        "full_first": {"min": 0, "max": 10_000},
    }

    def __init__(self, model: mujoco.MjModel, frac_x: float = 0.4, frac_u: float = 0.3,
                 tol_x: float = 0.2, tol_u: float = 0.2, eps: float = 1e-6, seed: int = 0,
                 threads: int = 2, basis: str = "axes", full_first: int = 7):
        super().__init__(model)
        for key, frac in (("frac_x", frac_x), ("frac_u", frac_u)):
            if not 0.0 < frac <= 1.0:
                raise ValueError(f"wasp {key} must be in (0, 1], got {frac}")
        for key, tol in (("tol_x", tol_x), ("tol_u", tol_u)):
            if not tol >= 0.0:
                raise ValueError(f"wasp {key} must be non-negative, got {tol}")
        if not eps > 0:
            raise ValueError(f"wasp eps must be positive, got {eps}")
        if threads < 1:
            raise ValueError(f"wasp threads must be at least 1, got {threads}")
        if full_first < 0:
            raise ValueError(f"wasp full_first must be non-negative, got {full_first}")
        if basis not in _BASES:
            raise ValueError(f"wasp basis must be one of {', '.join(_BASES)}, got {basis!r}")
        if model.opt.integrator == mujoco.mjtIntegrator.mjINT_RK4:
            raise ValueError("wasp: the RK4 integrator is not supported (as in mjd_transitionFD)")
        if model.nhistory:
            raise ValueError("wasp: models with actuator or sensor delays are not supported")
        nv, na, nu = model.nv, model.na, model.nu
        self.eps = float(eps)
        self.full_first = int(full_first)
        self.threads = int(threads)
        self.offsets = block_offsets(nv, na, nu)
        self.directions = packed_directions(nv, na, nu, seed, axes=basis == "axes")
        sizes = np.diff(self.offsets)
        fracs = {QPOS: frac_x, QVEL: frac_x, ACT: frac_x, CTRL: frac_u}
        self.p_min = np.array([min_jvps(int(sizes[b]), fracs[b]) for b in range(len(BLOCKS))],
                              dtype=np.int64)
        self.tol = np.array([tol_u if b == CTRL else tol_x for b in range(len(BLOCKS))])
        # Base point of the ctrl block: ε inside the range, so u' + ε q_j is never clamped.
        limited = model.actuator_ctrllimited.astype(bool)
        lo, hi = model.actuator_ctrlrange[:, 0], model.actuator_ctrlrange[:, 1]
        wide = hi - lo > 2 * self.eps
        mid = 0.5 * (lo + hi)
        self._ctrl_lo = np.where(limited, np.where(wide, lo + self.eps, mid), -np.inf)
        self._ctrl_hi = np.where(limited, np.where(wide, hi - self.eps, mid), np.inf)
        outputs, inputs = 2 * nv + na + model.nsensordata, int(self.offsets[-1])
        self.cache = WaspCache(outputs, inputs, len(BLOCKS))  # horizon index t -> knot t
        self.single = WaspCache(outputs, inputs, len(BLOCKS), capacity=1)  # linearize()
        self._simulations = np.zeros(0, dtype=np.int64)
        self._datas = [mujoco.MjData(model) for _ in range(self.threads)]
        self._executor = ThreadPoolExecutor(self.threads) if self.threads > 1 else None

    # --- the provider interface -----------------------------------------------------------
    def linearize(self, data, A, B, C=None, D=None) -> None:
        """One knot at ``data`` with its own cache, so a sequence of calls at slowly varying
        states reuses earlier JVPs like a horizon index does. ``data`` is not touched."""
        m = self.model
        scratch = self._datas[0]
        spec = mujoco.mjtState.mjSTATE_INTEGRATION  # applied forces, mocap, ... come along
        state = np.empty(mujoco.mj_stateSize(m, spec))
        mujoco.mj_getState(m, data, state, spec)
        mujoco.mj_setState(m, scratch, state, spec)
        knot = Trajectory(np.array([data.time]), data.qpos[None].copy(), data.qvel[None].copy(),
                          data.act[None].copy(), data.ctrl[None].copy(),
                          data.sensordata[None].copy(), data.qacc_warmstart[None].copy())
        out = Linearization.allocate(m, 1)
        simulations = np.zeros(1, dtype=np.int64)
        self._run(0, np.zeros(1, dtype=np.int64), knot, self.single, out, simulations,
                  full_first=0)
        add_fd_evaluations(int(simulations[0]))
        for target, value in ((A, out.A), (B, out.B), (C, out.C), (D, out.D)):
            if target is not None:
                target[...] = value[0]

    def horizon(self, trajectory: Trajectory, knots: Sequence[int], out: Linearization) -> None:
        knots = np.array(sorted(set(knots)), dtype=np.int64)  # each knot once per call
        self.cache.reserve(trajectory.horizon)
        if self._simulations.shape[0] < trajectory.horizon:
            self._simulations = np.zeros(trajectory.horizon, dtype=np.int64)
        self._simulations[:] = 0
        if self._executor is None or len(knots) < 2:
            self._run(0, knots, trajectory, self.cache, out, self._simulations)
        else:
            jobs = [self._executor.submit(self._run, w, knots[w :: self.threads], trajectory,
                                          self.cache, out, self._simulations)
                    for w in range(min(self.threads, len(knots)))]
            for job in jobs:
                job.result()
        self.last_simulations = int(self._simulations.sum())
        add_fd_evaluations(self.last_simulations)

    def shift(self, knots: int) -> None:
        self.cache.shift(knots)

    def reset(self) -> None:
        self.cache.reset()
        self.single.reset()

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)

    # --------------------------------------------------------------------------------------
    def _run(self, worker: int, knots: np.ndarray, traj: Trajectory, cache: WaspCache,
             out: Linearization, simulations: np.ndarray, full_first: int | None = None) -> None:
        d = self._datas[worker]
        f64 = _float64
        linearize_knots(
            FUNCTIONS, self.model._address, d._address, d.qpos, d.qvel,
            d.act, d.ctrl, d.qacc_warmstart, d.sensordata, np.require(knots, np.int64, "C"),
            f64(traj.time), f64(traj.qpos), f64(traj.qvel), f64(traj.act), f64(traj.ctrl),
            f64(traj.warmstart), self._ctrl_lo, self._ctrl_hi, self.eps, self.directions,
            self.offsets, self.p_min, self.full_first if full_first is None else full_first,
            self.tol, cache.F, cache.D, cache.filled, cache.pointer, out.A, out.B, out.C, out.D,
            simulations)


def _float64(x: np.ndarray) -> np.ndarray:
    """x as a writeable C-contiguous float64 array (itself when it already is one), so the
    kernel is compiled for one array layout."""
    return np.require(x, np.float64, ("C", "W"))
