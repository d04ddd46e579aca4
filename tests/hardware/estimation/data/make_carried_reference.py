"""Makes ``carried_reference.npz`` for test_carried_height.py: what the A1's Kalman filter saw
in a trot on the level floor on the deploy path, with the simulation's true base height.

    python tests/hardware/estimation/data/make_carried_reference.py OUT.npz

The A1 (configs/a1_hw_terrain.yaml, the blind-terrain config: ``ground: carried``) trots toward
its goal for 3 s in lockstep on :class:`hardware.fake.motor_plant.FakeMotorPlant` with the
other published description of the robot (MuJoCo Menagerie's, tests/reference) as the
simulated robot, its realistic sensors, 6 ms command delay and plans in force 20 ms late
(scripts/eval_terrain.py's settings). Kept per estimator update (single precision): every
input of the base-state source (IMU, encoders, foot forces, planned stance) and the true base
height. On this description the A1's landing foot springs back up under the base for ~60 ms
after the contact belief comes up, which is what the carried height must not take for the
base going down.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
TESTS = HERE.parents[2]


def record(out: str, duration: float = 3.0) -> None:
    record_run(out, "configs/a1_hw_terrain.yaml", duration, goal=2.0)


def record_run(out: str, config: str, duration: float, goal: float | None = None,
               overrides: tuple[str, ...] = (), terrain=None) -> None:
    """The A1 on ``config`` (with ``overrides``) for ``duration`` s on the deploy path, toward
    ``goal`` m ahead (None: the config's goal) on ``terrain``: the filter's inputs and the
    true base height per update, into ``out``."""
    for path in (HERE, TESTS, TESTS.parent / "scripts"):
        sys.path.insert(0, str(path))
    import eval_terrain
    from make_level_reference import Recorder
    from reference_models import reference_plant_spec

    import robots
    from hardware.fake.motor_plant import FakeMotorPlant
    from mpc.app.config import load_config
    from mpc.app.run import run

    case = {"config": config, "duration": duration, "seed": 0, "plan_latency_ms": 20.0,
            "threads": load_config(config).planner.threads, "goal": goal, "speed": 0.3,
            "set": list(overrides)}
    cfg = load_config(case["config"], eval_terrain.case_overrides(case))
    plant = FakeMotorPlant(robots.info("a1"), delay=0.006, base_state=cfg.plant["base_state"],
                           seed=0, spec=reference_plant_spec("a1"), terrain=terrain)
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
