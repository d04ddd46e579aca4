"""Analytic derivatives on height fields: accuracy by contact feature and per-knot cost against a
plane, side by side in one process.

Accuracy: states of ``tests/derivatives/analytic/hfield_models.py`` (a free sphere and a free
capsule on a bumpy field with a slope and a step, one state per seed with a contact of each
prism feature, elliptic and pyramidal condim 6; the A1, Go1 and Go2 planning models standing on
a height-field floor); relative Frobenius error of A and B against centered
``mjd_transitionFD`` (Newton at tolerance 1e-12) with steps 1e-7 and 1e-6, and the
finite-difference evaluations the analytic provider spent (must be 0).

Cost: the A1 and Go1 planning models with their task's sensors (10 ms step) on their floor
plane and on a flat height field (5 cm cells) at the same height, the same state in both
(standing keyframe 3 mm deep, small random velocities): the analytic provider's
``linearize`` (forward pass and closed form, sensors included, one thread) and ``mj_forward``
alone, medians of interleaved repetitions. Placements: the base pose that keeps the feet
farthest from cell borders and diagonals (as few contacts as the field allows), and random
placements (a foot near a cell border gets two contacts, near a sample point up to six: MuJoCo
reports one contact per prism the foot's sphere enters, so on a flat field a foot has as many
identical contacts as prisms under it). Last, the same contact set on both: a field of
0.37 m cells (each foot inside one triangle: one contact per foot, as on the plane), which
separates the derivatives' own cost per height-field contact from the number of contacts
MuJoCo makes. Each field placement twice: with MuJoCo's contacts and with the sphere contacts
pruned to the deepest per direction (:mod:`common.hfield_contacts`, what ``task.planning_model``
builds: one contact per foot on a flat field).

    .venv/bin/python scripts/bench_hfield.py [--reps N] [--seeds N] [--placements N]

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

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "scripts"), str(ROOT / "tests"),
                str(ROOT / "tests" / "derivatives" / "analytic")]
import analytic_verify as verify  # noqa: E402
import hfield_models as hm  # noqa: E402
from bench_derivatives import TASKS, interleaved, knot_calls  # noqa: E402


def accuracy(seeds: int) -> None:
    print("\n## Accuracy: worst relative error of A, B against centered differences\n")
    print("| states | contacts in them, by feature | n | eps 1e-7: A / B | eps 1e-6: A / B "
          "| fd evaluations |")
    print("|---|---|---|---|---|---|")
    groups: list[tuple[str, mujoco.MjModel, list[mujoco.MjData]]] = []
    for shape in ("sphere", "capsule"):
        for cone, condim in (("elliptic", 3), ("pyramidal", 6)):
            m = hm.ball_model(shape, cone, condim)
            states = [hm.ball_state(m, cat, seed) for cat in hm.CATEGORIES
                      for seed in range(seeds if cone == "elliptic" else 1)]
            groups.append((f"free {shape}, {cone} condim {condim}", m, states))
    for robot in ("a1", "go1", "go2"):
        m = hm.robot_model(robot)
        feet = robots.info(robot).feet
        states = [hm.robot_state(m, feet, seed) for seed in range(6)]
        states.append(hm.robot_state(m, feet, 11, wanted="wall"))
        groups.append((f"{robot} planning model", m, states))
    total = 0
    worst_all = 0.0
    for name, m, states in groups:
        counts: dict[str, int] = {}
        worst = {1e-7: [0.0, 0.0], 1e-6: [0.0, 0.0]}
        before = derivatives.fd_evaluations()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            provider = derivatives.make_provider("analytic", m, threads=1)
        for d in states:
            for c in range(d.ncon):
                kind = str(hm.category(m, d, c))
                counts[kind] = counts.get(kind, 0) + 1
            A, B = provider.transition(d)
            for eps, w in worst.items():
                A_ref, B_ref = verify.centered_fd(m, d, eps)
                w[0] = max(w[0], verify.relative_error(A, A_ref))
                w[1] = max(w[1], verify.relative_error(B, B_ref))
        spent = derivatives.fd_evaluations() - before
        total += len(states)
        worst_all = max(worst_all, *worst[1e-7])
        by = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        print(f"| {name} | {by} | {len(states)} | {worst[1e-7][0]:.1e} / {worst[1e-7][1]:.1e} "
              f"| {worst[1e-6][0]:.1e} / {worst[1e-6][1]:.1e} | {spent} |")
    print(f"\n{total} states, worst relative error {worst_all:.1e} (eps 1e-7)")


def _stand(m: mujoco.MjModel, pose: tuple[float, float, float],
           rng: np.random.Generator) -> mujoco.MjData:
    """The keyframe at (x, y, yaw), 3 mm deep, small random velocities, warm-started solver."""
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, 0)
    x, y, yaw = pose
    d.qpos[:2] = x, y
    d.qpos[3:7] = [np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]
    hm.lower_onto(m, d, 0.003)
    d.qvel[:] = 0.05 * rng.standard_normal(m.nv)
    verify.settle_solver(m, d)
    return d


def _interior_pose(m: mujoco.MjModel, feet: list[int]) -> tuple[float, float, float]:
    """The base pose (offset within a cell, heading) that keeps every foot farthest from its
    cell's borders and diagonal: a foot 3 mm deep touches one triangle only beyond 1.05 cm."""
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, 0)
    d.qpos[:2] = 0.0
    mujoco.mj_kinematics(m, d)
    rel = d.geom_xpos[feet, :2] - d.qpos[:2]
    res = hm.RESOLUTION
    offsets = np.stack(np.meshgrid(np.arange(0, res, 0.001), np.arange(0, res, 0.001)), -1)
    offsets = offsets.reshape(-1, 2)
    best, pose = -1.0, (0.0, 0.0, 0.0)
    for yaw in np.radians(np.arange(0.0, 90.0, 1.0)):
        rot = np.array([[np.cos(yaw), -np.sin(yaw)], [np.sin(yaw), np.cos(yaw)]])
        f = np.mod(offsets[:, None, :] + (rel @ rot.T)[None], res)  # (offsets, feet, 2)
        margin = np.minimum.reduce([f.min(-1), (res - f).min(-1),
                                    np.abs(f[..., 0] - f[..., 1]) / np.sqrt(2)]).min(-1)
        i = int(np.argmax(margin))
        if margin[i] > best:
            best, pose = float(margin[i]), (offsets[i, 0], offsets[i, 1], float(yaw))
    return pose


