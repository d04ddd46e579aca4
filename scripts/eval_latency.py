"""What delays a hardware config tolerates, in lockstep: command delay, planning latency.

    .venv/bin/python scripts/eval_latency.py [--configs configs/a1_hw.yaml ...]
        [--delays 6 10] [--gains 1.0 0.5] [--plan-latency 60] [--plan-ahead off on]
        [--planning-rate 14] [--duration 10] [--base-state truth|config] [--seeds 0 1 ...]

Each run: the config in lockstep on :class:`hardware.fake.motor_plant.FakeMotorPlant` (the
fake robot's motors, the bridge's commands, the simulation's true base state) with

- every command reaching the motors ``delay`` ms after the state it was computed from;
- the planner at ``--planning-rate``, each plan coming into force ``--plan-latency`` ms after
  the state it started from (``runtime.plan_latency``: what a ~60 ms iteration does in real
  time; the loopback runs on the 2-core development machine plan at 13-20 Hz);
- ``runtime.feedback_gain`` set to each gain, and planning ahead by the plan latency off or
  on (``runtime.plan_ahead``, which in lockstep predicts by the plan latency).

``--base-state config`` replaces the true base state by the config's own estimator
(``plant.base_state``) on the fake robot's realistic sensors, as on a robot.

``--seeds`` repeats each case with other sensor noise (the fake robot's sensors and
``runtime.seed``): the closed loop is chaotic, so one seed says little about how often a rare
stumble happens.

Reported: whether the robot fell, the fastest joint (the bridge's joint-speed trip is at
40 rad/s), and the distance to the goal at the end. A run passes with no fall, joints below
the trip, and the goal within 0.25 m; in velocity mode (a scripted profile moves the robot
wherever it leads) with no fall and joints below the trip, the distance from the start given
for information.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
from report import write_tables

import robots
from hardware.fake.motor_plant import FakeMotorPlant
from hardware.safety.layer import SafetyConfig
from mpc.app.config import load_config
from mpc.app.run import run
from mpc.tasks.goal_mode import final_goal

GOAL_TOLERANCE = 0.25


def run_case(config: str, delay_ms: float, gain: float, latency_ms: float, plan_ahead: bool,
        rate: float, duration: float, overrides: list[str], base_state: str = "truth",
        seed: int = 0) -> dict:
    cfg = load_config(config, [
        "runtime.mode=lockstep", f"runtime.duration={duration}",
        f"runtime.planning_rate={rate}", f"runtime.feedback_gain={gain}",
        f"runtime.plan_latency={latency_ms / 1e3}", f"runtime.seed={seed}",
        f"runtime.plan_ahead={'true' if plan_ahead else 'false'}", *overrides])
    source = cfg.plant.get("base_state") if base_state == "config" else None
    plant = FakeMotorPlant(robots.info(cfg.robot), delay=delay_ms / 1e3, base_state=source,
                           seed=seed)
    with tempfile.TemporaryDirectory() as tmp:
        summary = run(cfg, out=tmp, plant=plant)
    trip = SafetyConfig().max_joint_speed
    # by the simulation's truth (the robot starts at the origin, facing +x)
    # the last waypoint; in velocity mode the start (a zero command holds the start pose)
    goal = final_goal(cfg.task)
    end = float(np.linalg.norm(plant.sim.data.qpos[0:2] - goal))
    velocity_mode = cfg.task.get("mode") == "velocity"
    passed = (not summary["fell"] and plant.max_joint_speed < trip
              and (velocity_mode or end < GOAL_TOLERANCE))
    return {"config": Path(config).stem, "seed": seed, "base_state": base_state,
            "delay_ms": delay_ms,
            "plan_latency_ms": latency_ms,
            "plan_ahead": "on" if plan_ahead else "off", "feedback_gain": gain,
            "fell": summary["fell_reason"] or "no",
            "max_joint_speed": round(plant.max_joint_speed, 1),
            "goal_end_m": round(end, 3), "pass": "yes" if passed else "NO"}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--configs", nargs="+", default=["configs/a1_hw.yaml", "configs/go1_hw.yaml",
                                                    "configs/go2_hw.yaml"])
    p.add_argument("--delays", nargs="+", type=float, default=[6.0, 10.0], metavar="MS")
    p.add_argument("--gains", nargs="+", type=float, default=[1.0, 0.5])
    p.add_argument("--plan-latency", type=float, default=60.0, metavar="MS")
    p.add_argument("--plan-ahead", nargs="+", choices=("off", "on"), default=["off", "on"])
    p.add_argument("--planning-rate", type=float, default=14.0)
    p.add_argument("--duration", type=float, default=10.0)
    p.add_argument("--base-state", choices=("truth", "config"), default="truth",
                   help="config: the config's estimator on the fake robot's realistic sensors")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="config override for every run")
    p.add_argument("--seeds", nargs="+", type=int, default=[0],
                   help="sensor-noise seeds: each case once per seed")
    p.add_argument("--out", default="bench_results/latency")
    args = p.parse_args()
    rows = []
    for config in args.configs:
        for ahead in args.plan_ahead:
            for gain in args.gains:
                for delay in args.delays:
                    for seed in args.seeds:
                        rows.append(run_case(config, delay, gain, args.plan_latency,
                                             ahead == "on", args.planning_rate, args.duration,
                                             args.set, args.base_state, seed))
                        print(rows[-1], flush=True)
    note = (f"Lockstep, planner at {args.planning_rate:g} Hz, plans in force "
            f"{args.plan_latency:g} ms after their state, {args.duration:g} s; pass: no fall, "
            f"joints below the 40 rad/s trip and (goal mode) within {GOAL_TOLERANCE} m of the "
            f"goal." + (f" Overrides: {', '.join(args.set)}." if args.set else ""))
    print(write_tables(rows, Path(args.out), "latency", note))


if __name__ == "__main__":
    main()
