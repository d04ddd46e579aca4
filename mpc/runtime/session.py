"""One run: the planner, the plant, the feedback law, the monitors and the observers.

The loops in :mod:`mpc.runtime.lockstep` and :mod:`mpc.runtime.realtime` only decide *when*
to plan, to act, to step and to tick; everything they call lives here. What the run does is
reported to :class:`~mpc.runtime.observer.Observer` s (the recorder always; telemetry, a
dashboard or a viewer when asked for), which never read the session's internals.
"""

from __future__ import annotations

import logging
import threading
import time as _time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import derivatives
from derivatives.counter import fallbacks_since
from mpc import assembly
from mpc.commands import COMMAND_SOURCES, CommandFilter, CommandSource
from mpc.config import Config
from mpc.planner_base import IterationStats
from mpc.plant_base import Plant, PlantState
from mpc.policy import Policy
from mpc.runlog import RunRecorder
from mpc.runtime.audit import AuditSettings, DerivativeAudit
from mpc.runtime.feedback import FeedbackController
from mpc.runtime.observer import Observer, PlanReport, StateReport, Status
from mpc.runtime.predict import StatePredictor
from mpc.runtime.tally import Tally
from mpc.tasks.task_base import Task
from robots.registry import Registry

log = logging.getLogger(__name__)

#: Observers a config can switch on by name (``telemetry.lcm_url``); plug-ins live above mpc.
OBSERVERS: Registry[Observer] = Registry("observer", {
    "lcm_telemetry": "hardware.lcm.telemetry:TelemetryPublisher",
})


@dataclass
class Counters:
    """Rates and timings measured during the run, in memory that does not grow with its
    length (a :class:`Tally` per measured quantity)."""

    iterations: int = 0
    failed_iterations: int = 0
    feedback_steps: int = 0
    iteration_ms: Tally = field(default_factory=Tally)
    derivative_ms: Tally = field(default_factory=Tally)
    phase_ms: dict[str, Tally] = field(default_factory=dict)
    stage_costs: Tally = field(default_factory=Tally)
    policy_age: Tally = field(default_factory=Tally)
    max_joint_speed: float = 0.0
    last: IterationStats | None = None


