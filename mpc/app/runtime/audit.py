"""Derivative audit: the planner's model derivatives checked against finite differences while
the robot walks, on a worker that never delays a plan.

Every ``every``-th planner iteration, :meth:`DerivativeAudit.offer` (planner thread) copies one
knot, chosen at random among the knots the provider linearized, with the planner's A, B for it,
and hands it to a worker thread at the lowest priority (niceness 19). The worker recomputes
(A*, B*) by the oracle of :mod:`derivatives.oracle` (centered ``mjd_transitionFD`` on a copy of
the planning model whose Newton solver converges to rounding from the knot's own solution; at
the usual tolerance 1e-8, or from the knot's warm start, the previous step's acceleration, the
differences themselves are off by percent), and records the relative Frobenius errors

    e_A = ‖A − A*‖ / ‖A*‖,   e_B = ‖B − B*‖ / ‖B*‖,   e = max(e_A, e_B).

Differences have an error of their own (truncation ∝ eps², solver residual and steep contact
curvature ∝ 1/eps; on planner knots of the A1 trot, with the oracle before its solves were
converged to rounding, eps = 1e-6 was off by up to 5 % where 1e-4 agreed with the closed form
to 4e-4), so a check beyond the threshold is repeated at 10 eps and
100 eps and the best agreement counts.

A check beyond ``threshold`` is a disagreement if the knot is smooth (the contact set and the
constraint states stay put under ±eps in every state and control coordinate; elsewhere the
derivative of the current contact set is all any backend can give, and differences straddle
the kink): it is logged with the state, which is saved under ``audit/`` in the run directory
(:func:`load_state` replays it), and, with ``switch_to_fd``, the session linearizes by ``fd``
from the next iteration on. Non-smooth knots are counted apart. If the worker is still busy
when a knot is due, that knot is skipped (counted): the audit samples, it never queues.

Each check goes to ``audit.csv`` in the run directory as it finishes (flushed: a killed run
keeps its checks), its statistics to counters of bounded size; at the end ``audit.png`` (when
matplotlib is installed) plots the checks, and the statistics go to the summary.
"""

from __future__ import annotations

import contextlib
import csv
import json
import logging
import os
import queue
import threading
import time as _time
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

import robots
from common.trajectory import Trajectory
from derivatives.oracle import Knot, centered_fd, is_smooth, oracle_model, relative_error
from derivatives.provider_base import Linearization
from mpc.app.config import AuditSettings
from mpc.app.record.atomic import atomic_output
from mpc.app.runtime.tally import Tally
from mpc.tasks import make_task

log = logging.getLogger(__name__)

#: Columns of ``audit.csv``.
COLUMNS = ("iteration", "time", "knot", "err_A", "err_B", "err", "smooth", "seconds")


@dataclass(frozen=True)
class _Knot(Knot):
    """A :class:`Knot` with where it came from."""

    iteration: int = 0
    knot: int = 0
    #: The planning model's terrain when the knot was planned (:meth:`DerivativeAudit.
    #: terrain_changed`), or None while it is the one the audit's model was copied with.
    terrain: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None


