"""Closed-loop acceptance runs: goals in several directions and standing, in lockstep.

    python scripts/eval_goals.py configs/a1_trot.yaml --duration 10 --backend fd

For each goal (ahead, sideways, diagonal, behind, a waypoint list) and for standing, runs
``mpc-run``'s lockstep loop and reports whether the robot fell and how far from the goal it
ended. Writes Markdown and CSV tables to --out.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from report import write_tables

from mpc.app.config import load_config
from mpc.app.run import run

CASES = {
    "ahead 2 m": ["task.goal=[2.0, 0.0]"],
    "sideways 2 m": ["task.goal=[0.0, 2.0]"],
    "diagonal 2.8 m": ["task.goal=[2.0, -2.0]"],
    "behind 2 m": ["task.goal=[-2.0, 0.0]"],
    "behind-left 3 m": ["task.goal=[-2.1, 2.1]"],
    "waypoints": ["task.goal=[[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]"],
    "stand": ["task.gait=stand", "task.goal=[0.0, 0.0]"],
}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("config")
    p.add_argument("--duration", type=float, default=10.0)
    p.add_argument("--backend", default=None)
    p.add_argument("--cases", nargs="*", default=list(CASES))
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--out", default="bench_results/goals")
    args = p.parse_args()
    extra = list(args.set) + ([f"derivatives.backend={args.backend}"] if args.backend else [])
    rows = []
    for case in args.cases:
        cfg = load_config(args.config, ["runtime.mode=lockstep",
                                         f"runtime.duration={args.duration}", *extra,
                                         *CASES[case]])
        with tempfile.TemporaryDirectory() as tmp:
            s = run(cfg, out=tmp)
        rows.append({"case": case, "goal": json.dumps(cfg.task["goal"]),
                     "backend": s["backend"], "sim_s": s["sim_time_s"], "fell": s["fell"],
                     "start_m": s["goal_distance_start_m"], "end_m": s["goal_distance_end_m"],
                     "iteration_ms": round(s["iteration_ms_median"], 1),
                     "mean_cost": round(s["mean_cost"], 4)})
        print(rows[-1], flush=True)
    print(write_tables(rows, Path(args.out), "goals"))


if __name__ == "__main__":
    main()
