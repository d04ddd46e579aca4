"""Planner telemetry over LCM: one ``planner_telemetry_t`` per planner iteration, readable by
any LCM tool (``lcm-logger`` records it; ``lcm-spy`` shows it with the Java types built by
``scripts/lcm_spy.sh``).

Published from the planner thread right after each iteration: the iteration's costs, timings
and status, the achieved planning and feedback rates over the last second of wall time, and the
plan itself (knot times, base and foot positions of the nominal trajectory).
"""

from __future__ import annotations

import time
from collections import deque

import lcm
import numpy as np

from hardware.lcm.lcm_types import planner_telemetry_t
from mpc.app.observers.observer_base import Observer, PlanReport
from mpc.tasks.task_base import Task


class TelemetryPublisher(Observer):
    """An observer of the run that publishes each planner iteration on ``channel``."""

    def __init__(self, lcm_url: str, channel: str, task: Task):
        try:
            self.lcm = lcm.LCM(lcm_url)
        except Exception as e:  # the binding raises a bare RuntimeError
            raise ValueError(f"telemetry.lcm_url {lcm_url!r}: {e}") from None
        self.channel = channel
        self.published = 0
        self.term_names = [t.name for t in task.terms]
        self.feet = list(task.robot.feet)
        self.base_rows = task.sensor("base_pos")
        self.foot_rows = [task.sensor(f"{f}_pos") for f in self.feet]
        # (wall time, iterations, feedback steps) over the last second, for achieved rates.
        self._window: deque[tuple[float, int, int]] = deque()

    def message(self, report: PlanReport) -> planner_telemetry_t:
        now = time.perf_counter()
        stats = report.stats
        self._window.append((now, stats.iteration, report.feedback_steps))
        while now - self._window[0][0] > 1.0 and len(self._window) > 2:
            self._window.popleft()
        t0, it0, fb0 = self._window[0]
        span = now - t0
        msg = planner_telemetry_t()
        msg.utime = time.time_ns() // 1000
        msg.time, msg.iteration, msg.status = stats.time, stats.iteration, stats.status
        msg.cost, msg.cost_nominal = stats.cost, stats.cost_nominal
        msg.stage_cost = stats.stage_cost
        names = self.term_names
        costs = list(stats.term_costs)
        if len(costs) != len(names):  # a discarded iteration carries no per-term costs
            costs = [float("nan")] * len(names)
        msg.num_terms, msg.term_names, msg.term_costs = len(names), names, costs
        msg.alpha, msg.mu = stats.alpha, stats.mu
        msg.iteration_ms = stats.timings.get("total", float("nan"))
        msg.derivative_ms = stats.timings.get("derivatives", float("nan"))
        msg.planning_rate_hz = (stats.iteration - it0) / span if span > 0 else 0.0
        msg.feedback_rate_hz = (report.feedback_steps - fb0) / span if span > 0 else 0.0
        msg.policy_age_ms = report.policy_age * 1e3
        nominal = report.nominal
        msg.num_feet, msg.foot_names = len(self.feet), self.feet
        if nominal is None:
            return msg
        sensors = nominal.sensordata
        msg.horizon = nominal.horizon
        msg.plan_time = nominal.time.tolist()
        msg.base_pos = sensors[:, self.base_rows].tolist()
        msg.foot_pos = np.stack([sensors[:, rows] for rows in self.foot_rows]).tolist()
        return msg

    def on_plan(self, report: PlanReport) -> None:
        self.lcm.publish(self.channel, self.message(report).encode())
        self.published += 1
