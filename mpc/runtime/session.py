"""One run: the planner, the plant, the feedback law, the monitors and the recording.

The loops in :mod:`mpc.runtime.lockstep` and :mod:`mpc.runtime.realtime` only decide *when*
to plan, to act and to step; everything they call lives here.
"""

from __future__ import annotations

import logging
import threading
import time as _time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import derivatives
from mpc import assembly
from mpc.config import Config
from mpc.planner_base import IterationStats
from mpc.plant_base import Plant, PlantState
from mpc.policy import Policy
from mpc.runlog import RunRecorder
from mpc.runtime.feedback import FeedbackController
from mpc.runtime.predict import StatePredictor

log = logging.getLogger(__name__)


@dataclass
class Counters:
    """Rates and timings measured during the run."""

    iterations: int = 0
    failed_iterations: int = 0
    feedback_steps: int = 0
    iteration_ms: list[float] = field(default_factory=list)
    derivative_ms: list[float] = field(default_factory=list)
    phase_ms: dict[str, list[float]] = field(default_factory=dict)
    stage_costs: list[float] = field(default_factory=list)
    policy_age: list[float] = field(default_factory=list)
    last: IterationStats | None = None


class Session:
    """Builds everything from a config and exposes plan/act/record to the loops."""

    def __init__(self, cfg: Config, run_dir: Path, plant: Plant | None = None):
        """``plant`` replaces the one the config describes (scripts that study a plant the
        config cannot name)."""
        self.cfg = cfg
        self.task = assembly.build_task(cfg)
        self.planner = assembly.build_planner(cfg, self.task)
        self.plant = assembly.build_plant(cfg) if plant is None else plant
        self.robot = self.task.robot
        self.recorder = RunRecorder(run_dir, cfg.to_dict(), [t.name for t in self.task.terms])
        self.telemetry = None
        if cfg.telemetry.lcm_url:  # imported only when asked for: a simulation needs no LCM
            from hardware.lcm.telemetry import TelemetryPublisher

            self.telemetry = TelemetryPublisher(cfg.telemetry.lcm_url, cfg.telemetry.channel)
        nu = self.planner.layout.nu
        self.feedback = FeedbackController(self.plant, nu, cfg.runtime.policy_timeout,
                                           cfg.runtime.feedback_gain)
        self.predictor = (StatePredictor(self.planner.model, cfg.runtime.feedback_gain)
                          if cfg.runtime.plan_ahead and cfg.runtime.mode == "realtime" else None)
        self.counters = Counters()
        self.lock = threading.Lock()
        self.fell: str | None = None
        self.fd_start = derivatives.fd_evaluations()
        self.wall_start = _time.perf_counter()
        state = self.plant.read_state()
        self.time_start = state.time
        self.goal_final = np.array(getattr(self.task, "waypoints", [[np.nan, np.nan]])[-1])
        self.goal_distance_start = self.goal_distance(state.qpos)
        self.planner.reset(state.time, state.qpos, state.qvel, state.act)
        self._next_record = state.time
        self._record_period = 1.0 / cfg.output.record_rate
        self._warmup_done = False

    # --- the three actions of the loops ---------------------------------------------------
    def plan(self, state: PlantState) -> IterationStats:
        start = _time.perf_counter()
        if self.predictor is not None:
            state = self.predictor.predict(state, self.planner.policy)
        stats = self.planner.iterate(state.time, state.qpos, state.qvel, state.act)
        if self.predictor is not None and self._warmup_done and stats.status == "ok":
            self.predictor.note(_time.perf_counter() - start)
        with self.lock:
            c = self.counters
            c.last = stats
            self.recorder.plan(stats, _time.perf_counter() - self.wall_start)
            if not self._warmup_done:  # the first iteration includes JIT compilation
                self._warmup_done = True
            else:
                c.iterations += 1
                if stats.status != "ok":
                    c.failed_iterations += 1
                    log.warning("planner iteration %d discarded: %s", stats.iteration,
                                stats.status)
                else:
                    c.iteration_ms.append(stats.timings["total"])
                    c.derivative_ms.append(stats.timings["derivatives"])
                    for k, v in stats.timings.items():
                        c.phase_ms.setdefault(k, []).append(v)
            if np.isfinite(stats.stage_cost):
                c.stage_costs.append(stats.stage_cost)
        if self.telemetry is not None:
            self.telemetry.publish(self, stats)
        return stats

    def act(self, state: PlantState) -> None:
        self.feedback.step(self.policy_in_force(state), state)
        with self.lock:
            self.counters.feedback_steps += 1
            self.counters.policy_age.append(self.feedback.last_age)

    def policy_in_force(self, state: PlantState) -> Policy:
        """The policy the feedback law follows at ``state``: the planner's latest."""
        return self.planner.policy

    def observe(self, state: PlantState) -> bool:
        """Record and check the state; returns False when the run must stop (a fall). A dry
        run commands nothing, so a robot lying on its side is not a reason to stop it."""
        if state.time + 1e-9 >= self._next_record:
            self._next_record += self._record_period
            contacts = (self.plant.foot_contacts() if hasattr(self.plant, "foot_contacts")
                        else np.zeros(len(self.robot.feet), bool))
            self.recorder.state(state.time, state.qpos, state.qvel, self.feedback.ctrl,
                                contacts)
        if self.fell is None:
            self.fell = self.task.fall_reason(state.qpos)
            if self.fell is not None:
                log.error("robot fell at t=%.3f s: %s", state.time, self.fell)
                return bool(self.cfg.safety.get("dry_run", False))
        return True

    # --- measurements ----------------------------------------------------------------------
    def goal_distance(self, qpos: np.ndarray) -> float:
        return float(np.linalg.norm(qpos[:2] - self.goal_final))

    def summary(self, mode: str) -> dict:
        state = self.plant.read_state()
        c = self.counters
        sim_time = state.time - self.time_start
        wall = _time.perf_counter() - self.wall_start
        rate_base = sim_time if mode == "lockstep" else self.loop_wall_time
        med = lambda v: float(np.median(v)) if v else float("nan")  # noqa: E731
        p95 = lambda v: float(np.percentile(v, 95)) if v else float("nan")  # noqa: E731
        return {
            "robot": self.cfg.robot,
            "task": self.cfg.task["name"],
            "config": self.cfg.source,
            "backend": self.cfg.derivatives["backend"],
            "mode": mode,
            "seed": self.cfg.runtime.seed,
            "sim_time_s": round(sim_time, 6),
            "wall_time_s": round(wall, 3),
            "real_time_factor": round(sim_time / self.loop_wall_time, 3)
            if self.loop_wall_time > 0 else None,
            "fell": self.fell is not None,
            "fell_reason": self.fell,
            # summarized before the plant is closed: any reason here is a trip during the run
            "damping_reason": getattr(self.plant, "damping_reason", None),
            "goal": self.goal_final.tolist(),
            "goal_distance_start_m": round(self.goal_distance_start, 4),
            "goal_distance_end_m": round(self.goal_distance(state.qpos), 4),
            "final_base_xy": [round(float(v), 4) for v in state.qpos[:2]],
            "mean_cost": float(np.mean(c.stage_costs)) if c.stage_costs else None,
            "planner_iterations": c.iterations,
            "failed_iterations": c.failed_iterations,
            "planning_rate_hz": round(c.iterations / rate_base, 2) if rate_base > 0 else None,
            "iteration_ms_median": med(c.iteration_ms),
            "iteration_ms_p95": p95(c.iteration_ms),
            "derivative_ms_median": med(c.derivative_ms),
            "phase_ms_median": {k: med(v) for k, v in c.phase_ms.items()},
            "feedback_rate_hz": round(c.feedback_steps / rate_base, 2) if rate_base > 0
            else None,
            "policy_age_ms_median": med(c.policy_age) * 1e3 if c.policy_age else None,
            "policy_age_ms_max": float(np.max(c.policy_age)) * 1e3 if c.policy_age else None,
            "fd_evaluations": derivatives.fd_evaluations() - self.fd_start,
        }

    #: Wall time spent in the control loop proper (set by the loop).
    loop_wall_time: float = 0.0

    def close(self, mode: str) -> dict:
        """Stop the plant (damping on hardware), write the run directory, return the summary."""
        summary = self.summary(mode)
        self.plant.close()
        self.planner.close()
        self.recorder.write(summary)
        return summary
