"""Acceptance runs for Go1, Go2 and H1 (issue 5), in lockstep, with a Markdown and CSV table.

    python scripts/eval_robots.py                              # every case, fd backend
    python scripts/eval_robots.py --cases go1_trot go2_trot --backends fd analytic wasp

Cases and what passes:
  go1_trot, go2_trot  10 s: no fall, base within 0.25 m of the goal 2 m ahead at the end.
  go1_biped           15 s: no fall, the body axis reaches 20° from vertical and then stays
                      within 30° of it for at least 10 s.
  h1_stand            20 s: no fall.
  h1_trot             25 s: stepping in place for the first 10 s (no fall, each foot leaves the
                      ground at least 5 times), then within 0.3 m of the goal 1 m ahead at the end.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from report import write_tables

from mpc.app.run import run
from mpc.tasks.task_base import base_axes

REACHED_DEG = 20.0
HELD_DEG = 30.0


@dataclass(frozen=True)
class Case:
    config: str
    duration: float
    #: (summary, time series) -> (passed, what was measured)
    judge: Callable[[dict, dict], tuple[bool, str]]


def reach_goal(tolerance: float) -> Callable[[dict, dict], tuple[bool, str]]:
    def judge(summary: dict, series: dict) -> tuple[bool, str]:
        end = summary["goal_distance_end_m"]
        return (not summary["fell"] and end < tolerance,
                f"end {end:.3f} m from the goal (limit {tolerance} m)")
    return judge


def two_leg_posture(summary: dict, series: dict) -> tuple[bool, str]:
    """Body (base x) axis angle from vertical: when it first comes within REACHED_DEG, and for
    how long after that it stays within HELD_DEG."""
    t, qpos = series["state_time"], series["state_qpos"]
    angle = np.degrees(np.arccos(np.clip([base_axes(q)[2, 0] for q in qpos], -1.0, 1.0)))
    reached = np.flatnonzero(angle < REACHED_DEG)
    if len(reached) == 0:
        return False, f"never within {REACHED_DEG:.0f} deg of vertical (best {angle.min():.0f})"
    start = reached[0]
    lost = np.flatnonzero(angle[start:] > HELD_DEG)
    end = start + lost[0] if len(lost) else len(t) - 1
    held = t[end] - t[start]
    return (not summary["fell"] and held >= 10.0,
            f"up at {t[start]:.2f} s, held {held:.2f} s (axis within {HELD_DEG:.0f} deg)")


def stand(summary: dict, series: dict) -> tuple[bool, str]:
    qpos = series["state_qpos"]
    drift = np.linalg.norm(qpos[:, :2] - qpos[0, :2], axis=1).max()
    return not summary["fell"], f"max drift {drift:.3f} m"


def step_then_walk(summary: dict, series: dict) -> tuple[bool, str]:
    t, qpos, contacts = series["state_time"], series["state_qpos"], series["state_contacts"]
    before = t < 10.0
    lifts = (np.diff(contacts[before].astype(int), axis=0) == -1).sum(axis=0)
    drift = np.linalg.norm(qpos[before, :2] - qpos[0, :2], axis=1).max()
    end = summary["goal_distance_end_m"]
    stepped = t[-1] >= 10.0 and bool(np.all(lifts >= 5))
    return (not summary["fell"] and stepped and end < 0.3,
            f"0-10 s: foot lifts {lifts.tolist()}, drift {drift:.3f} m; end {end:.3f} m from "
            f"the goal (limit 0.3 m)")


CASES = {
    "go1_trot": Case("configs/go1_trot.yaml", 10.0, reach_goal(0.25)),
    "go2_trot": Case("configs/go2_trot.yaml", 10.0, reach_goal(0.25)),
    "go1_biped": Case("configs/go1_biped.yaml", 15.0, two_leg_posture),
    "h1_stand": Case("configs/h1_stand.yaml", 20.0, stand),
    "h1_trot": Case("configs/h1_trot.yaml", 25.0, step_then_walk),
}


def run_case(name: str, backend: str, extra: list[str]) -> dict:
    case = CASES[name]
    with tempfile.TemporaryDirectory() as tmp:
        summary = run(case.config, ["runtime.mode=lockstep", f"derivatives.backend={backend}",
                                    f"runtime.duration={case.duration}", *extra], out=tmp)
        with np.load(Path(tmp) / "timeseries.npz") as npz:
            series = {k: npz[k] for k in npz.files}
    passed, measured = case.judge(summary, series)
    return {"case": name, "backend": backend, "sim_s": round(summary["sim_time_s"], 2),
            "fell": summary["fell_reason"] or "no", "measured": measured,
            "pass": "yes" if passed else "NO",
            "iteration_ms": round(summary["iteration_ms_median"], 1),
            "failed_iterations": summary["failed_iterations"],
            "wall_s": round(summary["wall_time_s"], 1)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", nargs="*", default=list(CASES), choices=list(CASES))
    p.add_argument("--backends", nargs="*", default=["fd"])
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="config override for every case")
    p.add_argument("--out", default="bench_results/robots")
    args = p.parse_args()
    rows = []
    for name in args.cases:
        for backend in args.backends:
            rows.append(run_case(name, backend, args.set))
            print(rows[-1], flush=True)
    print(write_tables(rows, Path(args.out), "robots"))


if __name__ == "__main__":
    main()
