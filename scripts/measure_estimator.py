"""The estimator's whole measurement: loopback runs per robot, and the table of docs/estimation.md.

    .venv/bin/python scripts/measure_estimator.py [--repeats 10] [--robots a1 go1 go2 h1]
        [--port 18307] [--domain 87] [--write-docs]

Runs ``scripts/hw_loopback.py`` (default base state: the configs' Kalman filter on the fake
robots' realistic sensors) ``--repeats`` times per robot: the quadrupeds trot toward a goal
2 m ahead for 15 s, the H1 stands for 30 s. A run succeeds when the fake robot stood, did not
fall, was not put in damping, and (quadrupeds) ended within 0.25 m of the goal by the
simulation's truth. Prints a Markdown table (successes, medians of the estimator's errors
against the truth, the machine's load); ``--write-docs`` puts it in docs/estimation.md between
the ``estimator-loopback`` markers. Realtime: CPU-bound, so the load is part of the result.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DURATION = {"a1": 15.0, "go1": 15.0, "go2": 15.0, "h1": 30.0}
BEGIN, END = "<!-- estimator-loopback:begin -->", "<!-- estimator-loopback:end -->"


def runs(robot: str, repeats: int, port: int, domain: int) -> list[dict]:
    cmd = [sys.executable, "scripts/hw_loopback.py", "--robot", robot, "--repeats",
           str(repeats), "--duration", str(DURATION[robot]), "--port", str(port),
           "--domain", str(domain), "--truth-port", str(port + 13)]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def success(r: dict) -> bool:
    fake = r["fake"] if isinstance(r["fake"], dict) else {}
    ok = r["mpc_exit"] == 0 and fake.get("stood") and not fake.get("fell")
    if r["robot"] != "h1":
        ok = ok and (r.get("true_goal_distance_m") or np.inf) <= 0.25
    return bool(ok)


def row(robot: str, results: list[dict], load: str) -> str:
    est = [r.get("estimation") or {} for r in results]
    med = lambda k: (f"{np.median([e[k] for e in est if k in e]):.3g}"  # noqa: E731
                     if any(k in e for e in est) else "-")
    goal = [r.get("true_goal_distance_m") for r in results if r.get("true_goal_distance_m")]
    hz = [r["mpc"]["planning_rate_hz"] for r in results if r.get("mpc")]
    return (f"| {robot} | {sum(map(success, results))}/{len(results)} | "
            f"{np.median(goal) if goal else '-'} | {med('vel_rms_mps')} | "
            f"{med('height_rms_m')} | {med('roll_pitch_rms_deg')} | {med('xy_drift_m')} | "
            f"{med('yaw_drift_deg')} | {np.median(hz) if hz else '-'} | {load} |")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--robots", nargs="+", default=["a1", "go1", "go2", "h1"])
    p.add_argument("--port", type=int, default=18307)
    p.add_argument("--domain", type=int, default=87)
    p.add_argument("--write-docs", action="store_true")
    args = p.parse_args()
    lines = ["| robot | success | true goal distance (m, median) | velocity RMS (m/s) | "
             "height RMS (m) | roll/pitch RMS (deg) | xy drift (m) | yaw drift (deg) | "
             "planning Hz | load (1 min) |", "|" + "---|" * 10]
    for robot in args.robots:
        results = runs(robot, args.repeats, args.port, args.domain)
        load = f"{os.getloadavg()[0]:.1f}"
        lines.append(row(robot, results, load))
        print(lines[-1], flush=True)
    table = "\n".join(lines)
    print(table)
    if args.write_docs:
        page = ROOT / "docs" / "estimation.md"
        text = page.read_text()
        start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
        page.write_text(text[:start] + "\n" + table + "\n" + text[end:])
    return 0


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
