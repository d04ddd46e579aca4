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
from typing import TYPE_CHECKING

import lcm
import numpy as np

from hardware.lcm.lcm_types import planner_telemetry_t

if TYPE_CHECKING:
    from mpc.planner_base import IterationStats
    from mpc.runtime.session import Session


class TelemetryPublisher:
    def __init__(self, lcm_url: str, channel: str):
        try:
            self.lcm = lcm.LCM(lcm_url)
        except Exception as e:  # the binding raises a bare RuntimeError
            raise ValueError(f"telemetry.lcm_url {lcm_url!r}: {e}") from None
        self.channel = channel
        self.published = 0
        # (wall time, iterations, feedback steps) over the last second, for achieved rates.
        self._window: deque[tuple[float, int, int]] = deque()

    def message(self, session: Session, stats: IterationStats) -> planner_telemetry_t:
        now = time.perf_counter()
        c = session.counters
        self._window.append((now, stats.iteration, c.feedback_steps))
        while now - self._window[0][0] > 1.0 and len(self._window) > 2:
            self._window.popleft()
        t0, it0, fb0 = self._window[0]
        span = now - t0
        msg = planner_telemetry_t()
        msg.utime = time.time_ns() // 1000
        msg.time, msg.iteration, msg.status = stats.time, stats.iteration, stats.status
        msg.cost, msg.cost_nominal = stats.cost, stats.cost_nominal
        msg.stage_cost = stats.stage_cost
        names = [t.name for t in session.task.terms]
        costs = list(stats.term_costs)
        if len(costs) != len(names):  # a discarded iteration carries no per-term costs
            costs = [float("nan")] * len(names)
        msg.num_terms, msg.term_names, msg.term_costs = len(names), names, costs
        msg.alpha, msg.mu = stats.alpha, stats.mu
        msg.iteration_ms = stats.timings.get("total", float("nan"))
        msg.derivative_ms = stats.timings.get("derivatives", float("nan"))
        msg.planning_rate_hz = (stats.iteration - it0) / span if span > 0 else 0.0
        msg.feedback_rate_hz = (c.feedback_steps - fb0) / span if span > 0 else 0.0
        msg.policy_age_ms = session.feedback.last_age * 1e3
        nominal = session.planner.nominal
        feet = list(session.robot.feet)
        msg.num_feet, msg.foot_names = len(feet), feet
        if nominal is None:
            return msg
        task = session.task
        sensors = nominal.sensordata
        msg.horizon = nominal.horizon
        msg.plan_time = nominal.time.tolist()
        msg.base_pos = sensors[:, task.sensor("base_pos")].tolist()
        msg.foot_pos = np.stack([sensors[:, task.sensor(f"{f}_pos")] for f in feet]).tolist()
        return msg

    def publish(self, session: Session, stats: IterationStats) -> None:
        self.lcm.publish(self.channel, self.message(session, stats).encode())
        self.published += 1
