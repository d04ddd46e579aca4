"""Analytic derivatives of a sphere against a static box: accuracy by region and per-knot cost
against a plane, side by side in one process.

Accuracy: states of ``tests/derivatives/analytic/box_models.py`` (a free sphere over a box,
world-aligned and turned, one state per seed with a contact of each region: top face, side
face, edge, corner, centre inside; pyramidal condim 6; the Go2's planning model with a box only
its feet touch, one foot on it); relative Frobenius error of A and B against centered
``mjd_transitionFD`` (Newton at tolerance 1e-12) with steps 1e-7 and 1e-6, and the
finite-difference evaluations the analytic provider spent (must be 0).

Cost: the Go2's planning model with its task's sensors (10 ms step), the standing keyframe 3 mm
deep, small random velocities, the same state in every model: on its floor plane; on the top
of a large box standing in for the floor (the plane out of reach: four face contacts); and
with each foot over an edge, then over a corner, of a box of its own (four edge or corner
contacts, the same depth). The analytic provider's ``linearize`` (forward pass and closed form,
sensors included, one thread) and ``mj_forward`` alone, medians of interleaved repetitions.

    .venv/bin/python scripts/bench_sphere_box.py [--reps N] [--seeds N] [--skip-accuracy]

On a shared machine only the ratios measured in one run mean anything.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

import mujoco
import numpy as np

import derivatives
import robots
from mpc.tasks import make_task
from robots.collision import ground_contacts_only

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "scripts"), str(ROOT / "tests"),
                str(ROOT / "tests" / "derivatives" / "analytic")]
import analytic_verify as verify  # noqa: E402
import box_models as bm  # noqa: E402
from bench_derivatives import TASKS, interleaved, knot_calls  # noqa: E402

_G = mujoco.mjtGeom
#: Depth (m) of every foot contact in the cost comparison.
DEPTH = 0.003


def _errors(m: mujoco.MjModel, d: mujoco.MjData, provider, worst: dict) -> None:
    A, B = provider.transition(d)
    for eps, w in worst.items():
        A_ref, B_ref = verify.centered_fd(m, d, eps)
        w[0] = max(w[0], verify.relative_error(A, A_ref))
        w[1] = max(w[1], verify.relative_error(B, B_ref))


def accuracy(seeds: int) -> None:
    print("\n## Accuracy: worst relative error of A, B against centered differences\n")
    print("| states | contacts on the box, by region | n | eps 1e-7: A / B | eps 1e-6: A / B "
          "| fd evaluations |")
    print("|---|---|---|---|---|---|")
    worst_all = 0.0
    total = 0
    groups = [("free sphere, aligned box, elliptic condim 3", ("elliptic", 3, False), seeds),
              ("free sphere, turned box, elliptic condim 3", ("elliptic", 3, True), seeds),
              ("free sphere, turned box, pyramidal condim 6", ("pyramidal", 6, True), 1)]
    for name, args, n in groups:
        m = bm.ball_model(*args)
        states = [bm.ball_state(m, cat, seed) for cat in bm.CATEGORIES for seed in range(n)]
        worst_all = max(worst_all, _group(name, m, states, lambda d: d))
        total += len(states)
    m = bm.robot_model("go2")
    states = [(cat, seed, turned) for cat in bm.CATEGORIES[:4] for seed in range(seeds)
              for turned in (False, True)]
    # each robot state moves the box in the model: make it just before it is differentiated
    worst_all = max(worst_all, _group("go2 planning model, one foot on a box (aligned and "
                                      "turned)", m, states,
                                      lambda s: bm.robot_state(m, s[0], s[1], turned=s[2])))
    total += len(states)
    print(f"\n{total} states, worst relative error {worst_all:.1e} (eps 1e-7)")


def _group(name: str, m: mujoco.MjModel, states: list, make) -> float:
    counts: dict[str, int] = {}
    worst = {1e-7: [0.0, 0.0], 1e-6: [0.0, 0.0]}
    before = derivatives.fd_evaluations()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        provider = derivatives.make_provider("analytic", m, threads=1)
    for s in states:
        d = make(s)
        for c in range(d.ncon):
            kind = bm.category(m, d, c)
            if kind is not None:
                counts[kind] = counts.get(kind, 0) + 1
        _errors(m, d, provider, worst)
    spent = derivatives.fd_evaluations() - before
    by = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    print(f"| {name} | {by} | {len(states)} | {worst[1e-7][0]:.1e} / {worst[1e-7][1]:.1e} "
          f"| {worst[1e-6][0]:.1e} / {worst[1e-6][1]:.1e} | {spent} |")
    return max(worst[1e-7])


def _box_ground(robot: str, task, feet: list[str], places: list[tuple]) -> mujoco.MjModel:
    """The planning model with its floor plane out of reach (1 m down) and one static box per
    entry of ``places`` ((centre, half sizes)) with the floor's contact parameters; only the
    feet touch the boxes."""
    spec = robots.planning_spec(robot)
    spec.option.timestep = 0.01
    task.add_sensors(spec)
    floor = next(g for g in spec.worldbody.geoms if g.type == _G.mjGEOM_PLANE)
    for i, (centre, half) in enumerate(places):
        box = spec.worldbody.add_body(name=f"box{i}", pos=list(centre)).add_geom(
            name=f"box{i}", type=_G.mjGEOM_BOX, size=list(half))
        for attr in ("condim", "friction", "solref", "solimp", "solmix", "margin", "gap",
                     "priority"):
            setattr(box, attr, getattr(floor, attr))
    floor.pos = [0.0, 0.0, -1.0]
    model = spec.compile()
    ground_contacts_only(model)
    for i in range(len(places)):
        g = model.geom(f"box{i}").id
        model.geom_contype[g], model.geom_conaffinity[g] = bm.BOX_BIT, 0
    for name in feet:
        model.geom_conaffinity[model.geom(name).id] |= bm.BOX_BIT
    return model


def cost(reps: int) -> None:
    print(f"\n## Per-knot cost, box / plane (load average {os.getloadavg()})\n")
    print("| robot | ground | contacts | linearize us | ratio to plane | mj_forward us "
          "| ratio to plane |")
    print("|---|---|---|---|---|---|---|")
    robot = "go2"
    task = make_task(TASKS[robot], robots.info(robot))
    plane = task.planning_model(0.01)
    feet = list(robots.info(robot).feet)
    # the state: the keyframe with its lowest foot DEPTH deep in the plane
    d = mujoco.MjData(plane)
    mujoco.mj_resetDataKeyframe(plane, d, 0)
    mujoco.mj_kinematics(plane, d)
    foot_ids = [plane.geom(f).id for f in feet]
    radius = plane.geom_size[foot_ids[0], 0]
    d.qpos[2] -= d.geom_xpos[foot_ids, 2].min() - (radius - DEPTH)
    mujoco.mj_kinematics(plane, d)
    d.qvel[:] = 0.05 * np.random.default_rng(0).standard_normal(plane.nv)
    centres = d.geom_xpos[foot_ids].copy()
    reach = radius - DEPTH
    half = np.array([0.1, 0.1, 0.1])
    edge = reach * np.array([np.sqrt(0.5), 0.0, np.sqrt(0.5)])
    corner = reach * np.full(3, np.sqrt(1.0 / 3.0))
    grounds = {
        "floor plane": plane,
        "top of a large box": _box_ground(robot, task, feet,
                                          [((0.0, 0.0, -0.5), (2.0, 2.0, 0.5))]),
        "each foot over a box's edge": _box_ground(
            robot, task, feet, [(c - edge - half * [1, 0, 1], half) for c in centres]),
        "each foot over a box's corner": _box_ground(
            robot, task, feet, [(c - corner - half, half) for c in centres]),
    }
    calls = {}
    ncon = {}
    for name, m in grounds.items():
        s = mujoco.MjData(m)
        s.qpos[:], s.qvel[:], s.ctrl[:] = d.qpos, d.qvel, d.ctrl
        verify.settle_solver(m, s)
        kinds = sorted({bm.category(m, s, c) or "plane" for c in range(s.ncon)})
        ncon[name] = f"{s.ncon} ({', '.join(kinds)})"
        calls.update(knot_calls(name, m, s))
    before = derivatives.fd_evaluations()
    t = interleaved(calls, reps)
    assert derivatives.fd_evaluations() == before, "a finite-difference fallback was used"
    for name in grounds:
        lin, fwd = t[f"lin {name}"], t[f"fwd {name}"]
        print(f"| {robot} | {name} | {ncon[name]} | {lin * 1e6:.0f} | "
              f"{lin / t['lin floor plane']:.2f} | {fwd * 1e6:.0f} | "
              f"{fwd / t['fwd floor plane']:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--skip-accuracy", action="store_true")
    args = parser.parse_args()
    print(f"MuJoCo {mujoco.__version__}")
    if not args.skip_accuracy:
        accuracy(args.seeds)
    cost(args.reps)


if __name__ == "__main__":
    main()