class DerivativeAudit:
    """Checks one knot every ``every`` iterations on a low-priority worker (see module doc).

    ``meta`` (robot, task, planner timestep, self-collision, model name) goes into every saved
    state so that :func:`load_state` can rebuild the planning model.
    """

    def __init__(self, model: mujoco.MjModel, run_dir: Path, settings: AuditSettings,
                 meta: dict, seed: int = 0):
        self.settings = settings
        self.dir = Path(run_dir)
        self.meta = meta
        self.model = oracle_model(model)
        self._data = mujoco.MjData(self.model)
        #: The terrain of knots offered from now on, and the one the audit's model holds.
        self._terrain: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._applied: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._rng = np.random.default_rng(seed)
        self._queue: queue.Queue[_Knot | None] = queue.Queue(maxsize=1)
        self._lock = threading.Lock()
        self.dir.mkdir(parents=True, exist_ok=True)
        #: Finished checks, one row of :data:`COLUMNS` each, appended as they finish.
        # open for the whole run (closed in close())
        self._csv = open(self.dir / "audit.csv", "w", newline="")  # noqa: SIM115
        self._rows = csv.writer(self._csv)
        self._rows.writerow(COLUMNS)
        self._csv.flush()
        self.checks = 0
        self._last = self._worst = float("nan")
        self._worst_smooth: float | None = None
        self.non_smooth = 0
        self._errors, self._seconds = Tally(), Tally()
        self.skipped = 0
        self.disagreements = 0
        #: Set by the worker when a disagreement asks the run to switch to fd.
        self.switch_requested = False
        self._worker = threading.Thread(target=self._work, name="derivative-audit", daemon=True)
        self._worker.start()

    # --- planner thread -----------------------------------------------------------------------
    def offer(self, iteration: int, nominal: Trajectory | None, lin: Linearization,
              knots: np.ndarray) -> None:
        """After planner iteration ``iteration``: hand one of its linearized ``knots`` to the
        worker if one is due and the worker is free (a few small copies, nothing else)."""
        if iteration % self.settings.every or nominal is None or len(knots) == 0:
            return
        if self._queue.full():
            with self._lock:
                self.skipped += 1
            return
        t = int(self._rng.choice(knots))
        self._queue.put_nowait(_Knot.of(nominal, lin, t, iteration=iteration, knot=t,
                                        terrain=self._terrain))

    def terrain_changed(self, model: mujoco.MjModel) -> None:
        """The planning model's terrain changed between plans (a map received while running,
        :mod:`mpc.app.runtime.map_updates`): the knots offered from now on are checked on a
        copy of its height fields and body poses (a window's body moves), not on the terrain
        the audit's model was copied with."""
        self._terrain = (model.hfield_data.copy(), model.body_pos.copy(),
                         model.body_quat.copy())

    def follow(self, model: mujoco.MjModel) -> None:
        """After a plan: if the planning model's bodies were posed elsewhere than the audit
        holds (the task moves its terrain before each plan: a map registered to the standing
        feet, a fitted floor), the knots offered from now on are checked where they were
        planned (:meth:`terrain_changed`)."""
        if self._terrain is None:  # the worker writes the audit's model only after a change
            held = self.model.body_pos, self.model.body_quat
        else:
            held = self._terrain[1], self._terrain[2]
        if not (np.array_equal(model.body_pos, held[0])
                and np.array_equal(model.body_quat, held[1])):
            self.terrain_changed(model)

    # --- worker -------------------------------------------------------------------------------
    def _work(self) -> None:
        # lowest priority for this thread only (Linux niceness is per thread): the audit takes
        # what the planner leaves
        with contextlib.suppress(AttributeError, OSError):  # platforms without it
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        while (k := self._queue.get()) is not None:
            try:
                self._check(k)
            except Exception:  # an audit must never take the run down
                log.exception("derivative audit of knot %d failed", k.knot)

    def _check(self, k: _Knot) -> None:
        start = _time.perf_counter()
        if k.terrain is not None and k.terrain is not self._applied:
            self.model.hfield_data[:], self.model.body_pos[:], self.model.body_quat[:] = \
                k.terrain
            self._applied = k.terrain
        s = self.settings
        # the oracle's own error: truncation grows as eps², the solver's residual (and the
        # steep cone curvature of a barely sliding foot) as 1/eps; where eps is too small for
        # a state, a larger step agrees, so a check beyond the threshold tries 10 eps and
        # 100 eps and keeps the best agreement
        err, err_a, err_b, best = np.inf, np.inf, np.inf, None
        for eps in (s.eps, 10 * s.eps, 100 * s.eps):
            A, B = centered_fd(self.model, k.load(self._data), eps)
            errors = relative_error(k.A, A), relative_error(k.B, B)
            if max(errors) < err:
                (err_a, err_b), err, best = errors, max(errors), (A, B)
            if err <= s.threshold:
                break
        smooth = True
        if err > s.threshold:
            smooth = self._smooth(k)
            if smooth:
                self._disagreement(k, *best, err_a, err_b)
            else:
                log.info("derivative audit: knot %d at t=%.3f s is %.1e off but its contact "
                         "set changes within ±%.0e (non-smooth; not a disagreement)", k.knot,
                         k.time, err, s.eps)
        seconds = _time.perf_counter() - start
        with self._lock:
            self._rows.writerow((k.iteration, k.time, k.knot, err_a, err_b, err, int(smooth),
                                 seconds))
            self._csv.flush()
            self.checks += 1
            self._last = err
            self._worst = err if self.checks == 1 else max(self._worst, err)
            if smooth:
                self._worst_smooth = err if self._worst_smooth is None else max(
                    self._worst_smooth, err)
            else:
                self.non_smooth += 1
            self._errors.add(err)
            self._seconds.add(seconds)

    def _smooth(self, k: _Knot) -> bool:
        """True if ±eps in every state and control coordinate keeps the contact set and the
        constraint states."""
        return is_smooth(self.model, k.load(self._data), self.settings.eps)

    def _disagreement(self, k: _Knot, A: np.ndarray, B: np.ndarray, err_a: float,
                      err_b: float) -> None:
        folder = self.dir / "audit"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"disagreement_{k.iteration:06d}_knot{k.knot:02d}.npz"
        with atomic_output(path) as f:
            np.savez(f, time=k.time, qpos=k.qpos, qvel=k.qvel, act=k.act, ctrl=k.ctrl,
                     warmstart=k.warmstart, A=k.A, B=k.B, A_fd=A, B_fd=B, err_A=err_a,
                     err_B=err_b, eps=self.settings.eps, meta=json.dumps(self.meta))
        with self._lock:
            self.disagreements += 1
            switch = self.settings.switch_to_fd and not self.switch_requested
            self.switch_requested |= self.settings.switch_to_fd
        log.warning("derivative audit: iteration %d knot %d (t=%.4f s) disagrees with centered "
                    "finite differences: relative error A %.2e, B %.2e (threshold %.0e); "
                    "qpos %s qvel %s ctrl %s; state saved to %s", k.iteration, k.knot, k.time,
                    err_a, err_b, self.settings.threshold, np.array2string(k.qpos, 200),
                    np.array2string(k.qvel, 200), np.array2string(k.ctrl, 200), path)
        if switch:
            log.warning("derivative audit: switching the planner to the fd backend "
                        "(derivatives.audit.switch_to_fd)")

    # --- reporting ----------------------------------------------------------------------------
    def latest(self) -> tuple[int, float, float, int] | None:
        """(checks, last error, worst error, disagreements), or None before the first check."""
        with self._lock:
            if not self.checks:
                return None
            return self.checks, self._last, self._worst, self.disagreements

    def close(self, timeout: float = 30.0) -> dict:
        """Stop the worker (after the check in progress), close ``audit.csv``, plot it in
        ``audit.png``, return the statistics for the summary."""
        try:
            self._queue.put(None, timeout=timeout)
        except queue.Full:  # pragma: no cover - a check that never ends
            log.warning("derivative audit worker did not finish")
        self._worker.join(timeout)
        with self._lock:
            self._csv.close()
            stats = {
                "every": self.settings.every,
                "threshold": self.settings.threshold,
                "checks": self.checks,
                "skipped": self.skipped,
                "median_error": self._errors.median(),
                "worst_error": self._worst if self.checks else None,
                "worst_smooth_error": self._worst_smooth,
                "non_smooth": self.non_smooth,
                "disagreements": self.disagreements,
                "switched_to_fd": self.switch_requested,
                "check_ms_median": None if not self.checks else self._seconds.median() * 1e3,
            }
        with open(self.dir / "audit.csv", newline="") as f:
            rows = [tuple(float(v) for v in r) for r in list(csv.reader(f))[1:]]
        _plot(self.dir / "audit.png", rows, self.settings.threshold)
        return stats


