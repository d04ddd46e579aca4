"""Closed-loop comparison of the derivative backends, side by side, in lockstep.

    python scripts/compare_backends.py configs/a1_trot.yaml configs/go1_trot.yaml \\
        configs/go2_trot.yaml configs/h1_trot.yaml:task.hold_time=0 \\
        --duration 10 --seeds 0 1 2 --goals 2,0 1.5,-1.5 --out bench_results/backends

Each CONFIG may carry overrides of its own after a colon (``CONFIG:KEY=VALUE,...``, applied
after every other override; e.g. ``task.hold_time=0`` for the H1, which otherwise steps in
place for its first 10 s). Variants per config: every registered backend at the config's own
``planner.derivative_skip`` (its shipped setting; ``--skip`` replaces it) and again with
derivatives at every knot (skip 1), plus any ``--variant NAME:KEY=VALUE,...`` (other backend
options; at the config's skip unless ``planner.derivative_skip`` is among them).

Every variant runs every (seed, goal) case, and the variants of a case run side by side: one
lockstep session per variant, all in this process, taking their plant steps in turn
(:func:`mpc.app.runtime.lockstep.lockstep_steps`), so consecutive planner iterations of the
variants are milliseconds apart and whatever load the machine has falls on all of them alike.
Each session is deterministic and independent of the others (same config and seed, same run as
alone). Seeds differ through ``plant.init_noise`` (random joint offsets at start). Backends
with a ``threads`` option all get ``--threads``.

Per run: model-derivative time per planner iteration (median), planner iteration time (median),
both also as process CPU time (:class:`CpuClock`: what the machine's load does not distort,
since only the session whose turn it is works), total planning time, mean task cost (stage cost
at the start of each plan), success (no fall and the base within ``--radius`` of the goal at the
end), the fastest joint of the plant (rad/s), simulations per derivative call after the first
(cold) call, and the error of A, B against centered finite differences: every ``--sample-
every``-th iteration the planner's A_t, B_t at knots {0, 1, T/2, T−2} (with a skip, some are
interpolated: the error is that of what the planner used) are compared after the run with the
oracle of :mod:`derivatives.oracle` (centered ``mjd_transitionFD``, ε 1e-6, on a copy of the
planning model with its Newton solver at tolerance 1e-12, as the run-time audit does), as
max|ΔA| / max|A_ref| and as the median over columns of ‖ΔA_j‖ / ‖A_ref,j‖.

Per config and variant (backends.csv, backends.md): success count, medians, and the paired
ratios against fd at the same skip, per case then the median over cases: derivative and
iteration speed-up (fd's median time over the variant's, wall and CPU) and mean cost over
fd's. The run
directories of each config's first case are kept in --out/runs/<config>/<variant>. When
matplotlib is installed (the ``plot`` extra: ``pip install -e '.[plot]'``), the plots come from
:mod:`mpc.app.plots`: backends_<config>.png (per variant over all runs) and, in
--out/figures/<config>, mpc-plot's figures and report of the first case with the variants
overlaid; without it the tables are written and the plots are skipped.
"""

from __future__ import annotations

import argparse
import datetime
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import mujoco
import numpy as np
from report import markdown_table, write_csv

from derivatives import BACKENDS
from derivatives.oracle import (
    Knot,
    centered_fd,
    median_column_error,
    oracle_model,
    relative_max_error,
)
from mpc.app.config import load_config
from mpc.app.observers.observer_base import Observer, PlanReport
from mpc.app.runtime.lockstep import lockstep_steps
from mpc.app.runtime.session import Session
from mpc.planner.planner_base import PHASES

#: Per-run columns of runs.csv (besides config, variant, seed, goal, error), as run_case fills
#: them.
RUN_KEYS = ("derivative_ms_median", "iteration_ms_median", "derivative_cpu_ms_median",
            "iteration_cpu_ms_median", "planning_s", "mean_cost",
            "success", "fell", "goal_distance_end_m", "failed_iterations",
            "max_joint_speed_rad_s", "sims_per_call", "sims_first_call", "A_err_median",
            "A_err_max", "B_err_median", "B_err_max", "A_col_err_median", "B_col_err_median",
            "load_1min")


@dataclass
class Variant:
    name: str
    backend: str
    skip: int
    overrides: list[str] = field(default_factory=list)


@dataclass
class ConfigSpec:
    """A config file and the overrides given with it on the command line."""

    path: str
    overrides: list[str]

    @property
    def stem(self) -> str:
        return Path(self.path).stem

    @classmethod
    def parse(cls, text: str) -> ConfigSpec:
        path, _, rest = text.partition(":")
        return cls(path, [kv for kv in rest.split(",") if kv])


