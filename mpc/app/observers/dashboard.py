"""Live terminal dashboard (rich) and the end-of-run summary table."""

from __future__ import annotations

import time as _time

import numpy as np
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table

from mpc.app.config import Config
from mpc.app.observers.observer_base import Observer, Status
from mpc.planner.planner_base import PHASES
from mpc.tasks.task_base import body_velocity


class Dashboard(Observer):
    """Shows sim time, real-time factor, rates, the iteration breakdown, cost, speed, goal
    distance and foot contacts, refreshed a few times per second."""

    def __init__(self, cfg: Config, feet: list[str], console: Console):
        self.title = (f"legged-mpc  {cfg.robot} · {cfg.task['name']} · "
                      f"{cfg.derivatives['backend']} · {cfg.runtime.mode}")
        self.feet = feet
        self.console = console
        self._prev: tuple[float, float, int, int] | None = None
        self._rates = (0.0, 0.0, 0.0)
        self._next = 0.0
        self.live = Live(Table(title=self.title), console=console, refresh_per_second=4,
                         transient=False)
        self.live.start()

    def tick(self, status: Status) -> bool:
        now = _time.perf_counter()
        if now < self._next:
            return True
        self._next = now + 0.25
        self.live.update(self._render(status))
        return True

    def close(self, summary: dict) -> None:
        self.live.stop()

    def _measure(self, c: Status, sim_time: float) -> tuple[float, float, float]:
        now = _time.perf_counter()
        if self._prev is not None:
            wall0, sim0, it0, fb0 = self._prev
            dw = now - wall0
            if dw > 0.2:
                self._rates = ((sim_time - sim0) / dw, (c.iterations - it0) / dw,
                               (c.feedback_steps - fb0) / dw)
                self._prev = (now, sim_time, c.iterations, c.feedback_steps)
        else:
            self._prev = (now, sim_time, c.iterations, c.feedback_steps)
        return self._rates

    def _render(self, status: Status) -> Table:
        state = status.state
        rtf, plan_hz, fb_hz = self._measure(status, state.time)
        last = status.last
        t = Table(title=self.title, show_header=False, expand=False)
        t.add_column(style="bold cyan")
        t.add_column()
        t.add_row("sim time", f"{state.time:7.2f} s   real-time factor {rtf:4.2f}")
        t.add_row("rates", f"planning {plan_hz:5.1f} Hz   feedback {fb_hz:6.1f} Hz   "
                           f"policy age {status.policy_age * 1e3:5.1f} ms")
        if last is not None and last.timings:
            parts = "  ".join(f"{k[:8]} {last.timings.get(k, float('nan')):5.1f}"
                              for k in PHASES)
            t.add_row("iteration ms", parts)
            t.add_row("cost", f"plan {last.cost:8.4f}   state {last.stage_cost:8.4f}   "
                              f"mu {last.mu:.1e}   alpha {last.alpha:.3f}   {last.status}")
        speed = float(np.linalg.norm(state.qvel[:2]))
        t.add_row("base", f"speed {speed:4.2f} m/s   height {state.qpos[2]:.3f} m   "
                          f"goal {status.goal_distance:5.2f} m away")
        if status.command is not None:
            achieved = body_velocity(state.qpos, state.qvel)
            t.add_row("velocity", "   ".join(
                f"{name} {c:+5.2f} → {a:+5.2f}" for name, c, a in
                zip(("vx", "vy", "yaw"), status.command, achieved, strict=True))
                + "   (commanded → achieved, m/s, rad/s)")
        if status.contacts is not None:
            t.add_row("contacts", "  ".join(
                f"[{'green' if f else 'dim'}]{n.split('_')[0]}[/]"
                for n, f in zip(self.feet, status.contacts, strict=False)))
        if status.audit is not None:
            checks, last_err, worst, bad = status.audit
            t.add_row("derivative audit", f"{checks} checks   last {last_err:.1e}   worst "
                      f"{worst:.1e}   " + (f"[red]{bad} disagreements[/]" if bad else
                                           "no disagreement"))
        if status.stopped:
            t.add_row("[red]stopped", f"[red]{status.stopped}")
        return t


def summary_table(summary: dict) -> Group:
    t = Table(title="run summary", show_header=False)
    t.add_column(style="bold")
    t.add_column()
    rows = [
        ("robot · task", f"{summary['robot']} · {summary['task']}"),
        ("backend · mode", f"{summary['backend']} · {summary['mode']}"),
        ("sim / wall time", f"{summary['sim_time_s']:.2f} s / {summary['wall_time_s']:.2f} s"),
        ("fell", f"{summary['fell']}" + (f" ({summary['fell_reason']})"
                                         if summary["fell"] else "")),
        ("goal distance", f"{summary['goal_distance_start_m']:.3f} m -> "
                          f"{summary['goal_distance_end_m']:.3f} m"),
        ("planning rate", f"{summary['planning_rate_hz']} Hz "
                          f"({summary['planner_iterations']} iterations, "
                          f"{summary['failed_iterations']} discarded)"),
        ("iteration", f"median {_ms(summary['iteration_ms_median'])}, "
                      f"p95 {_ms(summary['iteration_ms_p95'])}"),
        ("phases (median)", "  ".join(f"{k} {_ms(v)}" for k, v in
                                       summary["phase_ms_median"].items())),
        ("feedback rate", f"{summary['feedback_rate_hz']} Hz"),
        ("mean cost", f"{summary['mean_cost']:.4f}" if summary["mean_cost"] is not None
         else "n/a"),
        ("fd evaluations", f"{summary['fd_evaluations']}"),
    ]
    if summary.get("damping_reason"):
        rows.append(("damping", summary["damping_reason"]))
    for k, v in rows:
        t.add_row(k, v)
    return Group(t)


def _ms(value: float | None) -> str:
    """Milliseconds, or n/a for what the run did not measure (None in the summary)."""
    return "n/a" if value is None else f"{value:.1f} ms"
