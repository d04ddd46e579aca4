"""Does the instant a command reaches the motors bias identification? Lockstep check.

    python scripts/sysid_pickup_jitter.py [--late 0 0.1 0.5 1] [--arrive 0.1]
        [--robot go1] [--draw 1] [--delay S] [--timestep S] [--gantry 14]
        [--out bench_results/sysid_jitter]

Over loopback a command reaches the fake robot a transit time after it left, and the transit
varies a little from command to command. A robot that takes commands in only at its 2 ms steps
turns that into a delay that alternates between two values 2 ms apart whenever the transit
ends near a step boundary. This runs the gantry excitation in lockstep on the fake robot's
motors (draw ``--draw`` of ``eval_sysid.py``'s perturbed robots), the link log stamping each
command at its departure as a bridge's does, identifies the actuators, and prints the worst
errors against the truth, for two ways the command reaches the motors:

- ``--late P``: taken in at a step, one step late with probability P (a transit that ends on
  either side of a step boundary at random, as the fake robot took commands in before it took
  them where they arrive);
- ``--arrive J``: arriving one step after it left, give or take U(-J, J) of a step, and taken
  in where it arrives (:meth:`hardware.fake.robot.FakeRobotSim.step`): the same transit, as the
  fake robot now takes it.

``--delay`` replaces the draw's delay (s), ``--timestep`` the fake robot's simulation step (s):
the identified delay reads about half a step short on the fake robot (docs/sysid.md), which
these show.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
from eval_sysid import draw

import robots
from hardware.fake.motor_plant import FakeMotorPlant
from mpc.app.config import load_config
from mpc.app.run import run
from mpc.app.sysid.identify import identify


class Pickup(FakeMotorPlant):
    """The fake robot's motors; each command sent reaches them one step late with probability
    ``late``, taken in at the step (a later command due at the same step wins, as a motor
    obeys the latest), or with ``arrive`` one step after it left, give or take U(-arrive,
    arrive) of a step, taken in where it arrives."""

    def __init__(self, *args, late: float = 0.0, arrive: float | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.late, self.arrive, self.held = late, arrive, None
        self.rng = np.random.default_rng(1)

    def step(self) -> None:
        t, h = float(self.sim.data.time), self.sim.timestep
        self.log.command(t, self.pending, -1, "run")
        if self.arrive is not None:
            jitter = self.rng.uniform(-self.arrive, self.arrive)
            self.sim.command(self.pending, t, arrival=t + h * (1.0 + jitter))
        else:
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
    p.add_argument("--late", type=float, nargs="*", default=[0.0, 0.1, 0.5, 1.0])
    p.add_argument("--arrive", type=float, nargs="*", default=[],
                   help="jitter (in steps) of a command arriving a step after it left")
    p.add_argument("--robot", default="go1")
    p.add_argument("--draw", type=int, default=1)
    p.add_argument("--delay", type=float, default=None, help="s, instead of the draw's")
    p.add_argument("--timestep", type=float, default=None, help="s, the fake robot's step")
    p.add_argument("--gantry", type=float, default=14.0, help="s of excitation")
    p.add_argument("--out", default="bench_results/sysid_jitter")
    args = p.parse_args()
    truth = draw(args.robot, args.draw)
    if args.delay is not None:
        truth = replace(truth, delay=args.delay)
    cases = [("late", x, {"late": x}) for x in args.late]
    cases += [("arrive", x, {"arrive": x}) for x in args.arrive]
    for mode, value, option in cases:
        folder = Path(args.out) / f"{args.robot}_{args.draw}_{mode}{value:g}"
        cfg = load_config(f"configs/{args.robot}_sysid_gantry.yaml", [
            "runtime.mode=lockstep", f"task.duration={args.gantry}",
            f"runtime.duration={args.gantry + 2.0}"])
        plant = Pickup(robots.info(args.robot), overlay=truth, gantry=True, gantry_lift=0.3,
                       log_file=str(folder / "link.npz"), timestep=args.timestep, **option)
        run(cfg, out=folder, plant=plant)
        found = identify([folder]).overlay()
        worst: dict[str, float] = {}
        for joint, t in truth.joints.items():
            f = found.joints[joint]
            for key in ("kp", "damping", "armature"):
                worst[key] = max(worst.get(key, 0.0), abs(getattr(f, key) / getattr(t, key) - 1))
            worst["friction_Nm"] = max(worst.get("friction_Nm", 0.0),
                                       abs(f.frictionloss - t.frictionloss))
        print(json.dumps({mode: value, **{k: round(v, 3) for k, v in worst.items()},
                          "delay_err_ms": round((found.delay - truth.delay) * 1e3, 2)}),
              flush=True)


if __name__ == "__main__":
    main()
