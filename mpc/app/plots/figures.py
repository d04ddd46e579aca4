"""The figures of one or several runs: one function per figure, each run in a color of its own.

Every axes carries a label (``ax.get_label()``) naming its panel, so tests and scripts find it
without relying on layout. Each run's main line in a panel is labelled with the run's label.
Time axes are seconds since the run's first state, and the run's safety events (damping, a
fall, discarded planner iterations) are drawn on every one of them as vertical lines with gid
``event:<kind>``. Figures are created without pyplot (no global state, nothing to close) and
drawn with the Agg canvas.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from mpc.app.record.reader import Run

#: Event kinds drawn on the time axes, with their line style.
EVENT_STYLE = {"damping": {"color": "red", "ls": "-"}, "fall": {"color": "black", "ls": "-"},
               "discarded": {"color": "orange", "ls": ":"}}
#: Windows of the rate estimates: planner iterations, state samples.
PLAN_RATE_WINDOW, FEEDBACK_RATE_WINDOW = 5, 10
DPI = 80


def color(i: int) -> str:
    """Color of the i-th run."""
    return f"C{i}"


def finite(values: np.ndarray) -> np.ndarray:
    """``values`` as floats with non-finite entries (failed iterations) as NaN (not drawn)."""
    v = np.asarray(values, dtype=float)
    return np.where(np.isfinite(v), v, np.nan)


def mark_events(ax: Axes, run: Run) -> None:
    """Vertical lines at the run's timed safety events."""
    for e in run.events:
        style = EVENT_STYLE.get(e.kind)
        if style is not None and np.isfinite(e.time):
            ax.axvline(e.time - run.t0, lw=1.2, alpha=0.8, gid=f"event:{e.kind}", **style)


def _time_axes(ax: Axes, runs: list[Run], label: str, ylabel: str) -> None:
    ax.set_label(label)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    for run in runs:
        mark_events(ax, run)


def roll_pitch_yaw(qpos: np.ndarray) -> np.ndarray:
    """Roll, pitch, yaw (rad, Z-Y-X) of the floating base from qpos (..., nq), w-x-y-z."""
    w, x, y, z = (qpos[..., 3 + i] for i in range(4))
    roll = np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = np.arcsin(np.clip(2 * (w * y - z * x), -1.0, 1.0))
    yaw = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return np.stack([roll, pitch, yaw], axis=-1)


def planned_speed(run: Run) -> np.ndarray:
    """Horizontal speed (m/s) at the start of each recorded plan: the planned base path's
    first segment (paths keep every other knot of the planning timestep)."""
    path = run.series["plan_base_path"].astype(float)
    dt = 2 * float(run.config["planner"]["timestep"])
    return np.linalg.norm(path[:, 1, :2] - path[:, 0, :2], axis=-1) / dt


def _legend(ax: Axes) -> None:
    if any(not h.get_label().startswith("_") for h in ax.get_lines() + ax.collections):
        ax.legend(fontsize=7, loc="best")


