"""Makes ``ramp_reference.npz`` for test_stance_slope.py: what the Go2's Kalman filter saw
walking down a 10° ramp on the deploy path, with the simulation's truth about its feet.

    python tests/hardware/estimation/data/make_ramp_reference.py OUT.npz

The Go2 (configs/go2_hw_terrain.yaml, ``ground: carried``) walks toward its goal 2 m ahead,
down ``ramp_down_10`` (level to x = 0.5 m, then 10° down for 1.5 m), for 3.5 s in lockstep
on :class:`hardware.fake.motor_plant.FakeMotorPlant` with MuJoCo Menagerie's description
(tests/reference) as the simulated robot, its realistic sensors, 6 ms command delay and plans
in force 20 ms late (scripts/eval_terrain.py's settings, seed 0). Kept per estimator update
(single precision): every input of the base-state source (IMU, encoders, foot forces, planned
stance), the true base position (``true_pos``) and, per foot, whether it truly stood still
(``true_still``: its normal force above 20 N and its foot site slower than 0.05 m/s). The
committed file was made when the config's filter was ``ground: carried`` alone (before it
took the chords, the rolling foot and foot_drift 0.03); the tests give the filter's options.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
TESTS = HERE.parents[2]


def record(out: str, duration: float = 3.5) -> None:
    for path in (HERE, TESTS, TESTS.parent / "scripts"):
        sys.path.insert(0, str(path))
    import eval_terrain
    import mujoco
    from make_level_reference import Recorder
    from reference_models import reference_plant_spec

    import robots
    from hardware.fake.motor_plant import FakeMotorPlant
    from mpc.app.config import load_config
    from mpc.app.run import run

    config = "configs/go2_hw_terrain.yaml"
    case = {"config": config, "duration": duration, "seed": 0, "plan_latency_ms": 20.0,
            "threads": load_config(config).planner.threads, "goal": 2.0, "speed": 0.3,
            "set": []}
    cfg = load_config(config, eval_terrain.case_overrides(case))
    robot = robots.info("go2")
    plant = FakeMotorPlant(robot, delay=0.006, base_state=cfg.plant["base_state"], seed=0,
                           terrain="ramp_down_10", spec=reference_plant_spec("go2"))
    plant.source = Recorder(plant.source)
    m = plant.sim.model
    sites = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, f) for f in robot.feet]
    jac = np.zeros((3, m.nv))
    pos: list[np.ndarray] = []
    still: list[np.ndarray] = []
    step = plant.step

    def step_and_record() -> None:
        step()
        d = plant.sim.data
        speed = []
        for s in sites:
            mujoco.mj_jacSite(m, d, jac, None, s)
            speed.append(np.linalg.norm(jac @ d.qvel))
        force = plant.sim.foot_forces()[:len(sites)]
        pos.append(d.qpos[0:3].copy())
        still.append((force > 20.0) & (np.array(speed) < 0.05))

    plant.step = step_and_record
    with tempfile.TemporaryDirectory() as tmp:
        run(cfg, out=tmp, plant=plant)
    rows = {k: np.array(v, np.float32) for k, v in plant.source.rows.items()}
    # one update per step, after it: the truth the update saw
    rows["true_pos"] = np.array(pos, np.float32)
    rows["true_still"] = np.array(still, bool)
    np.savez_compressed(out, **rows)


if __name__ == "__main__":
    record(sys.argv[1])
