"""Planner iteration time per phase, for planner/backend variants, side by side.

Runs each variant in lockstep (deterministic simulated time, real planner work) in this
process, interleaving repetitions so machine noise hits every variant alike, and reports the
median milliseconds per phase plus the run outcome. Example:

    python scripts/bench_planner.py configs/a1_trot.yaml --duration 3 --repeats 3 \\
        --variant "full:planner.derivative_skip=1,planner.warmstart_candidates=6" \\
        --variant "default:"

Writes a Markdown table (and CSV) to --out.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

import numpy as np
from report import write_tables

from mpc.run import run
from mpc.runlog import PHASES


def parse_variant(text: str) -> tuple[str, list[str]]:
    name, _, rest = text.partition(":")
    return name, [kv for kv in rest.split(",") if kv]


def run_once(config: str, overrides: list[str], duration: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        summary = run(config, ["runtime.mode=lockstep", f"runtime.duration={duration}",
                               *overrides], out=tmp)
        timings = np.load(Path(tmp) / "timeseries.npz")["plan_timings"][1:]  # skip JIT warm-up
    return {"summary": summary, "timings": timings}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("config")
    p.add_argument("--variant", action="append", required=True,
                   help="NAME:KEY=VALUE,KEY=VALUE (config overrides)")
    p.add_argument("--duration", type=float, default=3.0)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--out", default="bench_results/planner")
    args = p.parse_args()
    variants = [parse_variant(v) for v in args.variant]
    timings = {name: [] for name, _ in variants}
    outcomes = {name: [] for name, _ in variants}
    for rep in range(args.repeats):
        for name, overrides in variants:
            r = run_once(args.config, overrides, args.duration)
            timings[name].append(r["timings"])
            outcomes[name].append(r["summary"])
            print(f"rep {rep} {name}: fell={r['summary']['fell']} "
                  f"goal {r['summary']['goal_distance_end_m']:.3f} m", flush=True)
    rows = []
    for name, _ in variants:
        t = np.concatenate(timings[name])
        ok = ~np.isnan(t).any(axis=1)
        med = np.median(t[ok], axis=0)
        s = outcomes[name]
        rows.append({"variant": name, **{f"{k}_ms": round(float(v), 2) for k, v in
                                          zip(PHASES, med, strict=False)},
                     "iterations": int(ok.sum()),
                     "falls": sum(x["fell"] for x in s),
                     "goal_end_m": round(float(np.median([x["goal_distance_end_m"]
                                                          for x in s])), 3)})
    meta = {"config": args.config, "duration_s": args.duration, "repeats": args.repeats,
            "variants": dict(variants), "cpus": os.cpu_count(), "loadavg": os.getloadavg()}
    print(write_tables(rows, Path(args.out), "planner", json.dumps(meta)))
    print(json.dumps(meta))


if __name__ == "__main__":
    main()