def _plot(path: Path, rows: list[tuple], threshold: float) -> None:
    """Relative error of each check over plan time (log scale), non-smooth knots hollow."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # the plot extra is optional; audit.csv holds the same numbers
        return
    fig, ax = plt.subplots(figsize=(7, 3.5))
    if rows:
        t = np.array([r[1] for r in rows])
        e = np.maximum(np.array([r[5] for r in rows]), 1e-16)
        smooth = np.array([r[6] for r in rows], dtype=bool)
        ax.semilogy(t[smooth], e[smooth], "o", ms=3, label="smooth knot")
        ax.semilogy(t[~smooth], e[~smooth], "o", ms=3, mfc="none", label="contact set changes")
    ax.axhline(threshold, color="r", lw=1, label="threshold")
    ax.set_xlabel("plan time (s)")
    ax.set_ylabel("relative error of A, B")
    ax.set_title("derivative audit against centered finite differences")
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    with atomic_output(path) as f:
        fig.savefig(f, format="png", dpi=100)
    plt.close(fig)


def load_state(path: str | Path) -> tuple[mujoco.MjModel, mujoco.MjData, dict]:
    """A saved disagreement: the planning model rebuilt from its metadata, data holding the
    knot (state, control, warm start, time; forward pass done) and the saved arrays."""
    saved = dict(np.load(path))
    meta = json.loads(str(saved.pop("meta")))
    task_params = dict(meta["task"])
    task = make_task(task_params.pop("name"), robots.info(meta["robot"]), **task_params)
    overlay = meta.get("overlay")  # the planning model's overlay, as a mapping
    m = task.planning_model(meta["timestep"], meta["self_collision"], meta["impratio"],
                            None if overlay is None else
                            robots.Overlay.from_mapping(overlay, str(path), robots.ROBOTS),
                            meta.get("jacobian", "auto"))
    d = mujoco.MjData(m)
    d.time = float(saved["time"])
    d.qpos[:], d.qvel[:], d.act[:], d.ctrl[:] = (saved["qpos"], saved["qvel"], saved["act"],
                                                 saved["ctrl"])
    d.qacc_warmstart[:] = saved["warmstart"]
    mujoco.mj_forward(m, d)
    return m, d, saved
