"""End to end on loopback: a fake robot in one process, ``mpc-run`` on a hardware config in
another, over the real protocol; reports rates, latency and whether the fake robot walked.

    .venv/bin/python scripts/hw_loopback.py --robot go1 [--duration 15]
        [--base-state estimator|odometry|truth] [--config NAME] [--set KEY=VALUE ...]
        [--out DIR]

``--base-state estimator`` (the default) runs the config's own estimator on the fake robot's
realistic sensors and reports its error against the fake robot's simulated truth (matched by
state tick) from 4 s after the first state (after the startup ramp): RMS of the base linear
velocity, height and roll/pitch, and the drift of position and yaw after 15 s (or at the end);
``odometry`` runs leg odometry instead; ``truth`` the simulated truth.

Measurements (all clocks are CLOCK_MONOTONIC, shared by the two processes):
- command and state rates: at the fake robot (what it received and sent);
- end-to-end latency: for every controller command, from the fake robot publishing the state
  the command was computed from to the fake robot receiving the command (commands matched by
  their CRC between the bridge's log and the fake robot's log);
- the bridge's share: from the state's arrival in the bridge to the command leaving it.
Prints one JSON line per run (with ``--repeats N``, then a Markdown table); exits 1 if in any
run the robot fell, did not stand up, did not move forward or was put in damping.

The runs use the configs' own safety limits; ``--allowance`` loosens the stale-state,
stale-command and silent-controller limits to 50, 50 and 200 ms, for a machine shared with
other heavy work, where every process has been seen to stop for about 100 ms at once (not the
product's result).

The H1 hangs on the fake robot's gantry and is let go 5 s after the first command (the startup
ramp has brought it to its home pose by then), as a humanoid is lowered onto its feet.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from report import markdown_table

ROOT = Path(__file__).resolve().parent.parent
WIRE = {"a1": "udp", "go1": "udp", "go2": "dds", "h1": "dds"}
#: Where a run is judged (relative to the start pose) for a config without a goal of its own
#: (the velocity configs walk 2 m; the humanoid stands).
GOAL = {"a1": (2.0, 0.0), "go1": (2.0, 0.0), "go2": (2.0, 0.0), "h1": (0.0, 0.0)}
#: A run reaches the goal within this distance (m), as eval_terrain.py judges one.
GOAL_TOLERANCE = 0.25
#: How each fake robot starts: the quadrupeds lie on the floor and stand up on the startup
#: ramp; the humanoid hangs from the gantry until it is lowered onto its feet.
START = {"h1": ["--gantry", "--gantry-release", "5"]}


def loopback_overrides(robot: str, port: int, domain: int, truth_port: int | None) -> list[str]:
    """``--set`` overrides that point a shipped ``<robot>_hw.yaml`` at the fake robot."""
    if WIRE[robot] == "udp":
        out = ["plant.robot_ip=127.0.0.1", f"plant.robot_port={port}",
               f"plant.local_port={port + 1}"]
    else:
        out = ["plant.interface=lo", f"plant.domain_id={domain}",
               "plant.release_motion_service=false"]
    if truth_port is not None:
        out.append(f"plant.base_state={{type: sim_truth, port: {truth_port}}}")
    return out


def estimation_error(bridge_log: Path, fake_log: Path) -> dict:
    """The bridge's logged estimates against the fake robot's truth at the same state ticks."""
    from hardware.rotations import euler_zyx

    b, f = np.load(bridge_log), np.load(fake_log)
    if "est_tick" not in b.files or len(b["est_tick"]) == 0:
        return {}
    index = {t: i for i, t in enumerate(f["state_tick"].tolist())}
    pairs = [(i, index[t]) for i, t in enumerate(b["est_tick"].tolist()) if t in index]
    if len(pairs) < 10:
        return {}
    ie, it = np.array(pairs).T
    # From 4 s on: the robot lies on the floor, then stands up over the 3 s startup ramp, and
    # the estimator's world is the standing one (a lying robot's feet are not its support).
    settled = it >= it[0] + int(4.0 / 0.002)
    ie, it = ie[settled], it[settled]
    if len(ie) < 10:
        return {}
    eq, ev = b["est_qpos"][ie], b["est_qvel"][ie]
    tq, tv = f["base_qpos"][it], f["base_qvel"][it]
    # The estimator's frame starts at the start pose: compare displacements from the start of
    # the run (the fake robot stands up first, so the two origins differ by its start pose).
    rms = lambda x: float(np.sqrt(np.mean(np.square(x))))  # noqa: E731
    te = np.array([euler_zyx(q) for q in tq[:, 3:7]])
    ee = np.array([euler_zyx(q) for q in eq[:, 3:7]])
    yaw = np.angle(np.exp(1j * ((ee[:, 2] - ee[0, 2]) - (te[:, 2] - te[0, 2]))))
    dxy = (eq[:, :2] - eq[0, :2]) - (tq[:, :2] - tq[0, :2])
    t = (it - it[0]) * 0.002
    at = min(int(np.searchsorted(t, 15.0)), len(t) - 1)
    return {"vel_rms_mps": round(rms(np.linalg.norm(ev[:, :3] - tv[:, :3], axis=1)), 4),
            "height_rms_m": round(rms(eq[:, 2] - tq[:, 2]), 4),
            "roll_pitch_rms_deg": round(float(np.degrees(rms(ee[:, :2] - te[:, :2]))), 3),
            "xy_drift_m": round(float(np.linalg.norm(dxy[at])), 3),
            "yaw_drift_deg": round(float(np.degrees(yaw[at])), 2),
            "drift_over_s": round(float(t[at]), 1)}


def fake_command(robot: str, port: int, domain: int, truth_port: int | None, log: Path,
                 extra: list[str]) -> list[str]:
    cmd = [sys.executable, "-m", "hardware.fake.cli", "--robot", robot, "--transport",
           WIRE[robot], "--port", str(port), "--domain-id", str(domain), "--interface", "lo",
           "--log", str(log), "--quiet", *START.get(robot, []), *extra]
    if truth_port is not None:
        cmd += ["--truth-port", str(truth_port)]
    return cmd


def robot_priority(fifo: int | None = None) -> None:
    """The fake robot stands in for hardware with a processor of its own: raise its priority
    (root only) so the controller under test, or other load, does not starve it: niceness -10,
    or with ``fifo`` SCHED_FIFO at that priority (a niceness is a share of the processor, not
    a deadline: mpc/app/runtime/priority.py)."""
    with contextlib.suppress(PermissionError):
        if fifo:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(fifo))
        else:
            os.nice(-10)


@contextlib.contextmanager
def fake_robot(robot: str, port: int, domain: int, truth_port: int | None, log: Path,
               extra: list[str], fifo: int | None = None) -> Iterator[dict]:
    """``mpc-fake-robot`` in a process of its own for the with-block, which starts once its
    model has compiled and settled on the floor. The dict holds the process id, and after the
    block the robot's summary (``"summary"``) or, if it printed none, its error output
    (``"error"``)."""
    proc = subprocess.Popen(fake_command(robot, port, domain, truth_port, log, extra),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            preexec_fn=functools.partial(robot_priority, fifo))
    fake = {"pid": proc.pid}
    try:
        time.sleep(3.0)
        yield fake
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        if out.strip():
            fake["summary"] = json.loads(out.strip().splitlines()[-1])
        else:
            fake["error"] = err[-500:]


def latency(bridge_log: Path, fake_log: Path) -> dict:
    b, f = np.load(bridge_log), np.load(fake_log)
    state_sent = dict(zip(f["state_tick"].tolist(), f["state_t"].tolist(), strict=True))
    received: dict[int, float] = {}
    for crc, t in zip(f["cmd_crc"].tolist(), f["cmd_t"].tolist(), strict=True):
        received.setdefault(crc, t)
    e2e, bridge = [], []
    state_arrival = dict(zip(b["state_tick"].tolist(), b["state_t"].tolist(), strict=True))
    for crc, t_send, tick in zip(b["cmd_crc"].tolist(), b["cmd_t"].tolist(),
                                 b["cmd_tick"].tolist(), strict=True):
        if tick < 0 or tick not in state_sent or crc not in received:
            continue
        e2e.append(received[crc] - state_sent[tick])
        bridge.append(t_send - state_arrival[tick])
    e2e, bridge = np.array(e2e) * 1e3, np.array(bridge) * 1e3
    stat = lambda v: {"median": round(float(np.median(v)), 2),  # noqa: E731
                      "p95": round(float(np.percentile(v, 95)), 2), "n": int(v.size)} \
        if v.size else {}
    return {"end_to_end_ms": stat(e2e), "in_bridge_ms": stat(bridge)}


def true_goal(config: str, robot: str, overrides: list[str]) -> tuple[float, float]:
    """Where a run of ``config`` is judged by the truth (relative to the start pose): the
    config's goal, its last waypoint where it has several (the stairs configs: up the flight
    and down again), else :data:`GOAL`."""
    from mpc.app.config import load_config
    from mpc.tasks.goal_mode import final_goal

    x, y = final_goal(load_config(config, overrides).task, GOAL.get(robot, (0.0, 0.0)))
    return float(x), float(y)


def run_once(args, out: Path) -> dict:
    """One loopback run; the result as a dict (printed as one JSON line)."""
    out.mkdir(parents=True, exist_ok=True)
    truth = args.truth_port if args.base_state == "truth" else None
    fake_log, bridge_log = out / "fake.npz", out / "bridge.npz"
    with fake_robot(args.robot, args.port, args.domain, truth, fake_log, args.fake_arg,
                    getattr(args, "robot_fifo", None)) as fake:
        allowance = (["safety.state_timeout=0.05", "safety.max_command_age=0.05",
                      "safety.command_timeout=0.2"] if args.allowance else [])
        odometry = (["plant.base_state={type: leg_odometry}"]
                    if args.base_state == "odometry" else [])
        sets = [*loopback_overrides(args.robot, args.port, args.domain, truth), *odometry,
                f"plant.log_file={bridge_log}", *allowance, *args.set]
        run = subprocess.run(
            [sys.executable, "-m", "mpc.app.cli",
             f"configs/{args.config or args.robot + '_hw'}.yaml", "--quiet",
             "--duration", str(args.duration), "--out", str(out / "run"), *args.mpc_arg,
             *[a for s in sets for a in ("--set", s)]],
            capture_output=True, text=True, cwd=ROOT, timeout=args.duration + 180)
    summary_path = out / "run" / "summary.json"
    result = {
        "robot": args.robot, "base_state": args.base_state, "mpc_exit": run.returncode,
        "mpc_stderr_tail": run.stderr.strip().splitlines()[-3:],
        "fake": fake.get("summary", fake.get("error")),
    }
    if summary_path.is_file():
        s = json.loads(summary_path.read_text())
        result["mpc"] = {k: s.get(k) for k in ("planning_rate_hz", "feedback_rate_hz",
                                                "iteration_ms_median", "goal_distance_start_m",
                                                "goal_distance_end_m", "final_base_xy", "fell")}
    if bridge_log.is_file() and fake_log.is_file():
        result.update(latency(bridge_log, fake_log))
        if args.base_state != "truth":
            result["estimation"] = estimation_error(bridge_log, fake_log)
    fake_summary = result["fake"] if isinstance(result["fake"], dict) else {}
    if fake_log.is_file():  # the config's goal, from where the robot stood when MPC started
        f = np.load(fake_log)
        if len(f["base_qpos"]) and result.get("mpc"):
            start = f["base_qpos"][0, :2]
            goal = true_goal(args.config or args.robot + "_hw", args.robot, args.set)
            result["true_goal_distance_m"] = round(float(np.linalg.norm(
                f["base_qpos"][-1, :2] - start - goal)), 3)
    result["walked"] = bool(run.returncode == 0 and fake_summary.get("stood")
                            and not fake_summary.get("fell")
                            and fake_summary.get("base_xyz", [0])[0] > 0.2)
    return result


def table_row(r: dict) -> dict:
    fake = r["fake"] if isinstance(r["fake"], dict) else {}
    mpc = r.get("mpc") or {}
    e2e = r.get("end_to_end_ms") or {}
    ended = "-" if r["walked"] else (r["mpc_stderr_tail"] or ["?"])[-1][-70:]
    est = r.get("estimation") or {}
    return {"walked": "yes" if r["walked"] else "NO",
            "true_goal_m": r.get("true_goal_distance_m"),
            "vel_rms": est.get("vel_rms_mps"), "height_rms": est.get("height_rms_m"),
            "tilt_rms_deg": est.get("roll_pitch_rms_deg"),
            "goal_end_m": mpc.get("goal_distance_end_m"),
            "planning_hz": mpc.get("planning_rate_hz"),
            "commands_hz": fake.get("command_rate_hz"), "states_hz": fake.get("state_rate_hz"),
            "e2e_median_ms": e2e.get("median"), "e2e_p95_ms": e2e.get("p95"),
            "ended_by": ended}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--robot", default="a1", choices=sorted(WIRE))
    p.add_argument("--duration", type=float, default=15.0)
    p.add_argument("--config", help="shipped config name (default: ROBOT_hw), e.g. "
                   "go1_hw_velocity with --fake-arg=--sticks --fake-arg=...")
    p.add_argument("--repeats", type=int, default=1, help="runs, then a Markdown table")
    p.add_argument("--base-state", choices=("estimator", "odometry", "truth"),
                   default="estimator")
    p.add_argument("--port", type=int, default=18007)
    p.add_argument("--domain", type=int, default=57)
    p.add_argument("--truth-port", type=int, default=17020)
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--mpc-arg", action="append", default=[], help="extra mpc-run argument")
    p.add_argument("--fake-arg", action="append", default=[], help="extra fake-robot argument")
    p.add_argument("--out", default=None)
    p.add_argument("--robot-fifo", type=int, default=None, metavar="PRIORITY",
                   help="run the fake robot under SCHED_FIFO at this priority (root; default: "
                        "niceness -10)")
    p.add_argument("--allowance", action=argparse.BooleanOptionalAction, default=False,
                   help="state_timeout and max_command_age 0.05 s, command_timeout 0.2 s (see "
                        "the docstring)")
    args = p.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix=f"hw_{args.robot}_"))
    results = []
    for i in range(args.repeats):
        results.append(run_once(args, out / f"run{i + 1}" if args.repeats > 1 else out))
        print(json.dumps(results[-1]), flush=True)
    if args.repeats > 1:
        walked = sum(r["walked"] for r in results)
        reached = sum(r["walked"] and r.get("true_goal_distance_m", GOAL_TOLERANCE + 1)
                      <= GOAL_TOLERANCE for r in results)
        print(f"{args.robot}: walked in {walked} of {len(results)} runs, reached the goal "
              f"(within {GOAL_TOLERANCE} m by the truth) in {reached}")
        print(markdown_table([table_row(r) for r in results]))
    return 0 if all(r["walked"] for r in results) else 1


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