def backend_options(backend: str, threads: int) -> list[str]:
    """``derivatives.<backend>.threads`` for backends that take it."""
    if "threads" in inspect.signature(BACKENDS.get(backend)).parameters:
        return [f"derivatives.{backend}.threads={threads}"]
    return []


def make_variants(backends: list[str], skip: int, threads: int) -> list[Variant]:
    """Each backend at ``skip`` (the shipped setting), then each at skip 1 (if skip > 1)."""
    out = []
    for s in dict.fromkeys([skip, 1]):
        for b in backends:
            overrides = [f"derivatives.backend={b}", f"planner.derivative_skip={s}",
                         *backend_options(b, threads)]
            out.append(Variant(f"{b} skip {s}", b, s, overrides))
    return out


def parse_variant(text: str, skip: int, threads: int) -> Variant:
    """``NAME:KEY=VALUE,...`` with ``derivatives.backend`` among the overrides (``skip``
    unless ``planner.derivative_skip`` is given)."""
    name, _, rest = text.partition(":")
    overrides = [kv for kv in rest.split(",") if kv]
    settings = dict(kv.split("=", 1) for kv in overrides)
    if "derivatives.backend" not in settings:
        raise SystemExit(f"--variant {text!r}: needs derivatives.backend=NAME")
    backend = settings["derivatives.backend"]
    skip = int(settings.get("planner.derivative_skip", skip))
    overrides.append(f"planner.derivative_skip={skip}")
    overrides += backend_options(backend, threads)
    return Variant(name, backend, skip, overrides)


