"""One run: the planner, the plant, the feedback law, the monitors and the observers.

The loops in :mod:`mpc.app.runtime.lockstep` and :mod:`mpc.app.runtime.realtime` only decide *when*
to plan, to act, to step and to tick; everything they call lives here. What the run does is
reported to :class:`~mpc.app.observers.observer_base.Observer` s (the recorder always; telemetry, a
dashboard or a viewer when asked for), which never read the session's internals.
"""

from __future__ import annotations

import inspect
import logging
import threading
import time as _time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import derivatives
from common.registry import Registry
from derivatives.counter import fallbacks_since
from mpc.app import assembly
from mpc.app.commands import COMMAND_SOURCES, CommandFilter, CommandSource
from mpc.app.config import AuditSettings, Config
from mpc.app.maps import MAP_SOURCES
from mpc.app.observers.observer_base import Observer, PlanReport, StateReport, Status
from mpc.app.plants.plant_base import Plant, PlantState
from mpc.app.record.recorder import RunRecorder
from mpc.app.runtime.audit import DerivativeAudit
from mpc.app.runtime.feedback import FeedbackController
from mpc.app.runtime.map_updates import MapUpdates
from mpc.app.runtime.predict import StatePredictor
from mpc.app.runtime.signals import held_signals
from mpc.app.runtime.tally import Tally
from mpc.planner.planner_base import IterationStats
from mpc.planner.policy import Policy
from mpc.tasks.task_base import Task, base_yaw

log = logging.getLogger(__name__)

#: Observers a config can switch on by name (``telemetry.lcm_url``: ``lcm_telemetry``;
#: ``ros2.enabled``: ``ros2``; ``output.mcap``: ``mcap_log``): plug-ins above mpc, entry points
#: of group ``legged_mpc.observers``.
OBSERVERS: Registry[Observer] = Registry("observer", {}, group="observers")


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
    #: Each term's cost at the measured state of the latest plan that computed them.
    term_costs: np.ndarray | None = None
    policy_age: Tally = field(default_factory=Tally)
    max_joint_speed: float = 0.0
    last: IterationStats | None = None


