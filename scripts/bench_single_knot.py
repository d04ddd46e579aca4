"""The analytic backend's single-knot call against its horizon kernel, per knot, side by side.

For the A1 and H1 planning models (with their task's sensors): 36 knots of a simulated trot
start; per repetition, interleaved, (a) one ``horizon`` call over the 36 knots (1 thread) and
(b) 36 single-knot calls ``linearize(data, A, B, C, D)`` on the caller's data holding each knot
in turn (put there untimed: what a user's code does), and (c) 36 ``transition(data)`` calls
(A, B only, fresh arrays).
Medians over repetitions, microseconds per knot, and the ratios (b)/(a), (c)/(a).

    .venv/bin/python scripts/bench_single_knot.py [--reps N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import mujoco
import numpy as np

import derivatives
import robots
from derivatives.provider_base import Linearization, load_knot
from mpc.tasks import make_task

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_derivatives import HORIZON, TASKS, rollout


def variants(m: mujoco.MjModel) -> dict:
    """Each variant linearizes the 36 knots and returns the seconds it spent in the calls
    measured: the horizon call, or the single-knot calls (each knot is put into the caller's
    ``MjData`` and forwarded outside the timing, as a user's code holds its own state)."""
    traj = rollout(m, HORIZON)
    knots = list(range(HORIZON))
    horizon_provider = derivatives.make_provider("analytic", m, threads=1)
    single_provider = derivatives.make_provider("analytic", m, threads=1)
    out = Linearization.allocate(m, HORIZON)
    single = Linearization.allocate(m, HORIZON)
    d = mujoco.MjData(m)

    def horizon() -> float:
        t0 = time.perf_counter()
        horizon_provider.horizon(traj, knots, out)
        return time.perf_counter() - t0

    def one_by_one(call) -> float:
        total = 0.0
        for t in knots:
            load_knot(d, traj, t)
            mujoco.mj_forward(m, d)
            t0 = time.perf_counter()
            call(t)
            total += time.perf_counter() - t0
        return total

    def linearize() -> float:
        return one_by_one(lambda t: single_provider.linearize(d, single.A[t], single.B[t],
                                                              single.C[t], single.D[t]))

    def transition() -> float:
        return one_by_one(lambda t: single_provider.transition(d))

    return {"horizon": horizon, "linearize": linearize, "transition": transition}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    for robot in ("a1", "h1"):
        task = make_task(TASKS[robot], robots.info(robot))
        calls = variants(task.planning_model(0.01))
        for f in calls.values():  # compile, warm caches
            f()
            f()
        times = {k: [] for k in calls}
        for _ in range(args.reps):
            for name, f in calls.items():
                times[name].append(f() / HORIZON)
        med = {k: float(np.median(v)) * 1e6 for k, v in times.items()}
        print(f"{robot}: " + ", ".join(f"{k} {v:.1f} us/knot" for k, v in med.items())
              + f"; linearize/horizon {med['linearize'] / med['horizon']:.3f}, "
              f"transition/horizon {med['transition'] / med['horizon']:.3f}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
