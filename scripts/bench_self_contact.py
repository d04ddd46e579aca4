"""Accuracy of the analytic backend at self-contact states of the shipped robots.

For every robot's planning model with self-collisions on (``planner.self_collision``) and its
task's sensors: the self-contact states of ``tests/analytic_verify.py``
(:func:`self_contact_state`, seeds 0-2, feet pressed into the floor and lifted clear of it),
Euler and implicitfast, the worst relative Frobenius error of A and B against centered
``mjd_transitionFD`` at solver tolerance 1e-12, the contact pairs seen, and a check that no
finite difference entered the analytic result.

    .venv/bin/python scripts/bench_self_contact.py [--seeds 3]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import mujoco

import derivatives
import robots
from mpc.tasks import make_task

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import analytic_verify as verify

TASKS = {"a1": "quadruped_flat", "go1": "quadruped_flat", "go2": "quadruped_flat",
         "h1": "humanoid_flat"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()}")
    print("| model | self-contact states | worst relative error | contact pairs |")
    print("|---|---|---|---|")
    for robot in robots.available():
        task = make_task(TASKS.get(robot, "quadruped_flat"), robots.info(robot))
        base = task.planning_model(0.01, self_collision=True)
        worst, count, pairs = 0.0, 0, set()
        for integrator in ("euler", "implicitfast"):
            m = verify.oracle_model(base, integrator)
            provider = derivatives.make_provider("analytic", m, threads=1)
            for seed in range(args.seeds):
                for floor in (True, False):
                    d = verify.self_contact_state(m, seed, floor)
                    pairs |= {"-".join(mujoco.mjtGeom(m.geom_type[g]).name[7:].lower()
                                       for g in d.contact.geom[i]) for i in range(d.ncon)
                              if m.body_weldid[m.geom_bodyid[d.contact.geom[i, 0]]] != 0}
                    before = derivatives.fd_evaluations()
                    A, B = provider.transition(d)
                    if derivatives.fd_evaluations() != before:
                        raise AssertionError(f"{robot}: finite differences in the analytic path")
                    A_ref, B_ref = verify.centered_fd(m, d)
                    worst = max(worst, verify.relative_error(A, A_ref),
                                verify.relative_error(B, B_ref))
                    count += 1
        print(f"| {robot} | {count} | {worst:.1e} | {', '.join(sorted(pairs))} |", flush=True)
    print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
