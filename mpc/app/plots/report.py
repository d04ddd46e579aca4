"""One self-contained HTML report of one or several runs: the figures as embedded PNGs (no
external file or network reference), each run's summary and its events."""

from __future__ import annotations

import base64
import html
import io
import math

from matplotlib.figure import Figure

from mpc.app.plots.figures import DPI, EVENT_STYLE, FIGURES
from mpc.app.record.reader import Run

#: Summary fields shown per run, in this order.
SUMMARY_KEYS = ("robot", "task", "backend", "mode", "sim_time_s", "wall_time_s", "fell",
                "fell_reason", "damping_reason", "goal_distance_start_m", "goal_distance_end_m",
                "mean_cost", "planner_iterations", "failed_iterations", "planning_rate_hz",
                "iteration_ms_median", "feedback_rate_hz")


def png_base64(fig: Figure) -> str:
    """``fig`` as a base64 PNG."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def summary_table(runs: list[Run]) -> str:
    """Summary fields as an HTML table, one column per run."""
    head = "".join(f"<th>{html.escape(r.label)}</th>" for r in runs)
    rows = "".join(
        f"<tr><th>{k}</th>" + "".join(f"<td>{html.escape(str(r.summary.get(k, '')))}</td>"
                                      for r in runs) + "</tr>"
        for k in SUMMARY_KEYS)
    return f"<table><tr><th></th>{head}</tr>{rows}</table>"


def events_list(run: Run) -> str:
    """The run's warnings and errors, with their simulated time where it was recorded."""
    if not run.events:
        return "<p>No warnings or errors.</p>"
    note = "" if run.events_timed else ("<p>This run directory predates recorded event times: "
                                        "its events are not marked on the time axes.</p>")
    items = "".join(
        f"<li><b>{e.kind}</b> "
        f"{'' if math.isnan(e.time) else f't = {e.time - run.t0:.3f} s '}"
        f"{html.escape(e.level)}: {html.escape(e.message)}</li>" for e in run.events)
    return f"{note}<ul>{items}</ul>"


def render(runs: list[Run], figures: dict[str, Figure]) -> str:
    """The report's HTML."""
    legend = ", ".join(f"{kind}: {s['color']} {'dotted' if s['ls'] == ':' else 'solid'}"
                       for kind, s in EVENT_STYLE.items())
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'>",
             f"<title>{html.escape(', '.join(r.label for r in runs))}</title>",
             "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}"
             "img{max-width:100%}</style></head><body>",
             f"<h1>{html.escape(', '.join(r.label for r in runs))}</h1>",
             "<h2>Summary</h2>", summary_table(runs),
             f"<p>Time axes: seconds since each run's first state. Event lines: {legend}.</p>"]
    for name, fig in figures.items():
        caption = FIGURES[name][1]
        parts += [f"<h2 id='{name}'>{html.escape(caption)}</h2>",
                  f"<img alt='{name}' src='data:image/png;base64,{png_base64(fig)}'>"]
    parts.append("<h2>Events</h2>")
    for run in runs:
        parts += [f"<h3>{html.escape(run.label)}</h3>", events_list(run)]
    parts.append("</body></html>")
    return "\n".join(parts)
