"""The base-state estimator against the simulator's truth, in lockstep (deterministic).

    .venv/bin/python scripts/eval_estimator.py [configs/a1_trot.yaml] [--duration 6]
        [--feedback estimate|truth] [--set KEY=VALUE ...] [--seeds 1]

Runs the config on ``plant.type: sim_estimated`` (noisy sensors, the estimator in the loop).
``--feedback truth`` closes the loop on the simulator's state while the estimator runs beside it
(the estimator's error without its closed-loop consequences: a diagnostic, not the product).
Prints one JSON line per seed: whether it fell, the distance to the goal, the largest true
joint speed (the hardware configs trip at safety.max_joint_speed), and the estimation errors
(RMS of base linear velocity per axis, height, roll/pitch; drift of x, y and yaw at the end).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import robots  # noqa: E402
from hardware.fake.estimated_plant import EstimatedSimPlant  # noqa: E402
from hardware.rotations import euler_zyx  # noqa: E402
from mpc.app.config import load_config  # noqa: E402
from mpc.app.run import run  # noqa: E402


class Recorder(EstimatedSimPlant):
    """Logs truth and estimate at every step; optionally reports the truth to the planner."""

    feedback = "estimate"

    def step(self) -> None:
        super().step()
        t, e = super().true_state(), self._estimate
        if e is not None:
            self.truth_log.append((t.time, t.qpos[0:7].copy(), t.qvel[0:6].copy(),
                             np.r_[e.pos, e.quat], np.r_[e.linvel, e.angvel]))
            self.max_joint_speed = max(getattr(self, "max_joint_speed", 0.0),
                                       float(np.abs(t.qvel[6:]).max()))

    def read_state(self):
        return self.true_state() if self.feedback == "truth" else super().read_state()


def errors(log: list) -> dict:
    t = np.array([r[0] for r in log])
    tq, tv = np.array([r[1] for r in log]), np.array([r[2] for r in log])
    eq, ev = np.array([r[3] for r in log]), np.array([r[4] for r in log])
    rms = lambda x: float(np.sqrt(np.mean(x ** 2)))  # noqa: E731
    dv = ev[:, 0:3] - tv[:, 0:3]
    te = np.array([euler_zyx(q) for q in tq[:, 3:7]])
    ee = np.array([euler_zyx(q) for q in eq[:, 3:7]])
    dyaw = np.angle(np.exp(1j * (ee[:, 2] - te[:, 2])))
    return {"duration_s": round(float(t[-1] - t[0]), 2),
            "vel_rms_mps": [round(rms(dv[:, i]), 4) for i in range(3)],
            "vel_rms_norm_mps": round(rms(np.linalg.norm(dv, axis=1)), 4),
            "height_rms_m": round(rms(eq[:, 2] - tq[:, 2]), 4),
            "roll_pitch_rms_deg": round(float(np.degrees(rms(ee[:, :2] - te[:, :2]))), 3),
            "xy_drift_m": round(float(np.linalg.norm(eq[-1, :2] - tq[-1, :2])), 3),
            "yaw_drift_deg": round(float(np.degrees(dyaw[-1])), 3),
            "angvel_rms": round(rms(ev[:, 3:6] - tv[:, 3:6]), 4)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("config", nargs="?", default="configs/a1_trot.yaml")
    p.add_argument("--duration", type=float, default=6.0)
    p.add_argument("--feedback", choices=("estimate", "truth"), default="estimate")
    p.add_argument("--seeds", type=int, default=1)
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = p.parse_args()
    results = []
    for seed in range(args.seeds):
        cfg = load_config(args.config, ["runtime.mode=lockstep", f"runtime.seed={seed}",
                                        f"runtime.duration={args.duration}",
                                        "plant.type=sim_estimated", *args.set])
        options = {k: v for k, v in cfg.plant.items() if k != "type"}
        plant = Recorder(robots.info(cfg.robot), seed=seed, **options)
        plant.feedback, plant.truth_log = args.feedback, []
        summary = run(cfg, out=tempfile.mkdtemp(prefix="est_"), plant=plant)
        out = {"seed": seed, "feedback": args.feedback, "fell": summary["fell"],
               "goal_distance_end_m": summary["goal_distance_end_m"],
               "trip": summary.get("trip_reason") or summary.get("damping_reason"),
               "max_joint_speed_radps": round(plant.max_joint_speed, 1), **errors(plant.truth_log)}
        results.append(out)
        print(json.dumps(out), flush=True)
    return 0 if not any(r["fell"] for r in results) else 1


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
