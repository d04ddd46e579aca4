"""Iterative LQR for model-predictive control (MJPC's iLQG, one iteration per plan).

One iteration from the measured state x₀ at time t₀:

1. Nominal: roll the previous policy out from x₀ under feedback scalings s ∈ {0, 10⁻³…1};
   keep the cheapest (warm start).
2. Model derivatives A_t, B_t and sensor Jacobians C_t, D_t from the provider (every
   ``derivative_skip``-th knot and the last two, linearly interpolated in between). With a
   single warm-start candidate the provider's threads start during step 1, on each knot as
   soon as the rollout has recorded it. The calling thread computes the task's residual
   Jacobian (step 3's) while the provider's helper threads start, then joins them.
3. Cost derivatives by Gauss-Newton on the task's residuals (:mod:`mpc.planner.cost`), the
   horizon's two halves on two threads (the rollout pool's idle helper).
4. Backward pass with box-QP control limits and regularization μ
   (:mod:`mpc.planner.kernels.riccati`); a non-positive-definite Q_uu raises μ and retries.
5. Line search: rollouts of u = u* + α k + K (x ⊖ x*) for α ∈ {1…α_min, 0}; the cheapest
   becomes the new nominal. ``linesearch: parallel`` rolls all candidates out at once (MJPC);
   ``batched`` rolls them out in thread-sized batches from α = 1 down and stops after the first
   batch whose best candidate achieves at least 10 % of the expected decrease (Armijo), which
   saves most rollouts on a machine with few cores. The ratio of actual to expected
   improvement drives μ.
6. Publish the policy (x*, u*, K, times).

An iteration that fails or produces anything non-finite is discarded; the last policy stays.
"""

from __future__ import annotations

import time as _time
from dataclasses import dataclass

import mujoco
import numpy as np

from common.handover import READY, STOPPED, new_progress
from common.settings import setting
from common.trajectory import ModelLayout, Trajectory
from derivatives.provider_base import DerivativeProvider, Linearization
from mpc.planner.cost import gauss_newton, trajectory_costs
from mpc.planner.kernels.riccati import backward_pass
from mpc.planner.planner_base import IterationStats, Planner
from mpc.planner.policy import Policy
from mpc.planner.rollout import RolloutPool
from mpc.tasks.task_base import Task


@dataclass(frozen=True)
class ILQRSettings:
    """The planner's settings: the ``planner:`` section of a run config, with its bounds."""

    horizon: float = setting(0.35, gt=0.0, max=5.0, help="planning horizon (s)")
    timestep: float = setting(0.01, gt=0.0, max=0.1, help="planning model timestep (s)")
    linesearch_candidates: int = setting(10, min=2, max=256, help="rollouts per line search")
    linesearch: str = setting("parallel", choices=("parallel", "batched"),
                              help="all candidates at once (MJPC) or thread-sized batches")
    warmstart_candidates: int = setting(6, min=1, max=64,
                                       help="feedback scalings tried for the nominal")
    min_step: float = setting(1e-3, gt=0.0, max=1.0, help="smallest line-search step")
    derivative_skip: int = setting(1, min=1, max=10, help="derivatives every k-th knot")
    mu_init: float = setting(1.0, gt=0.0, max=1e12)
    mu_min: float = setting(1e-6, gt=0.0, max=1e12)
    mu_max: float = setting(1e6, gt=0.0, max=1e12)
    mu_factor: float = setting(2.0, gt=1.0, max=100.0)
    backward_retries: int = setting(5, min=0, max=100)
    threads: int = setting(2, min=1, max=64, help="rollout threads")
    max_speed: float = setting(100.0, gt=0.0, max=1e4,
                               help="rollouts faster than this diverged (m/s, rad/s)")
    self_collision: bool = setting(False, help="plan contacts between the robot's own bodies "
                                   "(off: ground contacts only, what the analytic backend "
                                   "covers)")
    impratio: float | None = setting(None, gt=0.0, max=1e4,
                                     help="frictional-to-normal impedance ratio of the "
                                     "planning model (none: the robot model's own); the "
                                     "quadrupeds' 100 makes a step cost about twice what 1 "
                                     "does")
    jacobian: str = setting("auto", choices=("auto", "dense", "sparse"),
                            help="the planning model's constraint Jacobian (MuJoCo's "
                            "opt.jacobian; auto: dense below 60 dofs, every robot here)")

    @property
    def knots(self) -> int:
        return round(self.horizon / self.timestep) + 1


class Regularization:
    """μ schedule of Tassa et al.: multiplicative steps whose factor itself accelerates."""

    def __init__(self, initial: float, low: float, high: float, factor: float):
        self.initial, self.low, self.high, self.factor = initial, low, high, factor
        self.reset()

    def reset(self) -> None:
        self.mu = self.initial
        self.delta = 1.0

    def increase(self, scale: float = 1.0) -> None:
        self.delta = max(self.factor, self.delta * self.factor) * scale
        self.mu = min(self.high, max(self.low, self.mu * self.delta))

    def decrease(self) -> None:
        self.delta = min(1.0 / self.factor, self.delta / self.factor)
        self.mu = max(self.low, self.mu * self.delta)


