"""What the robot link costs: CPU of the fake robot and of the bridge's link process.

    .venv/bin/python scripts/bench_link.py [--robots a1 go1 go2] [--duration 10] [--repeats 3]

For each robot: a fake robot (``mpc-fake-robot``, its own process) and a hardware plant built
from ``configs/<robot>_hw.yaml`` pointed at it on loopback (the bridge in its link process);
after the startup ramp this process sends the home pose at the feedback rate (300 Hz), as the
feedback law would, with no planner running. Over ``--duration`` seconds it reads each
process's CPU time from /proc: on a 2-core machine whatever these two take is lost to the
planner. Also reported: the command and state rates the fake robot saw.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from hw_loopback import WIRE, fake_robot, loopback_overrides
from report import write_tables

ROOT = Path(__file__).resolve().parent.parent

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def measure(robot: str, duration: float, port: int, domain: int) -> dict:
    import robots
    from mpc.app.assembly import build_plant, home_ctrl
    from mpc.app.config import load_config

    out = Path(tempfile.mkdtemp(prefix=f"link_{robot}_"))
    with fake_robot(robot, port, domain, None, out / "fake.npz", []) as fake:
        cfg = load_config(f"configs/{robot}_hw.yaml",
                          loopback_overrides(robot, port, domain, None))
        plant = build_plant(cfg)
        link = plant.proc.pid
        ctrl = home_ctrl(robots.load_planning_model(robot), robots.info(robot).home_key)
        period = 1.0 / cfg.runtime.feedback_rate
        start = {"fake": cpu_seconds(fake["pid"]), "link": cpu_seconds(link),
                 "controller": time.process_time()}
        t0 = time.monotonic()
        deadline = t0
        while time.monotonic() - t0 < duration:
            plant.read_state()
            plant.send(ctrl)
            deadline += period
            time.sleep(max(0.0, deadline - time.monotonic()))
        wall = time.monotonic() - t0
        share = {"fake": (cpu_seconds(fake["pid"]) - start["fake"]) / wall,
                 "link": (cpu_seconds(link) - start["link"]) / wall,
                 "controller": (time.process_time() - start["controller"]) / wall}
        reason = plant.damping_reason
        plant.close()
    if "summary" not in fake:
        raise SystemExit(f"bench_link: the fake {robot} did not run: {fake['error'].strip()}")
    summary = fake["summary"]
    return {"robot": robot, "wire": WIRE[robot], **share, "tripped": reason,
            "command_rate_hz": summary["command_rate_hz"],
            "state_rate_hz": summary["state_rate_hz"]}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--robots", nargs="+", default=["a1", "go1", "go2"], choices=sorted(WIRE))
    p.add_argument("--duration", type=float, default=10.0)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--port", type=int, default=18207)
    p.add_argument("--domain", type=int, default=58)
    p.add_argument("--out", default="bench_results/link")
    args = p.parse_args()
    runs = [measure(robot, args.duration, args.port, args.domain)
            for _ in range(args.repeats) for robot in args.robots]
    rows = []
    for robot in args.robots:
        mine = [r for r in runs if r["robot"] == robot]
        med = {k: float(np.median([r[k] for r in mine]))
               for k in ("fake", "link", "controller", "command_rate_hz", "state_rate_hz")}
        rows.append({"robot": robot, "wire": mine[0]["wire"],
                     "fake robot CPU %": round(100 * med["fake"], 1),
                     "link process CPU %": round(100 * med["link"], 1),
                     "sender CPU %": round(100 * med["controller"], 1),
                     "commands Hz": round(med["command_rate_hz"], 1),
                     "states Hz": round(med["state_rate_hz"], 1),
                     "trips": sum(r["tripped"] is not None for r in mine)})
    note = f"Medians over {args.repeats} runs of {args.duration:g} s."
    print(write_tables(rows, Path(args.out), "link", note))
    print(note)
    return 0


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
