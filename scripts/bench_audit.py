"""Planner iteration time with the derivative audit on and off, side by side.

Runs ``configs/a1_trot.yaml`` (analytic backend, lockstep) for ``--duration`` seconds with
``derivatives.audit.every`` = 0 and = ``--every``, alternating the order in every repetition,
and prints the median iteration time of each run, the medians over repetitions and their
ratio, and the audit's statistics. Lockstep: the planner's wall time per iteration is what the
audit could delay; the plant waits for the plan.

    .venv/bin/python scripts/bench_audit.py [--reps 3] [--duration 10] [--every 10] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import numpy as np

from mpc.run import run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/a1_trot.yaml")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="bench_audit_"))
    print(f"load average before: {os.getloadavg()}")
    variants = {"off": ["derivatives.audit.every=0"],
                "on": [f"derivatives.audit.every={args.every}"]}
    times: dict[str, list[float]] = {k: [] for k in variants}
    for rep in range(args.reps):
        order = list(variants) if rep % 2 == 0 else list(variants)[::-1]
        for name in order:
            summary = run(args.config, ["runtime.mode=lockstep", "derivatives.backend=analytic",
                                        f"runtime.duration={args.duration}", *variants[name]],
                          out=out / f"{name}_{rep}")
            times[name].append(summary["iteration_ms_median"])
            audit = summary.get("derivative_audit")
            print(f"rep {rep} audit {name}: iteration median {summary['iteration_ms_median']:.2f}"
                  f" ms, fell {summary['fell']}" + (
                      f", {audit['checks']} checks, {audit['skipped']} skipped, worst smooth "
                      f"error {audit['worst_smooth_error']}, disagreements "
                      f"{audit['disagreements']}" if audit else ""), flush=True)
    off, on = float(np.median(times["off"])), float(np.median(times["on"]))
    print(f"median iteration: audit off {off:.2f} ms, on {on:.2f} ms, ratio on/off {on / off:.3f}")
    print(f"load average after: {os.getloadavg()}; run directories in {out}")


if __name__ == "__main__":
    main()
