"""The Kalman filter's cost per update, variants side by side on the same recorded inputs.

    .venv/bin/python scripts/bench_estimator.py [--blocks 20] [--block 200]

Replays the inputs the A1's filter saw climbing its 8 cm flight on the deploy path
(tests/hardware/estimation/data/stairs_reference.npz: IMU, encoders, planned stance) through
one filter per variant: ``carried`` (``ground: carried``) and ``map`` (``ground: map`` on the
flight's map). The variants take turns, a block of updates each, so a change in the machine's
load falls on both; prints each variant's median microseconds per update over the blocks and
the median of the per-block ratio map / carried, with the load average (the machines here
differ by 2x: compare ratios).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

import robots
from hardware.estimation.base_state import ImuSample
from hardware.estimation.sources import make_source

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "hardware" / "estimation" / "data" / "stairs_reference.npz"
MAP = ROOT / "configs" / "maps" / "stairs_8cm.yaml"
VARIANTS = {"carried": {"ground": "carried"}, "map": {"ground": "map", "map": str(MAP)}}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--blocks", type=int, default=20, help="blocks per variant")
    p.add_argument("--block", type=int, default=200, help="updates per block")
    args = p.parse_args()
    data = dict(np.load(DATA))
    info, model = robots.info("a1"), robots.load_planning_model("a1")
    sources = {name: make_source({"type": "kalman", **options}, model, info)
               for name, options in VARIANTS.items()}
    per_update = {name: [] for name in sources}
    n = len(data["imu"])
    for b in range(args.blocks):
        # the recording again from its start once it runs out (a filter that restarts its
        # inputs' clock holds its state: each update's dt is clamped at 0)
        rows = [(b * args.block + k) % n for k in range(args.block)]
        for name, source in sources.items():
            start = time.perf_counter()
            for k in rows:
                imu, planned = data["imu"][k], data["planned"][k]
                source.set_planned_stance(None if planned[0] < 0 else planned > 0.5)
                source.update(ImuSample(imu[0], imu[1:5], imu[5:8], imu[8:11]),
                              data["q"][k], data["dq"][k])
            per_update[name].append((time.perf_counter() - start) / args.block * 1e6)
    for name, times in per_update.items():
        print(f"{name:8s} {np.median(times):7.1f} us per update (median of {args.blocks} blocks)")
    ratio = np.array(per_update["map"]) / np.array(per_update["carried"])
    print(f"map / carried: {np.median(ratio):.3f} (load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
