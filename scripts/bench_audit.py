"""Planner iteration time with the derivative audit on and off, side by side in one run.

Runs ``configs/a1_trot.yaml`` (analytic backend, lockstep) for ``--duration`` seconds with the
audit configured (``derivatives.audit.every`` = ``--every``) and switches it on and off in
alternating blocks of ``--block`` planner iterations (a block on, a block off, ...), so that
both see the same machine load and the same phase of the gait. Prints the median planner
iteration time (the planner's own ``total`` timing) of the on and off blocks, their ratio, the
median of the per-pair ratios, the load average, and the audit's statistics; the run directory
holds ``audit.csv`` and ``audit.png``.

The worker of a check started late in an on block may still run in the next off block, which
charges part of its cost to "off": the ratio is a lower bound when checks are slower than a
block.

    .venv/bin/python scripts/bench_audit.py [--duration 10] [--every 10] [--block 50] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import numpy as np

from mpc.app.config import load_config
from mpc.app.observers.observer_base import Observer, PlanReport
from mpc.app.run import run
from mpc.app.runtime.session import Session


class Alternate(Observer):
    """Switches the session's audit off and on in blocks of ``block`` planner iterations, from
    the iteration after each report, and keeps each iteration's time under the setting it ran
    with. The last ``block`` iterations run with the audit on, so that the run ends with it
    (its worker joined, ``audit.csv`` written)."""

    def __init__(self, session: Session, block: int, iterations: int):
        self.session, self.audit, self.block, self.iterations = session, session.audit, block, \
            iterations
        self.count = 0
        self.blocks: list[tuple[bool, list[float]]] = [(True, [])]

    def on_plan(self, report: PlanReport) -> None:
        if report.stats.status == "ok" and self.count > 0:  # the first iteration compiles
            self.blocks[-1][1].append(report.stats.timings["total"])
        self.count += 1
        if self.count % self.block == 0:
            on = not self.blocks[-1][0] or self.count >= self.iterations - self.block
            self.blocks.append((on, []))
            self.session.audit = self.audit if on else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/a1_trot.yaml")
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--block", type=int, default=50)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="bench_audit_"))
    print(f"load average before: {os.getloadavg()}")
    cfg = load_config(args.config, ["runtime.mode=lockstep", "derivatives.backend=analytic",
                                    f"derivatives.audit.every={args.every}",
                                    f"runtime.duration={args.duration}"])
    dt = cfg.plant.get("timestep", 0.002)
    plan_every = max(1, round(1.0 / (cfg.runtime.planning_rate * dt)))
    iterations = -(-round(args.duration / dt) // plan_every)  # lockstep plans at step 0, k, 2k
    observers: list[Alternate] = []

    def alternate(session: Session) -> Alternate:
        observers.append(Alternate(session, args.block, iterations))
        return observers[-1]

    summary = run(cfg, out=out, observers=[alternate])
    blocks = observers[0].blocks
    on = [t for flag, ts in blocks if flag for t in ts]
    off = [t for flag, ts in blocks if not flag for t in ts]
    pairs = [np.median(a[1]) / np.median(b[1]) for a, b in zip(blocks[::2], blocks[1::2],
                                                                 strict=False)
             if a[0] and not b[0] and a[1] and b[1]]
    med_on, med_off = float(np.median(on)), float(np.median(off))
    print(f"iterations: {len(on)} with the audit on, {len(off)} off, blocks of {args.block}")
    print(f"median iteration: audit on {med_on:.2f} ms, off {med_off:.2f} ms, ratio on/off "
          f"{med_on / med_off:.3f}; median of {len(pairs)} block-pair ratios "
          f"{float(np.median(pairs)):.3f}")
    print(f"audit: {summary['derivative_audit']}; fell {summary['fell']}")
    print(f"load average after: {os.getloadavg()}; run directory {out}")


if __name__ == "__main__":
    main()
