"""Soak the Unitree bridges on a faulty wire: ``mpc-run`` walking the Go1 (legacy UDP, through
the fault relay) and the Go2 (SDK2 DDS, faults on the fake robot's samples) on loopback, one
run per fault, and a table of what the controller did.

    .venv/bin/python scripts/net_soak.py [--robots go1,go2] [--duration 120]
        [--faults none,loss10,...] [--out DIR]

Each run is ``scripts/hw_loopback.py``'s (fake robot process with realistic sensors, ``mpc-run``
on the shipped hardware config: its own estimator and safety limits; ``--base-state truth`` and
``--allowance`` as in hw_loopback) with ``mpc-fake-robot --net-faults``. A link that goes silent is
silenced ``--silence-at`` seconds after the bridge's first packet. Columns:

- outcome: walked (stood, no trip, > 0.2 m forward), held (no trip, did not walk), damped (the
  bridge tripped), or mpc-run failed (it ended with an error before or without a trip);
- trip: the bridge's damping reason; bad packets: states the bridge refused, commands the
  robot refused; corrupted: what the faults corrupted (to bridge / to robot);
- non-finite: commands the controller handed the bridge that were refused as non-finite, and
  commands the robot received with a non-finite value (both must be 0);
- latency: from the robot publishing a state to it receiving the command computed from it;
- mpc_ended_by: the last line ``mpc-run`` printed when it failed without a trip of the bridge.

Writes ``net_soak.csv`` and ``net_soak.md`` (with the machine load) to ``--out``; exits 1 if any
command reaching the robot was non-finite or a fault other than silence ended in damping.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import sys
import tempfile
from pathlib import Path

import numpy as np
from hw_loopback import ROOT, WIRE, run_once
from report import write_tables

#: Faults of issue 15, as ``--net-faults`` specs (``{silence_at}`` filled in per run).
FAULTS = {
    "none": "",
    "loss10": "loss=0.1",
    "loss30": "loss=0.3",
    "delay5-50": "delay=0.0275,jitter=0.0225",
    "duplicate20": "duplicate=0.2",
    "reorder20": "reorder=0.2",
    "corrupt5": "corrupt=0.05",
    "mixed": "loss=0.1,delay=0.015,jitter=0.01,duplicate=0.05,reorder=0.05,corrupt=0.02",
    "silence0.1": "silence_at={silence_at},silence_for=0.1",
    "silence2": "silence_at={silence_at},silence_for=2.0",
}


def bridge_stats(run_dir: Path) -> dict:
    """The bridge's final counts, from the run's event log (``robot link closed: {...}``)."""
    log = run_dir / "events.log"
    if not log.is_file():
        return {}
    found = re.findall(r"robot link closed: (\{.*\})", log.read_text())
    return ast.literal_eval(found[-1]) if found else {}


def nonfinite_at_robot(fake_log: Path, slots: int = 12) -> int:
    """Commands the fake robot accepted with a non-finite value on a used motor."""
    if not fake_log.is_file():
        return -1
    f = np.load(fake_log)
    bad = np.zeros(len(f["cmd_t"]), bool)
    for k in ("cmd_q", "cmd_dq", "cmd_tau", "cmd_kp", "cmd_kd"):
        if len(f[k]):
            bad |= ~np.isfinite(f[k][:, :slots]).all(axis=1)
    return int(bad.sum())


def row(robot: str, fault: str, r: dict, out: Path) -> dict:
    fake = r["fake"] if isinstance(r["fake"], dict) else {}
    stats = bridge_stats(out / "run")
    trip = stats.get("damping_reason")
    trip = None if trip == "run ended" else trip
    faults = fake.get("net_faults", {})
    to_bridge = faults.get("to_bridge", faults.get("outbound", {}))
    to_robot = faults.get("to_robot", faults.get("inbound", {}))
    if trip:
        outcome = "damped"
    elif r["walked"]:
        outcome = "walked"
    else:
        outcome = "held" if r["mpc_exit"] == 0 else "mpc-run failed"
    e2e = r.get("end_to_end_ms") or {}
    return {
        "robot": robot, "fault": fault, "outcome": outcome,
        "forward_m": (fake.get("base_xyz") or [None])[0], "fell": fake.get("fell"),
        "trip": (trip or "-")[:60],
        "bad_states_at_bridge": stats.get("bad_checksum", 0) + stats.get("bad_packets", 0),
        "bad_cmds_at_robot": fake.get("bad_checksum", 0) + fake.get("bad_packets", 0),
        "corrupted_to_bridge/robot": f"{to_bridge.get('corrupted', 0)}/"
                                     f"{to_robot.get('corrupted', 0)}",
        "lost_to_bridge/robot": f"{to_bridge.get('lost', 0)}/{to_robot.get('lost', 0)}",
        "nonfinite_refused": stats.get("nonfinite_commands", "?"),
        "nonfinite_at_robot": nonfinite_at_robot(out / "fake.npz"),
        "e2e_median_ms": e2e.get("median"), "e2e_p95_ms": e2e.get("p95"),
        "mpc_exit": r["mpc_exit"],
        "mpc_ended_by": "-" if r["mpc_exit"] == 0 or trip else
        (r["mpc_stderr_tail"] or ["?"])[-1][-70:],
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--robots", default="go1,go2")
    p.add_argument("--duration", type=float, default=120.0, help="seconds per fault")
    p.add_argument("--faults", default=",".join(FAULTS))
    p.add_argument("--silence-at", type=float, default=None,
                   help="seconds after the bridge's first packet (default: duration / 2 + 3)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--port", type=int, default=18107)
    p.add_argument("--domain", type=int, default=67)
    p.add_argument("--base-state", choices=("estimator", "odometry", "truth"),
                   default="estimator")
    p.add_argument("--allowance", action="store_true",
                   help="hw_loopback's loosened stale-state and silent-controller limits")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="mpc-run override, e.g. runtime.policy_timeout=1.0 on a loaded machine")
    p.add_argument("--out", default=None)
    args = p.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="net_soak_"))
    silence_at = args.silence_at if args.silence_at is not None else args.duration / 2 + 3
    rows = []
    load_before = os.getloadavg()
    for robot in args.robots.split(","):
        for fault in args.faults.split(","):
            spec = FAULTS[fault].format(silence_at=silence_at)
            spec = ",".join(filter(None, [spec, f"seed={args.seed}"]))
            fake_arg = [f"--net-faults={spec}"]
            sets = list(args.set)
            if WIRE[robot] == "udp":
                proxy = args.port + 2
                fake_arg.append(f"--proxy-port={proxy}")
                sets.append(f"plant.robot_port={proxy}")
            run_args = argparse.Namespace(
                robot=robot, duration=args.duration, base_state=args.base_state,
                port=args.port, domain=args.domain, truth_port=args.port + 3, set=sets,
                mpc_arg=[], fake_arg=fake_arg, allowance=args.allowance, config=None)
            run_out = out / f"{robot}_{fault}"
            result = run_once(run_args, run_out)
            rows.append(row(robot, fault, result, run_out))
            print(rows[-1], flush=True)
    load_after = os.getloadavg()
    note = (f"{args.duration:g} s per fault, seed {args.seed}, silence at {silence_at:g} s, "
            f"base state {args.base_state}, {'allowance' if args.allowance else 'own limits'}, "
            f"overrides {args.set or 'none'}; "
            f"load average (1/5/15 min) before {load_before[0]:.1f}/{load_before[1]:.1f}/"
            f"{load_before[2]:.1f}, after {load_after[0]:.1f}/{load_after[1]:.1f}/"
            f"{load_after[2]:.1f} on {os.cpu_count()} cores")
    print(write_tables(rows, out, "net_soak", note))
    print(note)
    print(f"tables in {out}")
    bad = [r for r in rows if r["nonfinite_at_robot"] != 0 or r["nonfinite_refused"] != 0
           or (r["outcome"] == "damped" and not r["fault"].startswith("silence"))]
    return 1 if bad else 0


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