def derivative_knots(horizon: int, skip: int) -> list[int]:
    """Knots where derivatives are computed: every ``skip``-th knot and the last two."""
    knots = set(range(0, horizon, max(1, skip)))
    knots.update({horizon - 2, horizon - 1})
    return sorted(k for k in knots if k >= 0)


class ILQR(Planner):
    """iLQR planner on a task's planning model with a derivative provider."""

    def __init__(self, task: Task, model: mujoco.MjModel, provider: DerivativeProvider,
                 settings: ILQRSettings, home_ctrl: np.ndarray):
        self.task = task
        self.model = model
        self.provider = provider
        self.settings = settings
        self.layout = ModelLayout.of(model)
        self.T = settings.knots
        self.home_ctrl = np.asarray(home_ctrl, dtype=float).copy()
        capacity = max(settings.linesearch_candidates, settings.warmstart_candidates)
        self.pool = RolloutPool(model, self.T, capacity, settings.threads, settings.max_speed)
        self.linearization = Linearization.allocate(model, self.T)
        self.knots = derivative_knots(self.T, settings.derivative_skip)
        self.reg = Regularization(settings.mu_init, settings.mu_min, settings.mu_max,
                                  settings.mu_factor)
        n = settings.warmstart_candidates
        # 0 and n - 1 scalings up to 1 (full feedback), log-spaced from 10⁻³; np.logspace with
        # one point would give 10⁻³ alone, so two candidates are 0 and 1
        scales = np.logspace(-3, 0, n - 1) if n > 2 else np.ones(n - 1)
        self._fb_scales = np.concatenate([[0.0], scales]) if n > 1 else np.array([1.0])
        n = settings.linesearch_candidates
        self._alphas = np.concatenate(
            [np.logspace(0, np.log10(settings.min_step), n - 1), [0.0]])
        nx, nu = self.layout.nx, self.layout.nu
        self._K = np.zeros((self.T, nu, nx))
        self._k = np.zeros((self.T, nu))
        self._dV = np.zeros(2)
        self.nominal: Trajectory | None = None
        self.iteration = 0

    def reset(self, time, qpos, qvel, act) -> None:
        self.policy = Policy.hold(self.layout, time, qpos, qvel, act, self.home_ctrl)
        self.reg.reset()
        self.provider.reset()
        self._k[:] = 0.0
        self.nominal = None
        self._last_start: float | None = None

    def close(self) -> None:
        self.pool.close()
        self.provider.close()

    # ---------------------------------------------------------------------------------------
    def iterate(self, time, qpos, qvel, act) -> IterationStats:
        s = self.settings
        self.iteration += 1
        stats = IterationStats(iteration=self.iteration, time=float(time), status="ok")
        timings = stats.timings
        tic = _time.perf_counter()
        self.task.update(float(time), qpos, qvel)
        self.task.pose_ground(self.model)  # the planning model's floor: the task's ground
        self._shift_provider(float(time))

        # 1. nominal: previous policy under several feedback scalings; a single candidate is
        #    linearized (step 2) by the provider's threads while it rolls out
        t0 = _time.perf_counter()
        n = len(self._fb_scales)
        lin = self.linearization
        finish = progress = None
        if n == 1:
            progress = new_progress()
            finish = self.provider.stream(self.pool.batch.trajectory(0), self.knots, lin,
                                          progress)
        try:
            batch = self.pool.run(time, qpos, qvel, act, s.timestep, self.policy,
                                  np.zeros(n), self._fb_scales, progress)
        except BaseException:
            if finish is not None:  # the provider's threads would wait for knots forever
                progress[READY] = STOPPED
                finish()
            raise
        costs, residuals = self._batch_costs(batch)
        best = int(np.argmin(costs))
        timings["nominal"] = _ms(t0)
        if not np.isfinite(costs[best]):
            if finish is not None:
                finish()  # the provider's threads stop at the missing knots
            return self._discard(stats, "nominal rollouts failed", tic)
        nominal = batch.trajectory(best).copy()
        self.nominal = nominal
        stats.cost_nominal = float(costs[best])
        residual = residuals[best]
        term_costs = self.task.term_costs(residual[0])
        stats.term_costs = term_costs
        stats.stage_cost = float(term_costs.sum())

        # 2. model derivatives (what is left of them after step 1), and meanwhile on this
        #    thread the residual Jacobian (the task's, step 3's, which needs no derivative):
        #    the provider's helper threads start at once, this thread joins them after it
        t0 = _time.perf_counter()
        if finish is None:
            finish = self.provider.stream(nominal, self.knots, lin, new_progress(self.T))
        Rs = self.task.residual_jacobian(nominal.sensordata, nominal.time)
        finish()
        lin.interpolate(self.knots)
        stats.simulations = self.provider.last_simulations
        timings["derivatives"] = _ms(t0)

        # 3. cost derivatives
        t0 = _time.perf_counter()
        cd = gauss_newton(self.task, residual, Rs, lin.C, lin.D, self.pool.executor)
        timings["cost_derivatives"] = _ms(t0)
        if not (np.all(np.isfinite(lin.A)) and np.all(np.isfinite(lin.B))
                and np.all(np.isfinite(cd.lxx)) and np.all(np.isfinite(cd.lx))):
            return self._discard(stats, "non-finite derivatives", tic)

        # 4. backward pass, raising μ until Q_uu + μI is positive definite
        t0 = _time.perf_counter()
        lay = self.layout
        for _ in range(s.backward_retries + 1):
            failed_at = backward_pass(lin.A, lin.B, cd.lx, cd.lu, cd.lxx, cd.luu, cd.lux,
                                      nominal.ctrl, lay.ctrl_lo, lay.ctrl_hi, self.reg.mu,
                                      self._K, self._k, self._dV)
            if failed_at < 0:
                break
            self.reg.increase()
        timings["backward"] = _ms(t0)
        if failed_at >= 0:
            return self._discard(stats, "backward pass not positive definite", tic)
        if not (np.all(np.isfinite(self._K)) and np.all(np.isfinite(self._k))):
            return self._discard(stats, "non-finite gains", tic)

        # 5. line search over step sizes
        t0 = _time.perf_counter()
        candidate = Policy.build(lay, nominal.time, nominal.qpos, nominal.qvel, nominal.act,
                                 nominal.ctrl, self._K, self._k)
        plan, alpha, cost = self._linesearch(time, qpos, qvel, act, candidate,
                                             stats.cost_nominal)
        timings["linesearch"] = _ms(t0)
        if plan is None:
            self.reg.increase(10.0)
            return self._discard(stats, "line search rollouts failed", tic)
        expected = self._expected(alpha)
        actual = cost - stats.cost_nominal
        ratio = actual / expected if expected < 0 else 0.0
        if ratio > 0.5 or alpha > 0.3:
            self.reg.decrease()
        elif ratio < 0.1 or alpha < 0.06:
            self.reg.increase()
        stats.alpha, stats.mu, stats.expected, stats.cost = alpha, self.reg.mu, expected, cost

        # 6. publish
        self.policy = Policy.build(lay, plan.time, plan.qpos, plan.qvel, plan.act, plan.ctrl,
                                   self._K, iteration=self.iteration)
        timings["total"] = _ms(tic)
        return stats

    # ---------------------------------------------------------------------------------------
    def _expected(self, alpha: float) -> float:
        return float(alpha * self._dV[0] + alpha**2 * self._dV[1])

    def _linesearch(self, time, qpos, qvel, act, candidate: Policy, cost_nominal: float):
        """(plan, α, cost) of the chosen step, or (None, 0, inf) if every rollout failed."""
        alphas = self._alphas
        size = len(alphas) if self.settings.linesearch == "parallel" else len(self.pool.datas)
        best: tuple[Trajectory | None, float, float] = (None, 0.0, np.inf)
        for start in range(0, len(alphas), size):
            chunk = alphas[start : start + size]
            batch = self.pool.run(time, qpos, qvel, act, self.settings.timestep, candidate,
                                  chunk, np.ones(len(chunk)))
            costs, _ = self._batch_costs(batch)
            i = int(np.argmin(costs))
            if costs[i] < best[2]:
                best = (batch.trajectory(i).copy(), float(chunk[i]), float(costs[i]))
            expected = self._expected(best[1])
            if expected < 0 and (best[2] - cost_nominal) <= 0.1 * expected:
                break
        return best

    def _batch_costs(self, batch) -> tuple[np.ndarray, np.ndarray]:
        """Costs of the rollouts (inf where one failed) and their residuals."""
        costs, residuals = trajectory_costs(self.task, batch.sensordata, batch.time)
        costs = np.where(batch.status == 0, costs, np.inf)
        return np.where(np.isfinite(costs), costs, np.inf), residuals

    def _shift_provider(self, time: float) -> None:
        """Tell caching backends how many knots the horizon moved since the last plan."""
        if self._last_start is not None:
            shift = round((time - self._last_start) / self.settings.timestep)
            if shift > 0:
                self.provider.shift(shift)
        self._last_start = time

    def _discard(self, stats: IterationStats, reason: str, tic: float) -> IterationStats:
        stats.status = reason
        stats.mu = self.reg.mu
        stats.timings["total"] = _ms(tic)
        return stats


def _ms(t0: float) -> float:
    return (_time.perf_counter() - t0) * 1e3