class LinearizationSampler(Observer):
    """Keeps A_t, B_t at a few knots every ``every`` planner iterations.

    Only copies happen during the run (in the planner thread, right after the iteration that
    computed them); the reference derivatives are computed afterwards, so the run's timings
    are not disturbed.
    """

    def __init__(self, session: Session, every: int):
        self.planner = session.planner
        self.every = every
        self.samples: list[Knot] = []
        self.model = session.planner.model
        T = self.planner.T
        self.knots = sorted({0, 1, T // 2, T - 2})

    def on_plan(self, report: PlanReport) -> None:
        planner = self.planner
        if (report.stats.status == "ok" and planner.iteration >= 2
                and (planner.iteration - 2) % self.every == 0):
            nominal, lin = report.nominal, planner.linearization
            for t in self.knots:
                self.samples.append(Knot.of(nominal, lin, t))


class CpuClock:
    """Process CPU time of each planner iteration and of its model-derivative phase.

    The variants of a case take turns in one process and only the session whose turn it is
    has threads at work, so the process's CPU time over a call is that session's work, all its
    threads included, whatever else runs on the machine (its wall time is what the planner
    reports and what load distorts). The derivative phase is timed as the planner times it:
    from the provider's ``horizon`` call, or for a streamed horizon from ``finish`` (what is
    left once the nominal rollout is done).
    """

    def __init__(self, session: Session):
        self.iteration_ms: list[float] = []
        self.derivative_ms: list[float] = []
        provider = session.planner.provider
        plan, stream, horizon = session.plan, provider.stream, provider.horizon

        def timed(fn, into, busy):
            """fn, timed into ``into`` unless a call timed by the same ``busy`` flag is
            already running (fd's and wasp's finish() calls horizon(): the outer one counts)."""
            def call(*args, **kwargs):
                if busy[0]:
                    return fn(*args, **kwargs)
                busy[0] = True
                start = time.process_time()
                try:
                    return fn(*args, **kwargs)
                finally:
                    into.append((time.process_time() - start) * 1e3)
                    busy[0] = False
            return call

        deriving = [False]

        def timed_stream(*args, **kwargs):
            return timed(stream(*args, **kwargs), self.derivative_ms, deriving)

        session.plan = timed(plan, self.iteration_ms, [False])
        provider.stream = timed_stream
        provider.horizon = timed(horizon, self.derivative_ms, deriving)


def sample_errors(model: mujoco.MjModel, samples: list[Knot]) -> dict[str, np.ndarray]:
    """Per sample, against A_ref, B_ref by centered differences: ``A``, ``B`` the relative max
    error max|A − A_ref| / max|A_ref|; ``A_col``, ``B_col`` the median over columns of the
    relative column error ‖ΔA_j‖ / ‖A_ref,j‖ (where an error sits matters: a change confined
    to a few columns and one spread over all of them have the same max or Frobenius error)."""
    d = mujoco.MjData(model)
    out: dict[str, list[float]] = {"A": [], "B": [], "A_col": [], "B_col": []}
    for s in samples:
        A_ref, B_ref = centered_fd(model, s.load(d))
        out["A"].append(relative_max_error(s.A, A_ref))
        out["B"].append(relative_max_error(s.B, B_ref))
        out["A_col"].append(median_column_error(s.A, A_ref))
        out["B_col"].append(median_column_error(s.B, B_ref))
    return {k: np.array(v) for k, v in out.items()}


def run_case(spec: ConfigSpec, variants: list[Variant], overrides: list[str], duration: float,
             radius: float, sample_every: int, keep: dict[str, Path] | None = None) -> list[dict]:
    """One lockstep session per variant, all of them stepped in turn for ``duration``; returns
    per variant its metrics and per-iteration times (or its error). Run directories are
    ``keep[variant name]``, or temporary ones."""
    load_before = os.getloadavg()[0]
    tmp = tempfile.mkdtemp(prefix="compare_backends_")
    sessions: list[Session | None] = []
    samplers: list[LinearizationSampler | None] = []
    clocks: list[CpuClock | None] = []
    errors: list[str | None] = []
    dirs = []
    try:
        for i, v in enumerate(variants):
            run_dir = keep[v.name] if keep else Path(tmp) / str(i)
            if keep and run_dir.exists():  # a run directory is never reused: replaced
                shutil.rmtree(run_dir)
            dirs.append(run_dir)
            try:
                cfg = load_config(spec.path, ["runtime.mode=lockstep",
                                              f"runtime.duration={duration}", *v.overrides,
                                              *overrides, *spec.overrides])
                session = Session(cfg, run_dir)
                sampler = LinearizationSampler(session, sample_every)
                session.attach(sampler)
                clocks.append(CpuClock(session))
                sessions.append(session)
                samplers.append(sampler)
                errors.append(None)
            except Exception as e:  # a broken backend must not stop the others
                sessions.append(None)
                samplers.append(None)
                clocks.append(None)
                errors.append(f"{type(e).__name__}: {e}")
        steppers = {i: lockstep_steps(s, duration) for i, s in enumerate(sessions) if s}
        while steppers:
            for i in list(steppers):
                try:
                    next(steppers[i])
                except StopIteration:
                    del steppers[i]
                except Exception as e:
                    errors[i] = f"{type(e).__name__}: {e}"
                    del steppers[i]
        summaries = [s.close("lockstep") if s else None for s in sessions]
        load_after = os.getloadavg()[0]
        return [_results(s, sampler, clock, run_dir, error, radius,
                         (load_before + load_after) / 2)
                for s, sampler, clock, run_dir, error in zip(summaries, samplers, clocks, dirs,
                                                             errors, strict=True)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _results(summary: dict | None, sampler: LinearizationSampler | None,
             clock: CpuClock | None, run_dir: Path, error: str | None, radius: float,
             load: float) -> dict:
    if summary is None or error is not None:
        return {"error": error or "no summary", "row": {}}
    series = np.load(run_dir / "timeseries.npz")
    timings, sims, ok = series["plan_timings"], series["plan_simulations"], series["plan_ok"]
    err = sample_errors(oracle_model(sampler.model), sampler.samples)
    phase = {name: i for i, name in enumerate(PHASES)}
    kept = ok[1:].astype(bool)  # the first iteration carries the JIT warm-up
    success = (not summary["fell"]) and summary["goal_distance_end_m"] <= radius
    stat = lambda fn, x: float(fn(x)) if len(x) else float("nan")  # noqa: E731
    return {
        "derivative_ms": timings[1:, phase["derivatives"]][kept],
        "iteration_ms": timings[1:, phase["total"]][kept],
        "err_A": err["A"],
        "err_B": err["B"],
        "err_A_col": err["A_col"],
        "err_B_col": err["B_col"],
        "row": {
            "derivative_ms_median": summary["derivative_ms_median"],
            "iteration_ms_median": summary["iteration_ms_median"],
            # the first iteration carries the JIT warm-up, as above
            "derivative_cpu_ms_median": stat(np.median, clock.derivative_ms[1:]),
            "iteration_cpu_ms_median": stat(np.median, clock.iteration_ms[1:]),
            "planning_s": float(np.nansum(timings[:, phase["total"]]) / 1e3),
            "mean_cost": summary["mean_cost"],
            "success": success,
            "fell": summary["fell"],
            "goal_distance_end_m": summary["goal_distance_end_m"],
            "failed_iterations": summary["failed_iterations"],
            "max_joint_speed_rad_s": summary["max_joint_speed_rad_s"],
            "sims_per_call": float(np.mean(sims[1:])) if len(sims) > 1 else float("nan"),
            "sims_first_call": int(sims[0]) if len(sims) else 0,
            "A_err_median": stat(np.median, err["A"]),
            "A_err_max": stat(np.max, err["A"]),
            "B_err_median": stat(np.median, err["B"]),
            "B_err_max": stat(np.max, err["B"]),
            "A_col_err_median": stat(np.median, err["A_col"]),
            "B_col_err_median": stat(np.median, err["B_col"]),
            "load_1min": round(load, 2),
        },
    }


def summarize(config: str, variants: list[Variant], results: dict[str, list[dict]]) -> list[dict]:
    """One row per variant of ``config``: success count, medians over its runs (derivative and
    iteration times pooled over all iterations of all runs), and the paired ratios against fd
    at the same skip (per case, then the median over cases: the runs of a case ran side by
    side, so the ratio cancels the machine's load)."""
    rows = []
    fd_of_skip = {v.skip: v.name for v in variants if v.backend == "fd"
                  and v.name == f"fd skip {v.skip}"}
    for v in variants:
        runs = results[v.name]
        good = [r for r in runs if "error" not in r]

        def pooled(key, good=good):
            return np.concatenate([r[key] for r in good]) if good else np.array([])

        def of_runs(fn, key, good=good):
            return _stat(fn, [r["row"][key] for r in good])

        base = fd_of_skip.get(v.skip)

        def paired(ratio, base=base, name=v.name):
            if base is None:
                return float("nan")
            values = [ratio(b["row"], x["row"]) for b, x in zip(results[base], results[name],
                                                                 strict=True)
                      if "error" not in b and "error" not in x]
            return round(_stat(np.median, values), 2)

        rows.append({
            "config": config,
            "variant": v.name,
            "success": f"{sum(r['row']['success'] for r in good)}/{len(runs)}",
            "falls": sum(r["row"]["fell"] for r in good),
            "derivative_ms": round(_stat(np.median, pooled("derivative_ms")), 2),
            "derivative_speedup_vs_fd": paired(
                lambda b, x: b["derivative_ms_median"] / x["derivative_ms_median"]),
            "iteration_ms": round(_stat(np.median, pooled("iteration_ms")), 2),
            "iteration_speedup_vs_fd": paired(
                lambda b, x: b["iteration_ms_median"] / x["iteration_ms_median"]),
            "derivative_cpu_ms": round(of_runs(np.median, "derivative_cpu_ms_median"), 2),
            "derivative_cpu_speedup_vs_fd": paired(
                lambda b, x: b["derivative_cpu_ms_median"] / x["derivative_cpu_ms_median"]),
            "iteration_cpu_ms": round(of_runs(np.median, "iteration_cpu_ms_median"), 2),
            "iteration_cpu_speedup_vs_fd": paired(
                lambda b, x: b["iteration_cpu_ms_median"] / x["iteration_cpu_ms_median"]),
            "mean_cost": round(of_runs(np.median, "mean_cost"), 4),
            "cost_vs_fd": paired(lambda b, x: x["mean_cost"] / b["mean_cost"]),
            "goal_end_m": round(of_runs(np.median, "goal_distance_end_m"), 3),
            "fastest_joint_rad_s": round(of_runs(np.median, "max_joint_speed_rad_s"), 1),
            "fastest_joint_max_rad_s": round(of_runs(np.max, "max_joint_speed_rad_s"), 1),
            "sims_per_call": round(of_runs(np.median, "sims_per_call"), 1),
            "A_err_median": _sig(_stat(np.median, pooled("err_A"))),
            "B_err_median": _sig(_stat(np.median, pooled("err_B"))),
            "A_col_err_median": _sig(_stat(np.median, pooled("err_A_col"))),
            "B_col_err_median": _sig(_stat(np.median, pooled("err_B_col"))),
            "load_1min": round(of_runs(np.median, "load_1min"), 2),
        })
    return rows


def _stat(fn, values) -> float:
    """fn(values), NaN for no values."""
    return float(fn(values)) if len(values) else float("nan")


def _sig(x: float) -> float:
    """Two significant digits."""
    return float(f"{x:.2g}")


def plot(out: Path, stem: str, variants: list[Variant], results: dict[str, list[dict]],
         kept: list[Path]) -> bool:
    """backends_<stem>.png (derivative time per iteration, mean cost and simulations per call,
    per variant) and the overlaid run figures of the ``kept`` run directories in
    ``out/figures/<stem>``. Returns False (and draws nothing) when matplotlib is not
    installed."""
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
    figures.save_png(compare.variants_figure(shown), out / f"backends_{stem}.png")
    runs = [load_run(d) for d in kept if (d / "timeseries.npz").is_file()]
    if runs:
        folder = out / "figures" / stem
        folder.mkdir(parents=True, exist_ok=True)
        built = figures.build_figures(runs)
        for name, fig in built.items():
            figures.save_png(fig, folder / f"{name}.png")
        (folder / "report.html").write_text(report.render(runs, built))
    return True


def git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("configs", nargs="+", metavar="CONFIG[:KEY=VALUE,...]")
    p.add_argument("--duration", type=float, default=10.0, help="simulated seconds per run")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--goals", nargs="+", default=["2,0", "1.5,-1.5"], help="x,y in metres")
    p.add_argument("--init-noise", type=float, default=0.02,
                   help="plant.init_noise: std of the initial joint offsets (rad)")
    p.add_argument("--backends", nargs="+", default=None,
                   help="default: every registered backend")
    p.add_argument("--skip", type=int, default=None,
                   help="derivative skip of the first variants (default: each config's own)")
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
    specs = [ConfigSpec.parse(text) for text in args.configs]
    cases = [(seed, [float(v) for v in goal.split(",")]) for seed in args.seeds
             for goal in args.goals]
    print(f"backends: {', '.join(backends)} (registered: {', '.join(BACKENDS.available())})")
    out = Path(args.out)
    table, runs, drew = [], [], True
    for spec in specs:
        skip = args.skip or load_config(spec.path, spec.overrides).planner.derivative_skip
        variants = make_variants(backends, skip, args.threads)
        variants += [parse_variant(text, skip, args.threads) for text in args.variant]
        # Warm-up: compile (or load from the disk cache) every variant's kernels.
        run_case(spec, variants, args.set, 0.1, args.radius, 10**9)
        results: dict[str, list[dict]] = {v.name: [] for v in variants}
        kept = {v.name: out / "runs" / spec.stem / v.name.replace(" ", "_") for v in variants}
        for i, (seed, goal) in enumerate(cases):
            overrides = [f"runtime.seed={seed}", f"plant.init_noise={args.init_noise}",
                         f"task.goal=[{goal[0]}, {goal[1]}]", *args.set]
            outcome = run_case(spec, variants, overrides, args.duration, args.radius,
                               args.sample_every, kept if i == 0 else None)
            for v, r in zip(variants, outcome, strict=True):
                results[v.name].append(r)
                row = {"config": spec.stem, "variant": v.name, "seed": seed,
                       "goal": json.dumps(goal), **r["row"], "error": r.get("error", "")}
                runs.append(row)
                print(json.dumps(row), flush=True)
        rows = summarize(spec.stem, variants, results)
        table += rows
        print(markdown_table(rows), flush=True)
        drew = plot(out, spec.stem, variants, results, list(kept.values())) and drew

    out.mkdir(parents=True, exist_ok=True)
    keys = ["config", "variant", "seed", "goal", *RUN_KEYS, "error"]
    write_csv(out / "runs.csv", [{k: r.get(k, "") for k in keys} for r in runs])
    write_csv(out / "backends.csv", table)
    meta = {
        "command": "python scripts/compare_backends.py " + " ".join(sys.argv[1:]),
        "configs": args.configs, "duration_s": args.duration, "seeds": args.seeds,
        "goals": args.goals, "init_noise": args.init_noise, "threads": args.threads,
        "cpus": os.cpu_count(), "load_1min_median": float(np.median(
            [r["load_1min"] for r in runs if "load_1min" in r] or [np.nan])),
        "commit": commit, "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "not_run": sorted({"fd", "wasp", "analytic"} - set(backends)),
    }
    text = markdown_table(table)
    note = ("" if drew else "\n\nmatplotlib is not installed (extra `plot`): no plot, tables "
            "only.")
    (out / "backends.md").write_text(text + note + "\n\n```\n" + json.dumps(meta, indent=1)
                                     + "\n```\n")
    print(text + note)
    print(json.dumps(meta))


if __name__ == "__main__":
    main()
