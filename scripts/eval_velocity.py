"""Velocity tracking acceptance runs (issue: drive it), in lockstep, with Markdown and CSV tables.

    python scripts/eval_velocity.py                        # every robot, every measurement
    python scripts/eval_velocity.py --robots a1 --parts profile drift
    python scripts/eval_velocity.py --jobs 2               # runs in parallel processes

Per robot (configs/<robot>_velocity.yaml, its scripted profile and defaults):

  profile  the config's 20 s profile (quadrupeds: forward 0.5 then 1.0 m/s, sideways 0.3 m/s,
           yaw 0.8 rad/s, zero; H1: forward 0.3 m/s, turning 0.3 rad/s, zero). A steady second
           is a whole second [k, k+1) in which the filtered command does not change. For each
           one, the tracking error per axis is |mean over the second of (achieved − commanded)|,
           achieved being the base's body-frame (v_x, v_y, ω_z) sampled at 100 Hz; the table
           gives the worst steady second per axis (limits 0.1 m/s, 0.15 rad/s) and, for
           context, the worst mean absolute error of the samples themselves (which includes
           the gait's own sway within a stride).
  drift    zero command for 5 s: the largest horizontal distance of the base from its start
           (limit 0.05 m).
  top      forward commands v = 0.5, 0.75, 1.0, ... m/s from standing (max_speed raised to
           match): after the ramp at the config's acceleration limit, 5 s at v; the top speed
           is the largest v with no fall and a mean achieved forward speed over those 5 s of
           at least 0.9 v (stops at the first failure).
"""

from __future__ import annotations

import argparse
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from report import write_tables

from mpc.app.config import load_config
from mpc.app.run import run

ROBOTS = ("a1", "go1", "go2", "h1")
LIMITS = (0.1, 0.1, 0.15)
DRIFT_LIMIT = 0.05
TOP_SPEEDS = (0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0)
TOP_HOLD = 5.0


def config(robot: str) -> str:
    return f"configs/{robot}_velocity.yaml"


def lockstep(robot: str, overrides: list[str], duration: float) -> tuple[dict, dict]:
    with tempfile.TemporaryDirectory() as tmp:
        summary = run(config(robot), ["runtime.mode=lockstep", f"runtime.duration={duration}",
                                      *overrides], out=tmp)
        with np.load(Path(tmp) / "timeseries.npz") as npz:
            series = {k: npz[k] for k in npz.files}
    return summary, series


def steady_seconds(t: np.ndarray, c: np.ndarray) -> list[np.ndarray]:
    """The steady seconds of a run sampled at times ``t`` with filtered commands ``c``: a mask
    per whole second [k, k+1) (k + 1 ≤ the last sample's time, which sums of time steps put a
    rounding error short of the run's end) that holds at least 50 samples and in which the
    command does not change."""
    masks = [(t >= k) & (t < k + 1) for k in range(int(np.floor(t[-1] + 1e-6)))]
    return [m for m in masks if m.sum() >= 50 and np.ptp(c[m], axis=0).max() <= 1e-9]


def steady_errors(series: dict) -> tuple[np.ndarray, np.ndarray, int]:
    """Worst steady-second error per axis: of the second's mean, and mean absolute; count."""
    t, c, v = series["state_time"], series["state_command"], series["state_velocity"]
    mean_err, abs_err, n = np.zeros(3), np.zeros(3), 0
    for m in steady_seconds(t, c):
        n += 1
        e = v[m] - c[m]
        mean_err = np.maximum(mean_err, np.abs(e.mean(axis=0)))
        abs_err = np.maximum(abs_err, np.abs(e).mean(axis=0))
    return mean_err, abs_err, n


def part_profile(robot: str, extra: list[str]) -> dict:
    summary, series = lockstep(robot, extra, 20.0)
    mean_err, abs_err, n = steady_errors(series)
    ok = not summary["fell"] and n > 0 and bool(np.all(mean_err <= LIMITS))
    return {"robot": robot, "measurement": "20 s profile",
            "result": (f"{n} steady s; worst error vx {mean_err[0]:.3f}, vy {mean_err[1]:.3f} "
                       f"m/s, yaw {mean_err[2]:.3f} rad/s (samples' mean abs: "
                       f"{abs_err[0]:.2f}, {abs_err[1]:.2f}, {abs_err[2]:.2f})"),
            "fell": summary["fell_reason"] or "no", "pass": "yes" if ok else "NO",
            "wall_s": round(summary["wall_time_s"], 1)}


def part_drift(robot: str, extra: list[str]) -> dict:
    summary, series = lockstep(robot, ["command.source.profile=[[0, 0, 0, 0]]", *extra], 5.0)
    xy = series["state_qpos"][:, :2]
    drift = float(np.linalg.norm(xy - xy[0], axis=1).max())
    ok = not summary["fell"] and drift < DRIFT_LIMIT
    return {"robot": robot, "measurement": "zero command 5 s",
            "result": f"drift {drift * 100:.1f} cm (limit {DRIFT_LIMIT * 100:.0f} cm)",
            "fell": summary["fell_reason"] or "no", "pass": "yes" if ok else "NO",
            "wall_s": round(summary["wall_time_s"], 1)}


def part_top(robot: str, extra: list[str]) -> dict:
    best, detail, wall = None, [], 0.0
    accel = load_config(config(robot), extra).command.max_accel[0]
    for v in TOP_SPEEDS:
        ramp = 0.5 + v / accel
        summary, series = lockstep(robot, [
            f"command.source.profile=[[0, 0, 0, 0], [0.5, {v}, 0, 0]]",
            f"command.max_speed=[{v}, 0.5, 1.0]", *extra], ramp + TOP_HOLD)
        wall += summary["wall_time_s"]
        t, vel = series["state_time"], series["state_velocity"]
        achieved = float(vel[t >= ramp, 0].mean()) if not summary["fell"] else float("nan")
        detail.append(f"{v:g}: {'fell' if summary['fell'] else f'{achieved:.2f}'}")
        if summary["fell"] or achieved < 0.9 * v:
            break
        best = v
    return {"robot": robot, "measurement": "top forward speed for 5 s",
            "result": (f"{best:g} m/s" if best else "< 1 m/s") + f" (commanded: achieved "
                      f"{'; '.join(detail)})",
            "fell": "-", "pass": "-", "wall_s": round(wall, 1)}


PARTS = {"profile": part_profile, "drift": part_drift, "top": part_top}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--robots", nargs="*", default=list(ROBOTS), choices=ROBOTS)
    p.add_argument("--parts", nargs="*", default=list(PARTS), choices=list(PARTS))
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="config override for every run")
    p.add_argument("--jobs", type=int, default=1, help="runs in parallel processes")
    p.add_argument("--out", default="bench_results/velocity")
    args = p.parse_args()
    jobs = [(part, robot) for robot in args.robots for part in args.parts
            if not (part == "top" and robot == "h1")]
    with ProcessPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(PARTS[part], robot, args.set) for part, robot in jobs]
        rows = []
        for f in futures:
            rows.append(f.result())
            print(rows[-1], flush=True)
    print(write_tables(rows, Path(args.out), "velocity"))


if __name__ == "__main__":
    main()