def cost(reps: int, placements: int) -> None:
    print(f"\n## Per-knot cost, height field / plane (load average {os.getloadavg()})\n")
    print("field: MuJoCo's contacts (the code before common.hfield_contacts); pruned: the "
          "same field with the sphere contacts pruned (what the planning model steps)\n")
    print("| robot | placement | contacts plane / field / pruned | linearize us plane | field "
          "| pruned | ratio field / pruned | mj_forward us plane | field | pruned "
          "| ratio field / pruned |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    for robot in ("a1", "go1"):
        task = make_task(TASKS[robot], robots.info(robot))
        plane = task.planning_model(0.01)
        fields = {pruned: hm.robot_model(robot, np.zeros((41, 41)), task=task, timestep=0.01,
                                         oracle=False, pruned=pruned)
                  for pruned in (False, True)}
        coarse = {pruned: hm.robot_model(robot, np.zeros((7, 7)), resolution=0.37, task=task,
                                         timestep=0.01, oracle=False, pruned=pruned)
                  for pruned in (False, True)}
        feet = [mujoco.mj_name2id(fields[False], mujoco.mjtObj.mjOBJ_GEOM, f)
                for f in robots.info(robot).feet]
        places = [("feet farthest from cell edges", _interior_pose(fields[False], feet),
                   fields)] + [
            (f"random {i}", (*rng.uniform(-0.3, 0.3, 2), rng.uniform(-np.pi, np.pi)), fields)
            for i in range(placements)] + [
            ("0.37 m cells: one contact per foot", (0.013, 0.027, 0.3), coarse)]
        ratios: dict[str, list[float]] = {"field": [], "pruned": []}
        for label, pose, ground in places:
            seed = int(rng.integers(1 << 30))
            variants = {"plane": plane, "field": ground[False], "pruned": ground[True]}
            states = {k: _stand(m, pose, np.random.default_rng(seed))
                      for k, m in variants.items()}
            calls = {}
            for name, m in variants.items():
                calls.update(knot_calls(name, m, states[name]))
            before = derivatives.fd_evaluations()
            t = interleaved(calls, reps)
            assert derivatives.fd_evaluations() == before
            lin = {k: t[f"lin {k}"] / t["lin plane"] for k in ratios}
            fwd = {k: t[f"fwd {k}"] / t["fwd plane"] for k in ratios}
            if label.startswith("random"):
                for k in ratios:
                    ratios[k].append(lin[k])
            ncon = " / ".join(str(states[k].ncon) for k in variants)
            print(f"| {robot} | {label} | {ncon} | "
                  + " | ".join(f"{t[f'lin {k}'] * 1e6:.0f}" for k in variants)
                  + f" | {lin['field']:.2f} / {lin['pruned']:.2f} | "
                  + " | ".join(f"{t[f'fwd {k}'] * 1e6:.0f}" for k in variants)
                  + f" | {fwd['field']:.2f} / {fwd['pruned']:.2f} |")
        print(f"| {robot} | median of random placements | | | | | "
              f"{np.median(ratios['field']):.2f} / {np.median(ratios['pruned']):.2f} "
              "| | | | |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--placements", type=int, default=8)
    parser.add_argument("--skip-accuracy", action="store_true")
    args = parser.parse_args()
    print(f"MuJoCo {mujoco.__version__}")
    if not args.skip_accuracy:
        accuracy(args.seeds)
    cost(args.reps, args.placements)


if __name__ == "__main__":
    main()
