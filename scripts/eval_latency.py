"""What command delay a hardware config tolerates, in lockstep, per feedback gain scale.

    .venv/bin/python scripts/eval_latency.py [--configs configs/a1_hw.yaml ...]
        [--delays 0 6 10 14] [--gains 1.0 0.5] [--planning-rate 14] [--duration 10]

Each run: the config in lockstep on :class:`hardware.fake.motor_plant.FakeMotorPlant` (the
fake robot's motors, the bridge's commands, the simulation's true base state) with every
command reaching the motors ``delay`` ms after the state it was computed from, the planner at
``--planning-rate`` (what the planner achieves on loopback on the 2-core development machine),
and ``runtime.feedback_gain`` set to each gain. Reported: whether the robot fell, the fastest
joint (the bridge's joint-speed trip is at 40 rad/s), and the distance to the goal at the end.
A run passes with no fall, joints below the trip, and the goal within 0.25 m.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from report import write_tables

import robots
from hardware.fake.motor_plant import FakeMotorPlant
from hardware.safety import SafetyConfig
from mpc.config import load_config
from mpc.runtime.lockstep import run_lockstep
from mpc.runtime.session import Session

GOAL_TOLERANCE = 0.25


def run(config: str, delay_ms: float, gain: float, rate: float, duration: float) -> dict:
    cfg = load_config(config, ["runtime.mode=lockstep", f"runtime.planning_rate={rate}",
                               f"runtime.feedback_gain={gain}"])
    plant = FakeMotorPlant(robots.info(cfg.robot), delay=delay_ms / 1e3)
    with tempfile.TemporaryDirectory() as tmp:
        session = Session(cfg, Path(tmp), plant=plant)
        session.plan(plant.read_state())
        run_lockstep(session, duration)
        summary = session.close("lockstep")
    trip = SafetyConfig().max_joint_speed
    end = summary["goal_distance_end_m"]
    passed = (not summary["fell"] and plant.max_joint_speed < trip and end < GOAL_TOLERANCE)
    return {"config": Path(config).stem, "delay_ms": delay_ms, "feedback_gain": gain,
            "fell": summary["fell_reason"] or "no",
            "max_joint_speed": round(plant.max_joint_speed, 1),
            "goal_end_m": round(end, 3), "pass": "yes" if passed else "NO"}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--configs", nargs="+", default=["configs/a1_hw.yaml", "configs/go1_hw.yaml",
                                                    "configs/go2_hw.yaml"])
    p.add_argument("--delays", nargs="+", type=float, default=[0.0, 6.0, 10.0, 14.0],
                   metavar="MS")
    p.add_argument("--gains", nargs="+", type=float, default=[1.0, 0.5])
    p.add_argument("--planning-rate", type=float, default=14.0)
    p.add_argument("--duration", type=float, default=10.0)
    p.add_argument("--out", default="bench_results/latency")
    args = p.parse_args()
    rows = []
    for config in args.configs:
        for gain in args.gains:
            for delay in args.delays:
                rows.append(run(config, delay, gain, args.planning_rate, args.duration))
                print(rows[-1], flush=True)
    note = (f"Lockstep, planner at {args.planning_rate:g} Hz, {args.duration:g} s toward the "
            f"goal; pass: no fall, joints below the 40 rad/s trip, within {GOAL_TOLERANCE} m of "
            f"the goal.")
    print(write_tables(rows, Path(args.out), "latency", note))


if __name__ == "__main__":
    main()
