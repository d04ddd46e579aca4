"""What MuJoCo's height-field collision reports for spheres and capsules, measured.

1. A sphere (radius 2 cm, 3 mm deep) on a flat field of 5 cm cells, swept along a line that
   crosses a cell's interior, its diagonal, a cell border and passes 2 mm from a sample point:
   contacts per position with the prism feature each comes from, normal and distance.
2. The same sphere against a 12 cm step (rising over one cell) at floor level, moving into it.
3. Random placements of spheres and capsules on a bumpy field with a slope and a step
   (``tests/derivatives/analytic/hfield_models.py``; with and without a 2 mm margin, the field
   rotated or not): contacts per feature, identical duplicates, the largest number per geom
   pair, and how closely MuJoCo's contact agrees with the exact closest points of the prism
   (the smallest tolerance at which :func:`derivatives.analytic.hfield.hfield_feature`
   reproduces it), against |dist|.
4. A sphere whose centre is inside the field, and contacts with ``nativeccd`` disabled.

    .venv/bin/python scripts/hfield_contacts.py [--placements N]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import mujoco
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "derivatives" / "analytic")]
import hfield_models as hm  # noqa: E402
from analytic_oracles import bundles  # noqa: E402

from derivatives.analytic.hfield import MATCHED, hfield_feature  # noqa: E402

_G = mujoco.mjtGeom


def field_model(heights: np.ndarray, shape: str = "sphere", margin: float = 0.0,
                rotated: bool = False) -> mujoco.MjModel:
    """A free sphere (r 2 cm) or capsule (r 1.5 cm, half length 4 cm) over ``heights``."""
    spec = mujoco.MjSpec()
    geom = hm.add_field(spec, heights, hm.RESOLUTION)
    geom.margin = margin
    if rotated:
        geom.pos = [0.1, 0.2, geom.pos[2] + 0.05]
        geom.quat = [0.98, 0.05, -0.03, 0.17]
    body = spec.worldbody.add_body(pos=[0, 0, 0.5])
    body.add_freejoint()
    if shape == "sphere":
        body.add_geom(type=_G.mjGEOM_SPHERE, size=[0.02, 0, 0])
    else:
        body.add_geom(type=_G.mjGEOM_CAPSULE, size=[0.015, 0.04, 0])
    return spec.compile()


def agreement(m: mujoco.MjModel, d: mujoco.MjData, c: int) -> float:
    """The smallest tolerance (a power of ten) at which contact c is reproduced (inf: not at
    1e-4)."""
    model, data = bundles(m, d)
    verts = np.empty((6, 3))
    for tol in 10.0 ** np.arange(-16, -3):
        status = hfield_feature(model, data, c, d.contact.dist[c], m.geom_size[1, 0], tol,
                                tol, verts)[0]
        if status == MATCHED:
            return float(tol)
    return float("inf")


def describe(m: mujoco.MjModel, d: mujoco.MjData) -> str:
    out = []
    for c in range(d.ncon):
        n = d.contact.frame[c, :3]
        out.append(f"{hm.category(m, d, c)} n=({n[0]:+.3f},{n[1]:+.3f},{n[2]:+.3f}) "
                   f"dist={d.contact.dist[c] * 1e3:+.2f}mm")
    return "; ".join(out)


def sweep(m: mujoco.MjModel, start, end, height: float, steps: int) -> None:
    d = mujoco.MjData(m)
    for x, y in np.linspace(start, end, steps):
        d.qpos[:3] = [x, y, height]
        mujoco.mj_forward(m, d)
        print(f"| {x * 100:+.1f}, {y * 100:+.1f} | {d.ncon} | {describe(m, d)} |")


def statistics(placements: int) -> None:
    print("\n## Random placements (bumps, slope, step)\n")
    print("| shape | margin | field rotated | contacts | by feature | identical duplicates | "
          "most per pair | worst agreement | worst agreement, abs(dist) > 1e-4 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for shape in ("sphere", "capsule"):
        for margin in (0.0, 0.002):
            for rotated in (False, True):
                m = field_model(hm.terrain(), shape, margin, rotated)
                d = mujoco.MjData(m)
                rng = np.random.default_rng(1)
                kinds: Counter = Counter()
                worst = worst_deep = 0.0
                dup = most = total = 0
                for _ in range(placements):
                    mujoco.mj_resetData(m, d)
                    d.qpos[:3] = [rng.uniform(-0.27, 0.27), rng.uniform(-0.27, 0.27), 0.5]
                    q = rng.standard_normal(4)
                    d.qpos[3:7] = q / np.linalg.norm(q)
                    hm.lower_onto(m, d, rng.uniform(5e-4, 6e-3))
                    most = max(most, d.ncon)
                    seen = set()
                    for c in range(d.ncon):
                        total += 1
                        kinds[hm.category(m, d, c)] += 1
                        key = tuple(np.round(np.r_[d.contact.pos[c], d.contact.frame[c, :3]],
                                             12))
                        dup += key in seen
                        seen.add(key)
                        tol = agreement(m, d, c)
                        worst = max(worst, tol)
                        if abs(d.contact.dist[c]) > 1e-4:
                            worst_deep = max(worst_deep, tol)
                by = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items(), key=str))
                print(f"| {shape} | {margin * 1e3:g} mm | {'yes' if rotated else 'no'} | {total} "
                      f"| {by} | {dup} | {most} | {worst:.0e} | {worst_deep:.0e} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--placements", type=int, default=300)
    args = parser.parse_args()
    print(f"MuJoCo {mujoco.__version__}")
    flat = field_model(np.zeros((9, 9)))
    print("\n## Sphere on a flat field, 3 mm deep (cell corners at multiples of 5 cm)\n")
    print("| centre x, y (cm) | contacts | feature, normal, distance of each |")
    print("|---|---|---|")
    sweep(flat, (0.015, 0.022), (-0.015, -0.018), 0.017, 11)
    heights = np.zeros((9, 9))
    heights[:, 5:] = 0.12
    step = field_model(heights)
    print("\n## Sphere at floor level moving into a 12 cm step (rising from x = 0 to 5 cm)\n")
    print("| centre x, y (cm) | contacts | feature, normal, distance of each |")
    print("|---|---|---|")
    sweep(step, (-0.03, 0.012), (0.0, 0.012), 0.017, 7)
    statistics(args.placements)

    print("\n## Outside the exact geometry\n")
    m = field_model(np.zeros((9, 9)))
    d = mujoco.MjData(m)
    for z in (0.005, -0.002):
        d.qpos[:3] = [0.013, 0.007, z]
        mujoco.mj_forward(m, d)
        print(f"- sphere centre {z * 100:+.1f} cm (surface at 0): {d.ncon} contacts, "
              f"{describe(m, d)}; reproduced at 1e-4: "
              f"{all(agreement(m, d, c) < 1 for c in range(d.ncon))}")
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_NATIVECCD)
    d.qpos[:3] = [0.013, 0.007, 0.017]
    mujoco.mj_forward(m, d)
    print(f"- nativeccd disabled (libccd MPR), 3 mm deep: {describe(m, d)}; agreement "
          f"{[agreement(m, d, c) for c in range(d.ncon)]}")


if __name__ == "__main__":
    main()
