"""Realtime closed loop per derivative backend: achieved planning and feedback rates, side by side.

    python scripts/bench_realtime.py configs/a1_trot.yaml --backends fd analytic --repeats 3
    python scripts/bench_realtime.py configs/a1_trot.yaml --backends analytic --viewer off on
    python scripts/bench_realtime.py configs/go2_hw_stairs.yaml configs/go2_hw.yaml \
        --backends analytic --set "plant={type: sim}"

Runs ``mpc-run``'s realtime mode (wall-clock planner, feedback and plant threads) in this
process, after one unmeasured warm-up run each, the backends interleaved run by run so that
machine load drifts affect all of them alike; ``--load N`` adds N busy processes alongside;
``--viewer off on`` runs each backend without and with the MuJoCo viewer open (it needs a
display: DISPLAY set, e.g. Xvfb). Reports per run the planning and feedback rates, the
real-time factor, the median iteration and phase times, and whether the robot reached the
goal; then the medians per variant. Several configs are interleaved the same way (a run of
each in turn), so that their rates compare as ratios on a shared machine. Writes Markdown and
CSV tables to --out.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import statistics
import tempfile
import time
from pathlib import Path

from report import write_tables

from mpc.app.run import run
from mpc.app.view.viewer import open_viewer

PHASES = ("nominal", "derivatives", "cost_derivatives", "backward", "linesearch")


def busy(duty: float, nice: int) -> None:
    """Burn ``duty`` of a core in 2 ms cycles, like a 500 Hz robot link or simulated robot."""
    with contextlib.suppress(PermissionError):  # raising priority needs root
        os.nice(nice)
    while True:
        start = time.perf_counter()
        while time.perf_counter() - start < 0.002 * duty:
            pass
        time.sleep(0.002 * (1.0 - duty))


def run_once(config: str, backend: str, viewer: str, duration: float, radius: float,
             overrides: list[str]) -> dict:
    observers = [open_viewer] if viewer == "on" else []
    with tempfile.TemporaryDirectory() as tmp:
        s = run(config, ["runtime.mode=realtime", f"derivatives.backend={backend}",
                         f"runtime.duration={duration}", *overrides], out=tmp,
                observers=observers)
    phases = s["phase_ms_median"]
    row = {"config": Path(config).stem, "backend": backend, "viewer": viewer,
           "planning_hz": round(s["planning_rate_hz"], 1),
           "feedback_hz": round(s["feedback_rate_hz"], 1),
           "rtf": round(s["real_time_factor"], 2),
           "iteration_ms": round(s["iteration_ms_median"], 1)}
    row.update({f"{p}_ms": round(phases.get(p, float("nan")), 1) for p in PHASES})
    row.update({"policy_age_ms": round(s["policy_age_ms_median"], 1), "fell": s["fell"],
                "end_m": round(s["goal_distance_end_m"], 3),
                "reached": (not s["fell"]) and s["goal_distance_end_m"] <= radius})
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("configs", nargs="+", metavar="config")
    p.add_argument("--backends", nargs="+", default=["fd", "analytic"])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--duration", type=float, default=10.0, help="wall seconds per run")
    p.add_argument("--warmup", type=float, default=2.0,
                   help="wall seconds of one unmeasured run per backend first")
    p.add_argument("--radius", type=float, default=0.1, help="success radius around the goal")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--load", type=int, default=0,
                   help="busy processes running alongside (the load of a fake robot and a "
                        "robot-link process on loopback)")
    p.add_argument("--load-duty", type=float, default=0.55, help="core share of each")
    p.add_argument("--load-nice", type=int, default=-10, help="their niceness (if allowed)")
    p.add_argument("--viewer", nargs="+", choices=("off", "on"), default=["off"],
                   help="without and/or with the viewer open")
    p.add_argument("--out", default="bench_results/realtime")
    args = p.parse_args()
    variants = [(c, b, v) for c in args.configs for b in args.backends for v in args.viewer]
    for _ in range(args.load):
        multiprocessing.Process(target=busy, args=(args.load_duty, args.load_nice),
                                daemon=True).start()
    for config in args.configs:  # loads the compiled kernels; not measured
        for backend in args.backends:
            run_once(config, backend, "off", args.warmup, args.radius, args.set)
    runs = []
    for repeat in range(args.repeats):
        for config, backend, viewer in variants:
            runs.append({"run": repeat, **run_once(config, backend, viewer, args.duration,
                                                   args.radius, args.set)})
            print(runs[-1], flush=True)
    summary = []
    for config, backend, viewer in variants:
        mine = [r for r in runs if r["config"] == Path(config).stem
                and r["backend"] == backend and r["viewer"] == viewer]
        row = {"config": Path(config).stem, "backend": backend, "viewer": viewer,
               "runs": len(mine),
               "reached": sum(r["reached"] for r in mine),
               "fell": sum(r["fell"] for r in mine)}
        for key in ("planning_hz", "feedback_hz", "rtf", "iteration_ms",
                    *(f"{p}_ms" for p in PHASES), "end_m"):
            digits = {"end_m": 3, "rtf": 2}.get(key, 1)
            row[key] = round(statistics.median(r[key] for r in mine), digits)
        summary.append(row)
    write_tables(runs, Path(args.out), "realtime_runs")
    print(write_tables(summary, Path(args.out), "realtime",
                       note=f"medians over {args.repeats} runs of {args.duration:g} s each, "
                       f"load average {os.getloadavg()[0]:.1f} at the end"
                       + (f", {args.load} busy processes at {args.load_duty:.0%} of a core"
                          if args.load else "")))


if __name__ == "__main__":
    main()
