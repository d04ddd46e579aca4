"""Does a robot that takes in commands at its own ticks bias identification? Lockstep check.

    python scripts/sysid_pickup_jitter.py [--late 0 0.1 0.5 1] [--robot go1] [--draw 1]
        [--gantry 14] [--out bench_results/sysid_jitter]

Over loopback the fake robot takes in commands at its 2 ms steps: a command that arrives just
before a step acts a step earlier than one that arrives just after it. This runs the gantry
excitation in lockstep on the fake robot's motors (draw ``--draw`` of ``eval_sysid.py``'s
perturbed robots) where each command reaches the motors one step late with probability
``--late`` (the link log stamping it at its departure, as a bridge's does), identifies the
actuators, and prints the worst errors against the truth.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from eval_sysid import draw

import robots
from hardware.fake.motor_plant import FakeMotorPlant
from mpc.app.config import load_config
from mpc.app.run import run
from mpc.app.sysid.identify import identify


class LatePickup(FakeMotorPlant):
    """The fake robot's motors; each command sent reaches them one step late with probability
    ``late`` (a later command due at the same step wins, as a motor obeys the latest)."""

    def __init__(self, *args, late: float, **kwargs):
        super().__init__(*args, **kwargs)
        self.late, self.held = late, None
        self.rng = np.random.default_rng(1)

    def step(self) -> None:
        t = float(self.sim.data.time)
        self.log.command(t, self.pending, -1, "run")
        if self.held is not None:
            self.sim.command(self.held, t)
            self.held = None
        if self.rng.random() < self.late:
            self.held = self.pending
        else:
            self.sim.command(self.pending, t)
        self.sim.step(t)
        self.log.state(float(self.sim.data.time), self.sim.state())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--late", type=float, nargs="+", default=[0.0, 0.1, 0.5, 1.0])
    p.add_argument("--robot", default="go1")
    p.add_argument("--draw", type=int, default=1)
    p.add_argument("--gantry", type=float, default=14.0, help="s of excitation")
    p.add_argument("--out", default="bench_results/sysid_jitter")
    args = p.parse_args()
    truth = draw(args.robot, args.draw)
    for late in args.late:
        folder = Path(args.out) / f"{args.robot}_{args.draw}_late{late:g}"
        cfg = load_config(f"configs/{args.robot}_sysid_gantry.yaml", [
            "runtime.mode=lockstep", f"task.duration={args.gantry}",
            f"runtime.duration={args.gantry + 2.0}"])
        plant = LatePickup(robots.info(args.robot), overlay=truth, gantry=True, gantry_lift=0.3,
                           log_file=str(folder / "link.npz"), late=late)
        run(cfg, out=folder, plant=plant)
        found = identify([folder]).overlay()
        worst: dict[str, float] = {}
        for joint, t in truth.joints.items():
            f = found.joints[joint]
            for key in ("kp", "damping", "armature"):
                worst[key] = max(worst.get(key, 0.0), abs(getattr(f, key) / getattr(t, key) - 1))
            worst["friction_Nm"] = max(worst.get("friction_Nm", 0.0),
                                       abs(f.frictionloss - t.frictionloss))
        print(json.dumps({"late": late, **{k: round(v, 3) for k, v in worst.items()},
                          "delay_err_ms": round((found.delay - truth.delay) * 1e3, 2)}),
              flush=True)


if __name__ == "__main__":
    main()
