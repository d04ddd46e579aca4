"""Makes ``stairs_reference.npz`` for test_kalman_map.py: what the A1's Kalman filter saw
climbing stairs on the deploy path, with the simulation's true base height.

    python tests/hardware/estimation/data/make_stairs_reference.py OUT.npz

The A1 (configs/a1_hw_stairs.yaml, planning on the map of its 8 cm flight, its filter carrying
the height: ``ground: carried``, as the config had it when the file was made) walks up the
flight for 8 s in lockstep on :class:`hardware.fake.motor_plant.FakeMotorPlant` with the other
published description of the robot (MuJoCo Menagerie's, tests/reference) standing on the same
flight, its realistic sensors, 6 ms command delay and plans in force 20 ms late
(scripts/eval_terrain.py's settings). Kept per estimator update (single precision): every
input of the base-state source (IMU, encoders, foot forces, planned stance) and the true base
height. By 8 s the robot stands on the third tread, 0.24 m up.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
TESTS = HERE.parents[2]
MAP = TESTS.parent / "configs" / "maps" / "stairs_8cm.yaml"


def record(out: str, duration: float = 8.0) -> None:
    for path in (HERE, TESTS, TESTS.parent / "scripts"):
        sys.path.insert(0, str(path))
    import eval_terrain
    from make_level_reference import Recorder
    from reference_models import reference_plant_spec

    import robots
    from hardware.fake.motor_plant import FakeMotorPlant
    from mpc.app.config import load_config
    from mpc.app.run import run

    config = "configs/a1_hw_stairs.yaml"
    case = {"config": config, "duration": duration, "seed": 0, "plan_latency_ms": 20.0,
            "threads": load_config(config).planner.threads, "goal": None, "speed": 0.3,
            "set": ["plant.base_state={type: kalman, ground: carried}"]}
    cfg = load_config(case["config"], eval_terrain.case_overrides(case))
    plant = FakeMotorPlant(robots.info("a1"), delay=0.006, base_state=cfg.plant["base_state"],
                           seed=0, spec=reference_plant_spec("a1"),
                           terrain=[{"kind": "map", "file": str(MAP)}])
    plant.source = Recorder(plant.source)
    heights: list[float] = []
    step = plant.step

    def step_and_record() -> None:
        step()
        heights.append(float(plant.sim.data.qpos[2]))

    plant.step = step_and_record
    with tempfile.TemporaryDirectory() as tmp:
        run(cfg, out=tmp, plant=plant)
    rows = {k: np.array(v, np.float32) for k, v in plant.source.rows.items()}
    # one update per step, after it: the height the update saw
    rows["true_z"] = np.array(heights, np.float32)
    np.savez_compressed(out, **rows)


if __name__ == "__main__":
    record(sys.argv[1])
