"""Closed-loop comparison of the derivative backends, side by side, in lockstep.

    python scripts/compare_backends.py configs/a1_trot.yaml --duration 10 --seeds 0 1 2 \\
        --goals 2,0 1.5,-1.5 --out bench_results/backends

Variants: every registered backend with full derivatives (``planner.derivative_skip=1``, what
the reference reports compare), each again with ``--skip`` (default 3, the shipped
a1_trot.yaml's value), and any ``--variant NAME:KEY=VALUE,...`` (other backend options).
Every variant runs every (seed, goal) case; the cases are the outer loop and the variant order
rotates from case to case, so machine load hits all variants alike.
Seeds differ through ``plant.init_noise`` (random joint offsets at start). Backends with a
``threads`` option all get ``--threads``.

Per run: model-derivative time per planner iteration (median), planner iteration time
(median), total planning time, wall-clock of the loop, mean task cost (stage cost at the start
of each plan), success (no fall and the base within ``--radius`` of the goal at the end),
simulations per derivative call after the first (cold) call, and the error of A, B against
centered finite differences: every ``--sample-every``-th iteration the planner's A_t, B_t at
knots {0, 1, T/2, T−2} (with a skip, some are interpolated: the error is that of what the
planner used) are compared after the run with ``mjd_transitionFD`` centered (ε 1e-6) on a copy
of the planning model with solver tolerance 1e-12, as max|ΔA| / max|A_ref|.

Writes runs.csv (one row per run), backends.csv and backends.md (one row per variant, medians
over runs) to --out. The run directories of the first case are kept in --out/runs/<variant>.
When matplotlib is installed (the ``plot`` extra: ``pip install -e '.[plot]'``), the plots come
from :mod:`mpc.app.plots`: backends.png (per variant over all runs) and, in --out/figures,
mpc-plot's figures and report of the first case with the variants overlaid; without it the tables
are written and the plots are skipped.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import datetime
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import mujoco
import numpy as np
from report import markdown_table, write_csv

from derivatives import BACKENDS
from mpc.app.observers.observer_base import Observer, PlanReport
from mpc.app.run import run
from mpc.app.runtime.session import Session
from mpc.planner.planner_base import PHASES

#: Per-run columns of runs.csv (besides variant, seed, goal, error), as run_once fills them.
RUN_KEYS = ("derivative_ms_median", "iteration_ms_median", "planning_s", "wall_s", "mean_cost",
            "success", "fell", "goal_distance_end_m", "failed_iterations", "sims_per_call",
            "sims_first_call", "fd_evaluations", "A_err_median", "A_err_max", "B_err_median",
            "B_err_max", "load_1min")
REFERENCE_EPS = 1e-6
REFERENCE_TOLERANCE = 1e-12


@dataclass
class Sample:
    """One knot of a planner iteration: the state the planner linearized at and its A, B."""

    time: float
    qpos: np.ndarray
    qvel: np.ndarray
    act: np.ndarray
    ctrl: np.ndarray
    warmstart: np.ndarray
    A: np.ndarray
    B: np.ndarray


@dataclass
class Variant:
    name: str
    backend: str
    skip: int
    overrides: list[str] = field(default_factory=list)


def make_variants(backends: list[str], skip: int, threads: int) -> list[Variant]:
    """Each backend at skip 1, then each at ``skip`` (if > 1)."""
    out = []
    for s in [1] + ([skip] if skip > 1 else []):
        for b in backends:
            overrides = [f"derivatives.backend={b}", f"planner.derivative_skip={s}"]
            if "threads" in inspect.signature(BACKENDS.get(b)).parameters:
                overrides.append(f"derivatives.{b}.threads={threads}")
            out.append(Variant(b if s == 1 else f"{b} skip {s}", b, s, overrides))
    return out


def parse_variant(text: str, threads: int) -> Variant:
    """``NAME:KEY=VALUE,...`` with ``derivatives.backend`` among the overrides (skip 1 unless
    ``planner.derivative_skip`` is given)."""
    name, _, rest = text.partition(":")
    overrides = [kv for kv in rest.split(",") if kv]
    settings = dict(kv.split("=", 1) for kv in overrides)
    if "derivatives.backend" not in settings:
        raise SystemExit(f"--variant {text!r}: needs derivatives.backend=NAME")
    backend = settings["derivatives.backend"]
    skip = int(settings.get("planner.derivative_skip", 1))
    overrides.append(f"planner.derivative_skip={skip}")
    if "threads" in inspect.signature(BACKENDS.get(backend)).parameters:
        overrides.append(f"derivatives.{backend}.threads={threads}")
    return Variant(name, backend, skip, overrides)


class LinearizationSampler(Observer):
    """Keeps A_t, B_t at a few knots every ``every`` planner iterations.

    Only copies happen during the run (in the planner thread, right after the iteration that
    computed them); the reference derivatives are computed afterwards, so the run's timings
    are not disturbed.
    """

    def __init__(self, session: Session, every: int, samples: list[Sample]):
        self.planner = session.planner
        self.every = every
        self.samples = samples
        self.model = session.planner.model
        T = self.planner.T
        self.knots = sorted({0, 1, T // 2, T - 2})

    def on_plan(self, report: PlanReport) -> None:
        planner = self.planner
        if (report.stats.status == "ok" and planner.iteration >= 2
                and (planner.iteration - 2) % self.every == 0):
            nominal, lin = report.nominal, planner.linearization
            for t in self.knots:
                self.samples.append(Sample(
                    float(nominal.time[t]), nominal.qpos[t].copy(), nominal.qvel[t].copy(),
                    nominal.act[t].copy(), nominal.ctrl[t].copy(), nominal.warmstart[t].copy(),
                    lin.A[t].copy(), lin.B[t].copy()))


def reference_model(model: mujoco.MjModel) -> mujoco.MjModel:
    """A copy of the planning model whose constraint solver converges to 1e-12."""
    ref = copy.copy(model)
    ref.opt.tolerance = REFERENCE_TOLERANCE
    ref.opt.iterations = max(ref.opt.iterations, 1000)
    ref.opt.ls_iterations = max(ref.opt.ls_iterations, 100)
    return ref


def sample_errors(model: mujoco.MjModel, samples: list[Sample]) -> tuple[np.ndarray, np.ndarray]:
    """max|A − A_ref| / max|A_ref| (and for B) per sample, A_ref by centered differences."""
    nx = 2 * model.nv + model.na
    d = mujoco.MjData(model)
    A_ref, B_ref = np.zeros((nx, nx)), np.zeros((nx, model.nu))
    err_a, err_b = [], []
    for s in samples:
        d.time = s.time
        d.qpos[:], d.qvel[:], d.act[:], d.ctrl[:] = s.qpos, s.qvel, s.act, s.ctrl
        d.qacc_warmstart[:] = s.warmstart
        mujoco.mjd_transitionFD(model, d, REFERENCE_EPS, True, A_ref, B_ref, None, None)
        err_a.append(relative_max_error(s.A, A_ref))
        err_b.append(relative_max_error(s.B, B_ref))
    return np.array(err_a), np.array(err_b)


def relative_max_error(X: np.ndarray, ref: np.ndarray) -> float:
    """max|X − ref| / max|ref|; 0 when both vanish, inf when only ref does (B of a robot whose
    actuators all saturate is zero)."""
    scale, diff = np.abs(ref).max(), np.abs(X - ref).max()
    if scale > 0:
        return float(diff / scale)
    return 0.0 if diff == 0 else float("inf")


def run_once(config: str, overrides: list[str], duration: float, radius: float,
             sample_every: int, keep: Path | None = None) -> dict:
    """One lockstep run; returns its metrics and the per-iteration derivative times. Its run
    directory is ``keep``, or a temporary one."""
    samples: list[Sample] = []
    samplers: list[LinearizationSampler] = []

    def sampler(session: Session) -> LinearizationSampler:
        samplers.append(LinearizationSampler(session, sample_every, samples))
        return samplers[-1]

    load_before = os.getloadavg()[0]
    if keep is not None and keep.exists():  # a run directory is never reused: replaced
        shutil.rmtree(keep)
    place = tempfile.TemporaryDirectory() if keep is None else contextlib.nullcontext(keep)
    with place as tmp:
        summary = run(config, ["runtime.mode=lockstep", f"runtime.duration={duration}",
                               *overrides], out=tmp, observers=[sampler])
        wall = summary["loop_wall_time_s"]
        model = samplers[0].model
        series = np.load(Path(tmp) / "timeseries.npz")
        timings, sims, ok = series["plan_timings"], series["plan_simulations"], series["plan_ok"]
    load_after = os.getloadavg()[0]
    err_a, err_b = sample_errors(reference_model(model), samples)
    phase = {name: i for i, name in enumerate(PHASES)}
    kept = ok[1:].astype(bool)  # the first iteration carries the JIT warm-up
    success = (not summary["fell"]) and summary["goal_distance_end_m"] <= radius
    return {
        "derivative_ms": timings[1:, phase["derivatives"]][kept],
        "iteration_ms": timings[1:, phase["total"]][kept],
        "err_A": err_a,
        "err_B": err_b,
        "row": {
            "derivative_ms_median": summary["derivative_ms_median"],
            "iteration_ms_median": summary["iteration_ms_median"],
            "planning_s": float(np.nansum(timings[:, phase["total"]]) / 1e3),
            "wall_s": round(wall, 3),
            "mean_cost": summary["mean_cost"],
            "success": success,
            "fell": summary["fell"],
            "goal_distance_end_m": summary["goal_distance_end_m"],
            "failed_iterations": summary["failed_iterations"],
            "sims_per_call": float(np.mean(sims[1:])) if len(sims) > 1 else float("nan"),
            "sims_first_call": int(sims[0]) if len(sims) else 0,
            "fd_evaluations": summary["fd_evaluations"],
            "A_err_median": float(np.median(err_a)) if len(err_a) else float("nan"),
            "A_err_max": float(np.max(err_a)) if len(err_a) else float("nan"),
            "B_err_median": float(np.median(err_b)) if len(err_b) else float("nan"),
            "B_err_max": float(np.max(err_b)) if len(err_b) else float("nan"),
            "load_1min": round((load_before + load_after) / 2, 2),
        },
    }


def summarize(variants: list[Variant], results: dict[str, list[dict]]) -> list[dict]:
    """One row per variant: medians over its runs (derivative and iteration times pooled over
    all iterations of all runs), success count, speed-up of the derivative time against fd at
    the same skip."""
    rows = []
    for v in variants:
        runs = results[v.name]
        good = [r for r in runs if "error" not in r]

        def pooled(key, good=good):
            return np.concatenate([r[key] for r in good]) if good else np.array([])

        def median_of_runs(key, good=good):
            return _stat(np.median, [r["row"][key] for r in good])

        err_a, err_b = pooled("err_A"), pooled("err_B")
        rows.append({
            "variant": v.name,
            "backend": v.backend,
            "skip": v.skip,
            "success": f"{sum(r['row']['success'] for r in good)}/{len(runs)}",
            "falls": sum(r["row"]["fell"] for r in good),
            "derivative_ms": round(_stat(np.median, pooled("derivative_ms")), 2),
            "iteration_ms": round(_stat(np.median, pooled("iteration_ms")), 2),
            "planning_s": round(median_of_runs("planning_s"), 2),
            "wall_s": round(median_of_runs("wall_s"), 2),
            "mean_cost": round(median_of_runs("mean_cost"), 4),
            "goal_end_m": round(median_of_runs("goal_distance_end_m"), 3),
            "sims_per_call": round(median_of_runs("sims_per_call"), 1),
            "A_err_median": _sig(_stat(np.median, err_a)),
            "A_err_max": _sig(_stat(np.max, err_a)),
            "B_err_median": _sig(_stat(np.median, err_b)),
            "B_err_max": _sig(_stat(np.max, err_b)),
            "load_1min": round(median_of_runs("load_1min"), 2),
        })
    # Speed-up against fd at the same skip, two ways: ratio of the pooled medians, and the
    # median over cases of the per-case ratio (runs of one case are adjacent in time, so this
    # one cancels most of the load drift of a shared machine).
    fd_of_skip = {v.skip: v.name for v in variants if v.backend == "fd"
                  and v.name == ("fd" if v.skip == 1 else f"fd skip {v.skip}")}
    for v, r in zip(variants, rows, strict=True):
        base = fd_of_skip.get(v.skip)
        if base is None:
            r["speedup_vs_fd"] = r["speedup_vs_fd_paired"] = float("nan")
            continue
        base_ms = next(x["derivative_ms"] for x in rows if x["variant"] == base)
        r["speedup_vs_fd"] = round(base_ms / r["derivative_ms"], 2)
        ratios = [b["row"]["derivative_ms_median"] / x["row"]["derivative_ms_median"]
                  for b, x in zip(results[base], results[v.name], strict=True)
                  if "error" not in b and "error" not in x]
        r["speedup_vs_fd_paired"] = round(_stat(np.median, ratios), 2)
    return rows


def _stat(fn, values) -> float:
    """fn(values), NaN for no values."""
    return float(fn(values)) if len(values) else float("nan")


def _sig(x: float) -> float:
    """Two significant digits."""
    return float(f"{x:.2g}")


def plot(out: Path, variants: list[Variant], results: dict[str, list[dict]],
         kept: list[Path]) -> bool:
    """backends.png (derivative time per iteration, mean cost and simulations per call, per
    variant) and the overlaid run figures of the ``kept`` run directories in ``out/figures``.
    Returns False (and draws nothing) when matplotlib is not installed."""
    try:
        from mpc.app.plots import compare, figures, report
    except ImportError:
        return False
    from mpc.app.record.reader import load_run

    shown = []
    for v in variants:
        good = [r for r in results[v.name] if "error" not in r]
        shown.append(compare.VariantRuns(
            v.name,
            np.concatenate([r["derivative_ms"] for r in good]) if good else np.array([]),
            [r["row"]["mean_cost"] for r in good], [r["row"]["sims_per_call"] for r in good],
            [r["row"]["success"] for r in good]))
    figures.save_png(compare.variants_figure(shown), out / "backends.png")
    runs = [load_run(d) for d in kept if (d / "timeseries.npz").is_file()]
    if runs:
        (out / "figures").mkdir(exist_ok=True)
        built = figures.build_figures(runs)
        for name, fig in built.items():
            figures.save_png(fig, out / "figures" / f"{name}.png")
        (out / "figures" / "report.html").write_text(report.render(runs, built))
    return True


def git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("config")
    p.add_argument("--duration", type=float, default=10.0, help="simulated seconds per run")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--goals", nargs="+", default=["2,0", "1.5,-1.5"], help="x,y in metres")
    p.add_argument("--init-noise", type=float, default=0.02,
                   help="plant.init_noise: std of the initial joint offsets (rad)")
    p.add_argument("--backends", nargs="+", default=None,
                   help="default: every registered backend")
    p.add_argument("--skip", type=int, default=3, help="derivative skip of the skip variants")
    p.add_argument("--threads", type=int, default=2, help="threads of every backend")
    p.add_argument("--radius", type=float, default=0.25, help="success radius around the goal")
    p.add_argument("--sample-every", type=int, default=25,
                   help="iterations between A, B error samples")
    p.add_argument("--variant", action="append", default=[], metavar="NAME:KEY=VALUE,...",
                   help="an extra variant, e.g. 'wasp tol 0.1:derivatives.backend=wasp,"
                        "derivatives.wasp.tol_x=0.1,derivatives.wasp.tol_u=0.1'")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="extra config overrides for every run")
    p.add_argument("--out", default="bench_results/backends")
    args = p.parse_args()

    commit = git_commit()  # the code that runs, even if HEAD moves during the runs
    backends = args.backends or BACKENDS.available()
    variants = make_variants(backends, args.skip, args.threads)
    variants += [parse_variant(text, args.threads) for text in args.variant]
    cases = [(seed, [float(v) for v in goal.split(",")]) for seed in args.seeds
             for goal in args.goals]
    print(f"backends: {', '.join(backends)} (registered: {', '.join(BACKENDS.available())})")
    # Warm-up: compile (or load from the disk cache) every variant's kernels outside the runs.
    for v in variants:
        run_once(args.config, [*v.overrides, *args.set], 0.1, args.radius, 10**9)
    results: dict[str, list[dict]] = {v.name: [] for v in variants}
    runs = []
    out = Path(args.out)
    kept = {v.name: out / "runs" / v.name.replace(" ", "_") for v in variants}
    for i, (seed, goal) in enumerate(cases):
        order = variants[i % len(variants):] + variants[: i % len(variants)]
        for v in order:
            overrides = [*v.overrides, f"runtime.seed={seed}",
                         f"plant.init_noise={args.init_noise}",
                         f"task.goal=[{goal[0]}, {goal[1]}]", *args.set]
            try:
                r = run_once(args.config, overrides, args.duration, args.radius,
                             args.sample_every, kept[v.name] if i == 0 else None)
            except Exception as e:  # a broken backend must not stop the others
                r = {"error": f"{type(e).__name__}: {e}", "row": {}}
            results[v.name].append(r)
            row = {"variant": v.name, "seed": seed, "goal": json.dumps(goal), **r["row"],
                   "error": r.get("error", "")}
            runs.append(row)
            print(json.dumps(row), flush=True)

    table = summarize(variants, results)
    out.mkdir(parents=True, exist_ok=True)
    keys = ["variant", "seed", "goal", *RUN_KEYS, "error"]
    write_csv(out / "runs.csv", [{k: r.get(k, "") for k in keys} for r in runs])
    write_csv(out / "backends.csv", table)
    meta = {
        "command": "python scripts/compare_backends.py " + " ".join(sys.argv[1:]),
        "config": args.config, "duration_s": args.duration, "seeds": args.seeds,
        "goals": args.goals, "init_noise": args.init_noise, "threads": args.threads,
        "cpus": os.cpu_count(), "load_1min_median": float(np.median(
            [r["load_1min"] for r in runs if "load_1min" in r] or [np.nan])),
        "commit": commit, "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "not_run": sorted({"fd", "wasp", "analytic"} - set(backends)),
    }
    drew = plot(out, variants, results, list(kept.values()))
    text = markdown_table(table)
    note = ("" if drew else "\n\nmatplotlib is not installed (extra `plot`): no plot, tables "
            "only.")
    (out / "backends.md").write_text(text + note + "\n\n```\n" + json.dumps(meta, indent=1)
                                     + "\n```\n")
    print(text + note)
    print(json.dumps(meta))


if __name__ == "__main__":
    main()