class Session:
    """Builds everything from a config and exposes plan/act/observe/tick to the loops."""

    def __init__(self, cfg: Config, run_dir: Path, plant: Plant | None = None):
        """``plant`` replaces the one the config describes (tests that hold a plant).

        The run directory (config.yaml, events.log) is written before the planner and the
        plant are built, so a start-up that fails or is interrupted (Ctrl-C while the kernels
        compile, the robot connects or ramps) leaves its record too: an interrupted one also
        gets summary.json (``"started": false``, the stage, the damping reason)."""
        self.cfg = cfg
        self.run_dir = Path(run_dir)
        self.task = assembly.build_task(cfg)
        self.recorder = RunRecorder(self.run_dir, cfg.to_dict(),
                                    [t.name for t in self.task.terms])
        self.planner = self.plant = None
        #: Maps received while running (``map_input.source``), else None.
        self.map_updates: MapUpdates | None = None
        #: What the start-up is doing (named in the record of an interrupted start).
        self.stage = "compiling the planner (or loading its compiled kernels)"
        try:
            self.planner = assembly.build_planner(cfg, self.task)
            # the task's sensors exist once its planning model is built
            self.recorder.path_sensors = path_sensors(self.task)
            robot = plant is None and assembly.plant_class(cfg).realtime_only
            if plant is None:  # held before it is prepared: an interrupted ramp closes it
                self.stage = "connecting to the robot" if robot else "building the plant"
                self.plant = assembly.make_plant(cfg, self.run_dir)
                self.stage = "ramping the robot to its home pose" if robot else "preparing"
                self.plant.prepare()
            else:
                self.plant = plant
            self.stage = "starting the run"
            self._start()
        except BaseException as e:  # a robot link must not outlive a run that never started
            self._abandon(e)
            raise

    def _abandon(self, error: BaseException) -> None:
        """A start-up that failed: the plant (damping on hardware) and the planner closed, the
        record finished; interrupted, with a summary naming the signal and the stage. Further
        signals meanwhile are only noted (see :mod:`mpc.app.runtime.signals`)."""
        with held_signals():
            self._close_unstarted(error)

    def _close_unstarted(self, error: BaseException) -> None:
        """The plant first (damping), then the planner, then the record, each whatever the
        others did; a failure of the plant's or the planner's close is logged (the error that
        ended the start is the one raised)."""
        for what, part in (("plant", self.plant), ("planner", self.planner),
                           ("map source", self.map_updates)):
            if part is not None:
                try:
                    part.close()
                except Exception as e:
                    log.error("closing the %s of a run that did not start failed: %s", what, e,
                              exc_info=True)
        if isinstance(error, KeyboardInterrupt):
            by = f" by {error.args[0]}" if error.args else ""
            log.warning("interrupted%s before the run started, while %s", by, self.stage)
            damping = None if self.plant is None else self.plant.damping_reason
            self.recorder.close({
                "robot": self.cfg.robot, "task": self.cfg.task["name"],
                "config": self.cfg.source, "backend": self.cfg.derivatives["backend"],
                "mode": self.cfg.runtime.mode, "seed": self.cfg.runtime.seed,
                "run_dir": str(self.run_dir), "started": False, "interrupted": True,
                "interrupted_by": error.args[0] if error.args else "SIGINT",
                "stage": self.stage, "damping_reason": damping, "trip_reason": None})
        else:  # its writer and log handler stopped, what it wrote kept (error.log joins it)
            self.recorder.abandon()

    def _start(self) -> None:
        """Everything after the plant is up: feedback, observers, the first state."""
        cfg = self.cfg
        self.robot = self.task.robot
        rt = cfg.runtime
        lead = command_lead(cfg)
        self.feedback = FeedbackController(self.plant, self.planner.layout.nu,
                                           rt.policy_timeout, rt.feedback_gain, lead=lead,
                                           model=self.planner.model)
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
                "jacobian": p.jacobian,
                "overlay": None if cfg.robot_overlay is None else
                cfg.robot_overlay.to_mapping(),
                "model": self.planner.model.names.split(b"\0", 1)[0].decode()},
                cfg.runtime.seed)
        self.observers: list[Observer] = [self.recorder]
        if cfg.robot_overlay is not None:  # the run directory keeps the model it ran with
            (self.run_dir / "overlay.yaml").write_text(cfg.robot_overlay.dump(
                f"model overlay of this run, from {cfg.overlay}"))
        if cfg.telemetry.lcm_url:
            self.attach(OBSERVERS.get("lcm_telemetry")(
                cfg.telemetry.lcm_url, cfg.telemetry.channel, self.task))
        state = self.plant.read_state()
        self.time_start = state.time
        #: The run's clock as time since the epoch (ROS 2 stamps, run.mcap): the wall clock at
        #: the start plus plant time since (``time_ns``).
        self.epoch_ns = _time.time_ns()
        self._attach_plugins()
        #: Velocity mode: where commands come from and the filter they pass (else None).
        self.command_source: CommandSource | None = None
        self.command_filter: CommandFilter | None = None
        if cfg.command.source:
            source_cls, options = self._source(COMMAND_SOURCES, cfg.command.source)
            self.command_source = source_cls.build(options, self.plant)
            self.command_filter = CommandFilter(cfg.command.max_speed, cfg.command.max_accel,
                                                cfg.command.timeout)
            self.update_command(state.time)
        self._start_map_input()
        waypoints = self.task.waypoints
        self.goal_final = np.array(waypoints[-1] if len(waypoints) else [np.nan, np.nan])
        self.goal_distance_start = self.goal_distance(state.qpos)
        self.planner.reset(state.time, state.qpos, state.qvel, state.act)
        self._in_force = self.planner.policy
        self._next_record = state.time
        self._record_period = 1.0 / cfg.output.record_rate
        self._warmup_done = False

    def _source(self, registry, section: dict) -> tuple[type, dict]:
        """The class of an input source section (``command.source``, ``map_input.source``)
        and the options it is built with: a ROS 2 source joins the run's ROS 2 domain."""
        options = dict(section)
        source_cls = registry.get(options.pop("type"))
        if "ros2" in inspect.signature(source_cls.__init__).parameters:
            options["ros2"] = self.cfg.ros2
        return source_cls, options

    def _start_map_input(self) -> None:
        """The map source (``map_input.source``), the first map awaited if ``map_input.wait``
        asks for one (ValueError, one line, if none arrives); each plan applies the newest."""
        section = self.cfg.map_input
        if not section.source:
            return
        source_cls, options = self._source(MAP_SOURCES, section.source)
        self.map_updates = MapUpdates(source_cls.build(options, self.plant), self.task,
                                      self.planner)
        if section.wait > 0 and not self.map_updates.source.wait(section.wait):
            raise ValueError(f"map_input: no valid map within map_input.wait = {section.wait:g} "
                             f"s on {self.map_updates.source.describe()}")

    def attach(self, observer: Observer) -> None:
        """Report the rest of the run to ``observer`` too."""
        self.observers.append(observer)

    def time_ns(self, time: float) -> int:
        """Plant time ``time`` on the run's clock (ns since the epoch, see ``epoch_ns``)."""
        return self.epoch_ns + round((time - self.time_start) * 1e9)

    def _attach_plugins(self) -> None:
        """The ROS 2 interface (``ros2.enabled``, or a ``ros2`` command source) and the
        run.mcap log (``output.mcap``, when its extra is installed: else an event says so)."""
        cfg = self.cfg
        if cfg.ros2.enabled or cfg.command.source.get("type") == "ros2":
            try:
                interface = OBSERVERS.get("ros2")
            except ImportError as e:
                package = (e.name or "?").split(".")[0]
                raise ValueError(f"ros2: needs the Python package {package!r}: "
                                 f"pip install 'legged-mpc[ros2]'") from None
            self.attach(interface(cfg.ros2, self.task, self.planner.model, self.time_ns))
        if cfg.output.mcap:
            try:
                log_cls = OBSERVERS.get("mcap_log")
            except ImportError as e:
                log.warning("run.mcap is not written: the Python package %r is missing "
                            "(pip install 'legged-mpc[ros2]'; output.mcap: false silences "
                            "this)", (e.name or "?").split(".")[0])
            else:
                # first in the list, so it closes last (observers close in reverse order):
                # it converts the run directory the recorder has written
                self.observers.insert(0, log_cls(self.run_dir, self.epoch_ns, self.time_start))

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
        # between plans: nothing steps the planning model; the audit checks on what it plans on
        if (self.map_updates is not None and self.map_updates.apply(state.qpos)
                and self.audit is not None):
            self.audit.terrain_changed(self.planner.model)
        stats = self.planner.iterate(state.time, state.qpos, state.qvel, state.act)
        if self.audit is not None and stats.status == "ok":
            self.audit.follow(self.planner.model)
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
            if len(stats.term_costs):
                c.term_costs = stats.term_costs
            report = PlanReport(stats, self.planner.nominal, _time.perf_counter() -
                                self.wall_start, c.iterations, c.feedback_steps,
                                self.feedback.last_age, _copy(self.task.goal))
        for observer in self.observers:
            observer.on_plan(report)
        return stats

    def warm_up(self) -> None:
        """Realtime, the last thing before the loops start (the plant holding its pose): one
        planner iteration from the state now, and one evaluation of the feedback law, unsent.
        The loops' first feedback step otherwise followed a policy planned before the garbage
        collection that precedes them, and evaluated the law for the first time in the process
        (numba loads its kernel from the cache then): on loopback with the Go1 and Go2 on an
        idle machine 4 of 20 runs were put in damping at the start, the policy expired (0.49 s
        old against ``runtime.policy_timeout`` 0.35) or the first command computed from a state
        older than ``safety.max_command_age`` (21-35 ms against 20)."""
        self.plan(self.plant.read_state())
        state = self.plant.read_state()
        self.feedback.evaluate(self.policy_in_force(state), state)

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
        a signal handler: it only sets a flag), and mark it interrupted; the first reason is
        kept."""
        self.interrupted = True
        if self.stop_requested is None:
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
        observer asked (the viewer was closed), a stop was requested (a signal, to this
        process or to the robot's link process) or a robot's safety layer tripped."""
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
        tripped = self.trip_reason() is not None  # first: it may bring a stop request
        return all(keep) and self.stop_requested is None and not tripped

    def trip_reason(self) -> str | None:
        """Why a robot's safety layer put it in damping before the run ended, if it did. A
        link that reports a signal of its own (a terminal's Ctrl-C reached the robot's link
        process too, which damped and told) requests the stop here, right after the read that
        brings the report: checked anywhere else, a report arriving in between would end the
        run as a trip instead of interrupted."""
        reason = self.plant.damping_reason
        if self.plant.interrupted_by is not None and self.stop_requested is None:
            self.request_stop(self.plant.interrupted_by)
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
            # the run's clock at the start (ROS 2 stamps, run.mcap: this + plant time since)
            "start_time_unix_ns": self.epoch_ns,
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
            "final_base_yaw": round(base_yaw(state.qpos), 4),  # rad
            "final_term_costs": None if c.term_costs is None else
            {t.name: float(v) for t, v in zip(self.task.terms, c.term_costs, strict=True)},
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
            # feedback commands whose servo targets were brought within reach (servo_reach.py)
            "targets_kept_in_reach": self.feedback.reach.kept,
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
            "started": True,
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
            summary["command_source"] = step("counting the command source's input",
                                             self.command_source.stats)
        if self.map_updates is not None:
            step("closing the map source", self.map_updates.close)
            summary["map_input"] = step("counting the map source's input",
                                        self.map_updates.stats)
        # read after closing: a robot link in a process of its own reports as it ends
        summary["plant"] = step("counting the plant's link", self.plant.stats) or {}
        # commands a hardware link refused for their age (None: a plant that does not judge it)
        summary["stale_commands"] = summary["plant"].get("stale_commands")
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


def command_lead(cfg: Config) -> float:
    """How far (s) the state read is from the moment a command computed from it reaches the
    motors, as far as the planner knows: the state's age (``runtime.sensor_latency``) plus the
    transport delay of the planning model's overlay (``robot.overlay``), whose delay is what
    ``mpc-sysid`` measures for the whole loop less that latency; 0 without an overlay (the
    nominal model knows no delay) or with ``runtime.compensate_delay`` off."""
    overlay = cfg.robot_overlay
    if overlay is None or not cfg.runtime.compensate_delay:
        return 0.0
    return float(overlay.delay) + cfg.runtime.sensor_latency


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
