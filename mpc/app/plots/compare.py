"""Figures that compare variants of a run (derivative backends, settings) over many runs:
one column per variant, one point or box per run. The per-run figures of
:mod:`mpc.app.plots.figures` overlay individual runs; these summarize the distributions."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from matplotlib.figure import Figure


@dataclass
class VariantRuns:
    """What the comparison figure shows of one variant's runs."""

    name: str
    #: Model-derivative time of every planner iteration of every run (ms).
    derivative_ms: np.ndarray
    mean_cost: list[float] = field(default_factory=list)
    sims_per_call: list[float] = field(default_factory=list)
    #: Whether each run reached its goal.
    success: list[bool] = field(default_factory=list)


def variants_figure(variants: list[VariantRuns]) -> Figure:
    """Derivative time per iteration (boxes), mean task cost and simulations per derivative
    call per run (points: green reached the goal, red did not), one column per variant.
    Axes labels: ``derivative_ms``, ``mean_cost``, ``sims_per_call``."""
    fig = Figure(figsize=(15, 4.5), layout="constrained")
    axes = fig.subplots(1, 3)
    names = [v.name for v in variants]
    axes[0].set_label("derivative_ms")
    axes[0].boxplot([v.derivative_ms for v in variants], showfliers=False)
    axes[0].set_ylabel("model-derivative time per iteration (ms)")
    for ax, key, ylabel in ((axes[1], "mean_cost", "mean task cost per run"),
                            (axes[2], "sims_per_call", "simulations per derivative call")):
        ax.set_label(key)
        for i, v in enumerate(variants, start=1):
            ys = getattr(v, key)
            colors = ["tab:green" if ok else "tab:red" for ok in v.success]
            ax.scatter(np.full(len(ys), i), ys, c=colors, s=18, label=v.name)
        ax.set_ylabel(ylabel)
    for ax in axes:
        ax.set_xticks(range(1, len(names) + 1), names, rotation=30, ha="right")
        ax.grid(alpha=0.3, axis="y")
    axes[1].set_title("green: goal reached, red: not")
    return fig
