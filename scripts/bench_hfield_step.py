"""One MuJoCo step of the Go2's stairs planning model: height-field contacts pruned against
MuJoCo's own, side by side in one process.

The planning model of ``configs/go2_hw_stairs.yaml`` with ``task.map_contacts=pruned`` (the
stairs map as a height field of 5 cm cells over the floor plane, the task's sensors, the
planner's step), the home keyframe lowered until its deepest contact is 3 mm deep and each foot
planted 3 mm deep by its knee, small random velocities, placed on the floor before the flight,
on the stairs' top landing (two headings) and, with the map's floor plane removed, on the field
alone before the flight: contacts, constraint rows and ``mj_step`` time (medians of
interleaved repetitions) with the field's sphere contacts pruned (:mod:`common.hfield_contacts`)
and with the mark cleared (MuJoCo's contacts, the default), and the ratio.

    .venv/bin/python scripts/bench_hfield_step.py [--reps N]

On a shared machine only the ratios measured in one run mean anything.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import mujoco
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "scripts"), str(ROOT / "tests"),
                str(ROOT / "tests" / "derivatives" / "analytic")]
import hfield_models as hm  # noqa: E402

import robots  # noqa: E402
from common.hfield_contacts import prune_contacts, pruned  # noqa: E402
from mpc.app.assembly import build_task  # noqa: E402
from mpc.app.config import load_config  # noqa: E402

#: (label, x, y, yaw, keep the floor plane)
PLACES = [("floor before the flight", 0.0, 0.013, 0.0, True),
          ("top landing", 2.3, 0.013, 0.0, True),
          ("top landing, turned 30 deg", 2.3, 0.021, 0.52, True),
          ("field alone: floor before the flight", 0.0, 0.013, 0.0, False)]


FEET = robots.info("go2").feet


def _model(cfg, floor: bool) -> mujoco.MjModel:
    task = build_task(cfg)
    model = task.planning_model(cfg.planner.timestep, cfg.planner.self_collision,
                                cfg.planner.impratio, cfg.robot_overlay)
    if not floor:
        planes = model.geom_type == mujoco.mjtGeom.mjGEOM_PLANE
        model.geom_contype[planes] = model.geom_conaffinity[planes] = 0
    return model


def _stand(m, x, y, yaw, rng) -> mujoco.MjData:
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, 0)
    d.qpos[:3] = x, y, 1.0
    d.qpos[3:7] = [np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]
    hm.lower_onto(m, d, 0.003)
    for foot in FEET:  # each foot down to 3 mm by its knee, where it reaches
        hm._plant(m, d, mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, foot), 0.003)
    d.qvel[:] = 0.05 * rng.standard_normal(m.nv)
    d.ctrl[:] = m.key_ctrl[0] if m.nkey and m.nu else 0.0
    mujoco.mj_forward(m, d)
    return d


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    args = parser.parse_args()
    cfg = load_config("go2_hw_stairs", ["task.map_contacts=pruned"])
    print(f"MuJoCo {mujoco.__version__}, load average {os.getloadavg()}\n")
    print("| placement | contacts MuJoCo / pruned | constraint rows | mj_step us MuJoCo | "
          "pruned | ratio |")
    print("|---|---|---|---|---|---|")
    models = {floor: _model(cfg, floor) for floor in (True, False)}
    assert all(pruned(m) for m in models.values())
    for label, x, y, yaw, floor in PLACES:
        m = models[floor]
        ref = _stand(m, x, y, yaw, np.random.default_rng(0))
        state = np.empty(mujoco.mj_stateSize(m, mujoco.mjtState.mjSTATE_INTEGRATION))
        mujoco.mj_getState(m, ref, state, mujoco.mjtState.mjSTATE_INTEGRATION)
        d = mujoco.MjData(m)
        times: dict[bool, list[float]] = {True: [], False: []}
        counts = {}
        for r in range(args.reps):
            for on in (True, False) if r % 2 else (False, True):
                prune_contacts(m, on)
                mujoco.mj_setState(m, d, state, mujoco.mjtState.mjSTATE_INTEGRATION)
                t = time.perf_counter()
                mujoco.mj_step(m, d)
                times[on].append(time.perf_counter() - t)
                counts[on] = (d.ncon, d.nefc)
        prune_contacts(m, True)
        med = {k: np.median(v) * 1e6 for k, v in times.items()}
        print(f"| {label} | {counts[False][0]} / {counts[True][0]} | {counts[False][1]} / "
              f"{counts[True][1]} | {med[False]:.1f} | {med[True]:.1f} | "
              f"{med[True] / med[False]:.2f} |")


if __name__ == "__main__":
    main()
