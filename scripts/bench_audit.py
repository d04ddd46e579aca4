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

from mpc.config import load_config
from mpc.runtime.lockstep import run_lockstep
from mpc.runtime.session import Session


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
                                    f"derivatives.audit.every={args.every}"])
    session = Session(cfg, out)
    audit = session.audit
    plan = session.plan
    blocks: list[tuple[bool, list[float]]] = []
    count = 0

    def alternating(state):
        nonlocal count
        on = (count // args.block) % 2 == 0
        if count % args.block == 0:
            blocks.append((on, []))
        count += 1
        session.audit = audit if on else None
        stats = plan(state)
        if stats.status == "ok" and count > 1:  # the first iteration compiles
            blocks[-1][1].append(stats.timings["total"])
        return stats

    session.plan = alternating
    run_lockstep(session, args.duration)
    session.audit = audit
    summary = session.close("lockstep")
    on = [t for flag, ts in blocks if flag for t in ts]
    off = [t for flag, ts in blocks if not flag for t in ts]
    pairs = [np.median(a[1]) / np.median(b[1]) for a, b in zip(blocks[::2], blocks[1::2],
                                                                 strict=False) if a[1] and b[1]]
    med_on, med_off = float(np.median(on)), float(np.median(off))
    print(f"iterations: {len(on)} with the audit on, {len(off)} off, blocks of {args.block}")
    print(f"median iteration: audit on {med_on:.2f} ms, off {med_off:.2f} ms, ratio on/off "
          f"{med_on / med_off:.3f}; median of {len(pairs)} block-pair ratios "
          f"{float(np.median(pairs)):.3f}")
    print(f"audit: {summary['derivative_audit']}; fell {summary['fell']}")
    print(f"load average after: {os.getloadavg()}; run directory {out}")


if __name__ == "__main__":
    main()