# --- figures -----------------------------------------------------------------------------
def path_figure(runs: list[Run]) -> Figure:
    """Base path over the ground (x, y), start and end, and the goals the task pursued."""
    fig = Figure(figsize=(6.5, 6), layout="constrained")
    ax = fig.subplots()
    ax.set_label("path")
    for i, run in enumerate(runs):
        q = run.series["state_qpos"]
        ax.plot(q[:, 0], q[:, 1], color=color(i), label=run.label)
        ax.plot(q[0, 0], q[0, 1], "o", color=color(i), label="_start")
        ax.plot(q[-1, 0], q[-1, 1], "x", color=color(i), ms=9, label="_end")
        goals = (np.unique(run.series["plan_goal"], axis=0) if run.has("plan_goal")
                 else np.array([run.summary.get("goal", [np.nan, np.nan])], dtype=float))
        ax.plot(goals[:, 0], goals[:, 1], "*", color=color(i), ms=14, mec="k", label="_goal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_aspect("equal", adjustable="datalim")
    ax.grid(alpha=0.3)
    ax.set_title("base path (o start, x end, * goal)")
    _legend(ax)
    return fig


def base_figure(runs: list[Run]) -> Figure:
    """Base height, orientation, horizontal speed against the planned speed, yaw rate."""
    fig = Figure(figsize=(10, 9), layout="constrained")
    axes = fig.subplots(4, 1, sharex=True)
    for ax, label, ylabel in zip(axes, ("height", "orientation", "velocity", "yaw_rate"),
                                 ("base height (m)", "roll - pitch -- yaw : (deg)",
                                  "horizontal speed (m/s)", "yaw rate (rad/s)"), strict=True):
        _time_axes(ax, runs, label, ylabel)
    for i, run in enumerate(runs):
        t, q, v = run.time(), run.series["state_qpos"], run.series["state_qvel"]
        c = color(i)
        axes[0].plot(t, q[:, 2], color=c, label=run.label)
        rpy = np.degrees(roll_pitch_yaw(q))
        for k, (name, ls) in enumerate((("roll", "-"), ("pitch", "--"), ("yaw", ":"))):
            axes[1].plot(t, rpy[:, k], ls, color=c, label=f"{run.label} {name}")
        axes[2].plot(t, np.linalg.norm(v[:, :2], axis=1), color=c, label=run.label)
        if run.has("plan_base_path"):
            axes[2].plot(run.time("plan"), planned_speed(run), "--", color=c, alpha=0.7,
                         label=f"{run.label} planned")
        axes[3].plot(t, v[:, 5], color=c, label=run.label)
    axes[0].axhline(runs[0].robot.fall_height, color="gray", ls="--", label="_fall height")
    axes[-1].set_xlabel("time (s)")
    axes[2].set_title("measured (solid) and planned (dashed, the nominal's first segment)",
                      fontsize=9)
    for ax in axes:
        _legend(ax)
    return fig


def gait_figure(runs: list[Run]) -> Figure:
    """Feet in contact over time: achieved (thick) and planned by the gait schedule (thin)."""
    fig = Figure(figsize=(10, 1.0 + 1.6 * len(runs)), layout="constrained")
    axes = np.atleast_1d(fig.subplots(len(runs), 1, sharex=True, squeeze=False)[:, 0])
    for i, (ax, run) in enumerate(zip(axes, runs, strict=True)):
        _time_axes(ax, [run], f"gait:{i}", "")
        t, feet = run.time(), run.robot.feet
        contacts = run.series["state_contacts"]
        for j, foot in enumerate(feet):
            ax.plot(t, np.where(contacts[:, j], j, np.nan), color=color(i), lw=7,
                    solid_capstyle="butt", label=f"{foot} achieved")
            if run.has("state_planned_contacts"):
                planned = run.series["state_planned_contacts"][:, j]
                ax.plot(t, np.where(planned, j + 0.3, np.nan), color="k", lw=2,
                        solid_capstyle="butt", label=f"{foot} planned")
        ax.set_yticks(range(len(feet)), feet)
        ax.set_ylim(-0.6, len(feet) - 0.2)
        notes = [] if run.has("state_planned_contacts") else ["no planned contacts recorded"]
        if not contacts.any():
            notes.append("no contact recorded (the plant does not sense contacts)")
        ax.set_title(f"{run.label}: feet on the ground, achieved (thick) and planned (thin)"
                     + (f" - {'; '.join(notes)}" if notes else ""), fontsize=9)
    axes[-1].set_xlabel("time (s)")
    return fig


def cost_figure(runs: list[Run]) -> Figure:
    """Planner cost per iteration and each cost term at the measured state."""
    fig = Figure(figsize=(10, 7), layout="constrained")
    axes = fig.subplots(2, 1, sharex=True)
    _time_axes(axes[0], runs, "cost", "total cost of the plan")
    _time_axes(axes[1], runs, "terms", "cost term at the measured state")
    styles = ("-", "--", ":", "-.")
    for i, run in enumerate(runs):
        t = run.time("plan")
        axes[0].plot(t, finite(run.series["plan_cost"]), color=color(i), label=run.label)
        terms = run.series["plan_term_costs"]
        for k, name in enumerate(run.series["term_names"]):
            axes[1].plot(t, finite(terms[:, k]), styles[i % len(styles)], color=f"C{k}",
                         label=f"{run.label} {name}" if len(runs) > 1 else str(name))
    for ax in axes:
        ax.set_yscale("log")
        _legend(ax)
    axes[1].set_xlabel("time (s)")
    return fig


def rates(run: Run) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Planning rate per iteration and feedback rate per state sample (Hz, moving windows),
    counted on the clock the run's summary uses: wall time in realtime, simulated time in
    lockstep. Returns (plan times, planning rate, state times, feedback rate); the feedback
    part is empty for runs that did not record their feedback steps."""
    realtime = run.mode == "realtime"
    clock = run.series["plan_wall_time"] if realtime else run.series["plan_time"]
    k = PLAN_RATE_WINDOW
    plan_rate = np.full(len(clock), np.nan)
    if len(clock) > k:
        plan_rate[k:] = k / np.maximum(clock[k:] - clock[:-k], 1e-9)
    if not (run.has("state_feedback_steps") and run.has("state_wall_time")):
        return run.time("plan"), plan_rate, np.array([]), np.array([])
    steps = run.series["state_feedback_steps"].astype(float)
    sclock = run.series["state_wall_time"] if realtime else run.series["state_time"]
    k = FEEDBACK_RATE_WINDOW
    fb_rate = np.full(len(steps), np.nan)
    if len(steps) > k:
        fb_rate[k:] = (steps[k:] - steps[:-k]) / np.maximum(sclock[k:] - sclock[:-k], 1e-9)
    return run.time("plan"), plan_rate, run.time(), fb_rate


def timing_figure(runs: list[Run]) -> Figure:
    """Milliseconds per planner phase per iteration (stacked; the total as a line), one axes
    per run, and the planning and feedback rates against their targets."""
    fig = Figure(figsize=(10, 3.0 * (len(runs) + 1)), layout="constrained")
    axes = fig.subplots(len(runs) + 1, 1, sharex=True)
    for i, run in enumerate(runs):
        ax = axes[i]
        _time_axes(ax, [run], f"phases:{i}", "ms per iteration")
        names = [str(n) for n in run.series["phase_names"]]
        timings = finite(run.series["plan_timings"])
        t = run.time("plan")
        parts = [n for n in names if n != "total"]
        ax.stackplot(t, np.nan_to_num(timings[:, [names.index(n) for n in parts]]).T,
                     labels=parts, alpha=0.85)
        ax.plot(t, timings[:, names.index("total")], color="k", lw=0.8, label="total")
        ax.set_title(f"{run.label}: planner phases (stacked)", fontsize=9)
        ax.legend(fontsize=7, loc="upper right", ncol=3)
    ax = axes[-1]
    _time_axes(ax, runs, "rates", "rate (Hz)")
    for i, run in enumerate(runs):
        tp, plan_rate, ts, fb_rate = rates(run)
        ax.plot(tp, plan_rate, color=color(i), label=f"{run.label} planning")
        if len(ts):
            ax.plot(ts, fb_rate, "--", color=color(i), label=f"{run.label} feedback")
        rt = run.config.get("runtime", {})
        for key in ("planning_rate", "feedback_rate"):
            if key in rt:
                ax.axhline(rt[key], color="gray", ls=":", lw=1, label="_target")
    clocks = sorted({"wall" if r.mode == "realtime" else "simulated" for r in runs})
    ax.set_title(f"planning (solid) and feedback (dashed) rates per {' / '.join(clocks)} "
                 "second; dotted: targets", fontsize=9)
    ax.set_yscale("log")
    ax.set_xlabel("time (s)")
    _legend(ax)
    return fig


def joints_figure(runs: list[Run]) -> Figure:
    """Per actuated joint: angle, speed and torque, against the robot's limits (dashed).
    Runs of another robot than the first are left out (their joints differ)."""
    info = runs[0].joints()
    same = [(i, r) for i, r in enumerate(runs) if r.robot.name == runs[0].robot.name]
    n = len(info.names)
    fig = Figure(figsize=(12, 1.5 * n + 0.6), layout="constrained")
    axes = fig.subplots(n, 3, sharex=True, squeeze=False)
    for j, name in enumerate(info.names):
        _time_axes(axes[j, 0], [r for _, r in same], f"angle:{name}", name)
        _time_axes(axes[j, 1], [r for _, r in same], f"speed:{name}", "")
        _time_axes(axes[j, 2], [r for _, r in same], f"torque:{name}", "")
        for lim in info.angle_limits[j]:
            axes[j, 0].axhline(lim, color="gray", ls="--", lw=1, label="_limit")
        for lim in (-info.torque_limits[j], info.torque_limits[j]):
            axes[j, 2].axhline(lim, color="gray", ls="--", lw=1, label="_limit")
        for i, run in same:
            t = run.time()
            axes[j, 0].plot(t, run.series["state_qpos"][:, info.qpos[j]], color=color(i),
                            lw=1, label=run.label)
            axes[j, 1].plot(t, run.series["state_qvel"][:, info.qvel[j]], color=color(i),
                            lw=1, label=run.label)
            if run.has("state_actuator_force"):
                axes[j, 2].plot(t, run.series["state_actuator_force"][:, j], color=color(i),
                                lw=1, label=run.label)
    missing = [r.label for _, r in same if not r.has("state_actuator_force")]
    axes[0, 0].set_title("angle (rad), limits dashed", fontsize=9)
    axes[0, 1].set_title("speed (rad/s)", fontsize=9)
    axes[0, 2].set_title("torque (N m), limits dashed"
                         + (f"; not recorded: {', '.join(missing)}" if missing else ""),
                         fontsize=9)
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    left_out = [r.label for r in runs if r.robot.name != runs[0].robot.name]
    if left_out:
        fig.suptitle(f"{runs[0].robot.name} joints; other robots left out: "
                     f"{', '.join(left_out)}", fontsize=9)
    return fig


#: The figures of a report, in order: file stem -> (builder, caption).
FIGURES: dict[str, tuple[Callable[[list[Run]], Figure], str]] = {
    "path": (path_figure, "Base path over the ground and the goal"),
    "base": (base_figure, "Base height, orientation and velocity"),
    "gait": (gait_figure, "Gait diagram"),
    "cost": (cost_figure, "Cost and cost terms"),
    "timing": (timing_figure, "Planner phases and rates"),
    "joints": (joints_figure, "Joint angles, speeds and torques"),
}


def build_figures(runs: list[Run]) -> dict[str, Figure]:
    """Every figure of :data:`FIGURES` for ``runs`` (overlaid when there are several)."""
    return {name: build(runs) for name, (build, _) in FIGURES.items()}


def save_png(fig: Figure, path: Path) -> Path:
    """Write ``fig`` as a PNG at the report's resolution."""
    fig.savefig(path, dpi=DPI)
    return path