class Session:
    """Builds everything from a config and exposes plan/act/observe/tick to the loops."""

    def __init__(self, cfg: Config, run_dir: Path, plant: Plant | None = None):
        """``plant`` replaces the one the config describes (tests that hold a plant)."""
        self.cfg = cfg
        self.run_dir = Path(run_dir)
        self.task = assembly.build_task(cfg)
        self.planner = assembly.build_planner(cfg, self.task)
        self.plant = assembly.build_plant(cfg) if plant is None else plant
        self.recorder: RunRecorder | None = None
        try:
            self._start()
        except BaseException:  # a robot link must not outlive a run that never started
            self.plant.close()
            self.planner.close()
            if self.recorder is not None:  # nor its record's writer and log handler
                self.recorder.abandon()
            raise

    def _start(self) -> None:
        """Everything after the plant is up: feedback, observers, the first state."""
        cfg = self.cfg
        self.robot = self.task.robot
        rt = cfg.runtime
        self.feedback = FeedbackController(self.plant, self.planner.layout.nu,
                                           rt.policy_timeout, rt.feedback_gain)
        # Planning ahead: by the measured iteration time in real time, by the emulated plan
        # latency in lockstep (where wall time means nothing).
        self.predictor = None
        if rt.plan_ahead and rt.mode == "realtime":
            self.predictor = StatePredictor(self.planner.model, rt.feedback_gain)
        elif rt.plan_ahead and rt.plan_latency > 0:
            self.predictor = StatePredictor(self.planner.model, rt.feedback_gain,
                                            fixed_lead=rt.plan_latency)
        #: Plans waiting to come into force (lockstep with ``runtime.plan_latency``).
        self._pending: deque[tuple[float, Policy]] = deque()
        self.counters = Counters()
        self.lock = threading.Lock()
        self.fell: str | None = None
        #: Set when Ctrl-C ended the run early.
        self.interrupted = False
        #: Why the run was asked to end early (a signal), or None; the loops end at their
        #: next step (:meth:`observe` returns False).
        self.stop_requested: str | None = None
        self.fd_start = derivatives.fd_evaluations()
        self.fallback_start = derivatives.fallbacks()
        self.wall_start = _time.perf_counter()
        #: The derivative audit (``derivatives.audit.every`` > 0), else None.
        self.audit: DerivativeAudit | None = None
        audit = AuditSettings(**cfg.derivatives.get("audit", {}))
        if audit.every:
            p = cfg.planner
            self.audit = DerivativeAudit(self.planner.model, self.run_dir, audit, {
                "robot": cfg.robot, "task": dict(cfg.task), "timestep": p.timestep,
                "self_collision": p.self_collision, "impratio": p.impratio,
                "model": self.planner.model.names.split(b"\0", 1)[0].decode()},
                cfg.runtime.seed)
        self.recorder = RunRecorder(self.run_dir, cfg.to_dict(),
                                    [t.name for t in self.task.terms], path_sensors(self.task))
        self.observers: list[Observer] = [self.recorder]
        if cfg.telemetry.lcm_url:
            self.attach(OBSERVERS.get("lcm_telemetry")(
                cfg.telemetry.lcm_url, cfg.telemetry.channel, self.task))
        state = self.plant.read_state()
        self.time_start = state.time
        #: Velocity mode: where commands come from and the filter they pass (else None).
        self.command_source: CommandSource | None = None
        self.command_filter: CommandFilter | None = None
        if cfg.command.source:
            options = dict(cfg.command.source)
            kind = options.pop("type")
            self.command_source = COMMAND_SOURCES.get(kind).build(options, self.plant)
            self.command_filter = CommandFilter(cfg.command.max_speed, cfg.command.max_accel,
                                                cfg.command.timeout)
            self.update_command(state.time)
        self.goal_final = np.array(getattr(self.task, "waypoints", [[np.nan, np.nan]])[-1])
        self.goal_distance_start = self.goal_distance(state.qpos)
        self.planner.reset(state.time, state.qpos, state.qvel, state.act)
        self._in_force = self.planner.policy
        self._next_record = state.time
        self._record_period = 1.0 / cfg.output.record_rate
        self._warmup_done = False

    def attach(self, observer: Observer) -> None:
        """Report the rest of the run to ``observer`` too."""
        self.observers.append(observer)

    # --- the actions of the loops ----------------------------------------------------------
    def update_command(self, time: float) -> None:
        """Poll the command source and hand the filtered command to the task. Commands run
        on the run's clock: plant time since the start."""
        t = time - self.time_start
        self.task.set_command(self.command_filter.update(t, self.command_source.read(t)))

    def plan(self, state: PlantState) -> IterationStats:
        start = _time.perf_counter()
        if self.predictor is not None:
            state = self.predictor.predict(state, self.policy_in_force(state))
        if self.audit is not None and self.audit.switch_requested:
            self._switch_to_fd()
        if self.command_source is not None:
            self.update_command(state.time)
        stats = self.planner.iterate(state.time, state.qpos, state.qvel, state.act)
        if self.audit is not None and stats.status == "ok":
            self.audit.offer(stats.iteration, self.planner.nominal, self.planner.linearization,
                             self.planner.knots)
        if self.predictor is not None and self._warmup_done and stats.status == "ok":
            self.predictor.note(_time.perf_counter() - start)
        if self.cfg.runtime.plan_latency > 0:
            self._pending.append((state.time + self.cfg.runtime.plan_latency,
                                  self.planner.policy))
        with self.lock:
            c = self.counters
            c.last = stats
            if not self._warmup_done:  # the first iteration includes JIT compilation
                self._warmup_done = True
            else:
                c.iterations += 1
                if stats.status != "ok":
                    c.failed_iterations += 1
                    log.warning("planner iteration %d discarded: %s", stats.iteration,
                                stats.status)
                else:
                    c.iteration_ms.add(stats.timings["total"])
                    c.derivative_ms.add(stats.timings["derivatives"])
                    for k, v in stats.timings.items():
                        c.phase_ms.setdefault(k, Tally()).add(v)
            if np.isfinite(stats.stage_cost):
                c.stage_costs.add(stats.stage_cost)
            report = PlanReport(stats, self.planner.nominal, _time.perf_counter() -
                                self.wall_start, c.iterations, c.feedback_steps,
                                self.feedback.last_age, _copy(self.task.goal))
        for observer in self.observers:
            observer.on_plan(report)
        return stats

    def _switch_to_fd(self) -> None:
        """The audit found the derivatives wrong and the config asks for fd from then on."""
        if self.planner.provider.name == "fd":
            return
        old = self.planner.provider
        self.planner.provider = derivatives.make_provider(
            "fd", self.planner.model, **self.cfg.derivatives.get("fd", {}))
        old.close()
        log.warning("planner now linearizes by finite differences (fd backend)")

    def act(self, state: PlantState) -> None:
        self.plant.set_planned_stance(self.task.planned_stance(state.time))
        self.feedback.step(self.policy_in_force(state), state)
        with self.lock:
            self.counters.feedback_steps += 1
            self.counters.policy_age.add(self.feedback.last_age)

    def policy_in_force(self, state: PlantState) -> Policy:
        """The policy the feedback law follows at ``state``: the planner's latest, or with
        ``runtime.plan_latency`` the latest whose latency has passed in plant time."""
        if self.cfg.runtime.plan_latency <= 0:
            return self.planner.policy
        while self._pending and self._pending[0][0] <= state.time + 1e-9:
            self._in_force = self._pending.popleft()[1]
        return self._in_force

    def request_stop(self, reason: str) -> None:
        """End the run at the loop's next step, as if it had reached its duration (safe from
        a signal handler: it only sets a flag), and mark it interrupted."""
        self.interrupted = True
        self.stop_requested = reason

    @property
    def planning_started(self) -> bool:
        """Whether the first planner iteration (the one that compiles the kernels) is over."""
        return self._warmup_done

    def observe(self, state: PlantState) -> bool:
        """Record and check the state; returns False when the run must stop (a fall, a
        requested stop). A dry run commands nothing, so a robot lying on its side is not a
        reason to stop it."""
        joints = state.qvel[6:]  # after the floating base's 6 velocities
        if joints.size and np.all(np.isfinite(joints)):
            self.counters.max_joint_speed = max(self.counters.max_joint_speed,
                                                float(np.max(np.abs(joints))))
        if state.time + 1e-9 >= self._next_record:
            self._next_record += self._record_period
            contacts = self.plant.foot_contacts()
            if contacts is None:
                contacts = np.zeros(len(self.robot.feet), bool)
            report = StateReport(state.time, state.qpos, state.qvel, self.feedback.ctrl.copy(),
                                 contacts, _time.perf_counter() - self.wall_start,
                                 self.counters.feedback_steps,
                                 self.task.planned_stance(state.time),
                                 self.plant.actuator_forces(), self.task.command)
            for observer in self.observers:
                observer.on_state(report)
        if self.fell is None:
            self.fell = self.task.fall_reason(state.qpos)
            if self.fell is not None:
                log.error("robot fell at t=%.3f s: %s", state.time, self.fell)
                return bool(self.cfg.safety.get("dry_run", False)) and not self.stop_requested
        return self.stop_requested is None

    def tick(self) -> bool:
        """Let the observers show the run (main thread); False when the run must end: an
        observer asked (the viewer was closed) or a robot's safety layer tripped."""
        state = self.plant.read_state()
        with self.lock:
            c = self.counters
            status = Status(state, c.iterations, c.feedback_steps, self.feedback.last_age,
                            c.last, self.planner.nominal, self.goal_distance(state.qpos),
                            self.plant.foot_contacts(),
                            self.fell or self.feedback.stopped or self.trip_reason(),
                            None if self.audit is None else self.audit.latest(),
                            self.task.command)
        keep = [observer.tick(status) for observer in self.observers]
        return all(keep) and self.trip_reason() is None

    def trip_reason(self) -> str | None:
        """Why a robot's safety layer put it in damping before the run ended, if it did."""
        reason = self.plant.damping_reason
        if self.plant.realtime_only and reason not in (None, "run ended"):
            return reason
        return None

    # --- measurements ----------------------------------------------------------------------
    def goal_distance(self, qpos: np.ndarray) -> float:
        return float(np.linalg.norm(qpos[:2] - self.goal_final))

    def final_reading(self) -> FinalReading:
        """What the summary needs of the plant, read while the plant still runs: a damping
        reason now is a trip during the run, not the plant's own end."""
        return FinalReading(self.plant.read_state(), self.plant.damping_reason,
                            self.trip_reason())

    def summary(self, mode: str, final: FinalReading | None = None) -> dict:
        """The run's figures (summary.json); ``final`` as :meth:`final_reading` took it before
        the plant was closed (read now if not given)."""
        final = self.final_reading() if final is None else final
        state = final.state
        c = self.counters
        sim_time = state.time - self.time_start
        wall = _time.perf_counter() - self.wall_start
        rate_base = sim_time if mode == "lockstep" else self.loop_wall_time
        # None (null in summary.json) for what was not measured, e.g. a run that planned nothing
        age_ms = lambda v: None if v is None else v * 1e3  # noqa: E731
        return {
            **self._identity(mode),
            "sim_time_s": round(sim_time, 6),
            "wall_time_s": round(wall, 3),
            "loop_wall_time_s": round(self.loop_wall_time, 3),
            "real_time_factor": round(sim_time / self.loop_wall_time, 3)
            if self.loop_wall_time > 0 else None,
            "fell": self.fell is not None,
            "fell_reason": self.fell,
            # read before the plant was closed: any reason here is a trip during the run
            "damping_reason": final.damping_reason,
            "trip_reason": final.trip_reason,
            "goal": self.goal_final.tolist(),
            "goal_distance_start_m": round(self.goal_distance_start, 4),
            "goal_distance_end_m": round(self.goal_distance(state.qpos), 4),
            "final_base_xy": [round(float(v), 4) for v in state.qpos[:2]],
            "mean_cost": c.stage_costs.mean(),
            "planner_iterations": c.iterations,
            "failed_iterations": c.failed_iterations,
            "planning_rate_hz": round(c.iterations / rate_base, 2) if rate_base > 0 else None,
            "iteration_ms_median": c.iteration_ms.median(),
            "iteration_ms_p95": c.iteration_ms.quantile(0.95),
            "derivative_ms_median": c.derivative_ms.median(),
            "phase_ms_median": {k: v.median() for k, v in c.phase_ms.items()},
            "feedback_rate_hz": round(c.feedback_steps / rate_base, 2) if rate_base > 0
            else None,
            "policy_age_ms_median": age_ms(c.policy_age.median()),
            "policy_age_ms_max": age_ms(c.policy_age.max()),
            "max_joint_speed_rad_s": round(c.max_joint_speed, 3),
            "fd_evaluations": derivatives.fd_evaluations() - self.fd_start,
            # the analytic backend's knots by finite differences, by reason (empty: none)
            "analytic_fallbacks": fallbacks_since(self.fallback_start),
        }

    def _identity(self, mode: str) -> dict:
        """The summary's entries that come from the config alone (they cannot fail)."""
        return {
            "robot": self.cfg.robot,
            "task": self.cfg.task["name"],
            "config": self.cfg.source,
            "backend": self.cfg.derivatives["backend"],
            "mode": mode,
            "seed": self.cfg.runtime.seed,
            "run_dir": str(self.run_dir),
            "interrupted": self.interrupted,
        }

    #: Wall time spent in the control loop proper (set by the loop).
    loop_wall_time: float = 0.0

    def close(self, mode: str) -> dict:
        """End the run and return its summary.

        The plant is closed first (damping on hardware), whatever fails: only the reading of
        its final state and damping reason comes before, for the summary. Then the summary,
        the audit, the command source, the planner and the observers (the recorder, last,
        writes the run directory), each step on its own: a step that fails is logged and the
        next ones run, with a summary of what the config alone tells if the summary itself
        failed; the first failure is raised once all steps have run. A KeyboardInterrupt in a
        step marks the run interrupted instead."""
        failures: list[BaseException] = []

        def step(what: str, fn):
            try:
                return fn()
            except KeyboardInterrupt:
                self.interrupted = True
                log.warning("interrupted while %s", what)
            except BaseException as e:
                log.error("closing the run: %s failed: %s", what, e, exc_info=True)
                failures.append(e)
            return None

        final = step("reading the plant's final state", self.final_reading)
        step("closing the plant", self.plant.close)
        summary = step("summarizing the run", lambda: self.summary(mode, final))
        if summary is None:
            summary = {**self._identity(mode), "summary_error": "the summary could not be "
                       "computed (error.log, events.log)"}
        summary["interrupted"] = self.interrupted
        if self.audit is not None:
            summary["derivative_audit"] = step("closing the derivative audit", self.audit.close)
        if self.command_source is not None:
            step("closing the command source", self.command_source.close)
        step("closing the planner", self.planner.close)
        for observer in reversed(self.observers):
            step(f"closing the observer {type(observer).__name__}",
                 lambda observer=observer: observer.close(summary))
        if failures:
            raise failures[0]
        return summary


@dataclass(frozen=True)
class FinalReading:
    """The plant at the end of the run, read before it was closed."""

    state: PlantState
    damping_reason: str | None
    trip_reason: str | None


def path_sensors(task: Task) -> list[slice]:
    """Where the base position and each foot's position are in the planning model's
    sensordata (base first), for recording planned paths; empty when the task lacks one."""
    names = ["base_pos", *(f"{f}_pos" for f in task.robot.feet)]
    try:
        return [task.sensor(n) for n in names]
    except KeyError:
        return []


def _copy(goal: np.ndarray | None) -> np.ndarray | None:
    """A copy of the task's goal (a viewer may move it while observers hold the report)."""
    return None if goal is None else np.array(goal, dtype=float)
