"""Closed loop over LCM with the base state from fake motion capture, and the estimator's error.

    python scripts/mocap_closed_loop.py [--mode lockstep|realtime] [--duration 10]
        [--backend fd] [--mocap-latency 0.01] [--dropout-every 0] [--out DIR] [--set K=V ...]

Starts the simulated A1 as a separate process (``python -m hardware.fake.lcm_robot``: joint
encoders and IMU over LCM, base pose over NatNet, the true state on a separate LCM channel that
only this script reads), runs ``mpc-run configs/a1_lcm_mocap.yaml`` against it, then compares
the controller's recorded state (the estimator's output, 100 Hz) with the simulator's truth at
the same robot time. Lockstep runs the robot with ``--sync`` (deterministic physics, the mocap
stream stamped in simulation time); realtime runs both on the wall clock, poses stamped at
arrival minus the stream's reported latency.

Prints, and writes to DIR/estimation.json: the run's summary figures and the estimation error
(RMS, 95th percentile, max) of position (m), orientation (deg), linear velocity (world frame,
m/s) and angular velocity (body frame, rad/s). Exit code 0 if the robot did not fall and ended
within --goal-tolerance of the goal.
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import lcm
import numpy as np

from hardware.lcm.lcm_types import robot_state_t
from hardware.rotations import quat_angle

ROOT = Path(__file__).resolve().parent.parent
TRUTH_CHANNEL = "EVAL_TRUTH"


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TruthRecorder:
    """Collects the fake robot's true base state by robot time (microseconds)."""

    def __init__(self, url: str, channel: str):
        self.lc = lcm.LCM(url)
        self.truth: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.lc.subscribe(channel, self._on)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _on(self, channel: str, data: bytes) -> None:
        m = robot_state_t.decode(data)
        self.truth[m.utime] = (np.array([*m.base_pos, *m.base_quat]),
                               np.array([*m.base_linvel, *m.base_angvel]))

    def _run(self) -> None:
        while not self._stop.is_set():
            self.lc.handle_timeout(50)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=1.0)


def estimation_errors(run_dir: Path, truth: dict) -> dict:
    """Error of the recorded (estimated) base state against the truth at the same robot time."""
    ts = np.load(run_dir / "timeseries.npz")
    rows = [(q, v, truth[round(t * 1e6)]) for t, q, v in
            zip(ts["state_time"], ts["state_qpos"], ts["state_qvel"], strict=True)
            if round(t * 1e6) in truth]
    if not rows:
        raise SystemExit("no recorded state matched the truth stream (different LCM URL?)")
    est_q = np.array([r[0][:7] for r in rows])
    est_v = np.array([r[1][:6] for r in rows])
    true_q = np.array([r[2][0] for r in rows])
    true_v = np.array([r[2][1] for r in rows])

    def stats(err: np.ndarray) -> dict:
        return {"rms": float(np.sqrt(np.mean(err**2))), "p95": float(np.percentile(err, 95)),
                "max": float(err.max())}

    return {
        "samples": len(rows),
        "position_m": stats(np.linalg.norm(est_q[:, :3] - true_q[:, :3], axis=1)),
        "orientation_deg": stats(np.degrees(quat_angle(est_q[:, 3:7], true_q[:, 3:7]))),
        "linvel_world_mps": stats(np.linalg.norm(est_v[:, :3] - true_v[:, :3], axis=1)),
        "angvel_body_radps": stats(np.linalg.norm(est_v[:, 3:] - true_v[:, 3:], axis=1)),
        "speed_mean_mps": float(np.mean(np.linalg.norm(true_v[:, :2], axis=1))),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mode", choices=("lockstep", "realtime"), default="lockstep")
    p.add_argument("--duration", type=float, default=10.0)
    p.add_argument("--backend", default="fd")
    p.add_argument("--lcm-url", default="udpm://239.255.76.67:7667?ttl=0")
    p.add_argument("--mocap-latency", type=float, default=0.01)
    p.add_argument("--dropout-every", type=float, default=0.0)
    p.add_argument("--dropout-duration", type=float, default=0.1)
    # The fake robot's realistic sensors (hardware.fake.sensors) are on; these add white noise
    # on top.
    p.add_argument("--gyro-noise", type=float, default=0.0)
    p.add_argument("--accel-noise", type=float, default=0.0)
    p.add_argument("--goal-tolerance", type=float, default=0.25)
    p.add_argument("--out", help="run directory (default: a temporary one)")
    p.add_argument("--set", action="append", default=[], help="extra mpc-run overrides")
    args = p.parse_args(argv)
    run_dir = Path(args.out or tempfile.mkdtemp(prefix="mocap_closed_loop_"))
    sync = args.mode == "lockstep"
    command_port, data_port = free_udp_port(), free_udp_port()
    # Channels unique to this run, so concurrent runs on one host do not mix.
    tag = f"_{command_port}"
    channels = {k: f"{k}{tag}" for k in ("ROBOT_STATE", "JOINT_COMMAND", "SIM_STEP")}
    fake = subprocess.Popen(
        [sys.executable, "-m", "hardware.fake.lcm_robot", "--robot", "a1",
         "--lcm-url", args.lcm_url, "--truth-channel", TRUTH_CHANNEL + tag,
         "--state-channel", channels["ROBOT_STATE"], "--command-channel",
         channels["JOINT_COMMAND"], "--step-channel", channels["SIM_STEP"],
         "--natnet-command-port", str(command_port), "--natnet-data-port", str(data_port),
         "--mocap-latency", str(args.mocap_latency), "--dropout-every", str(args.dropout_every),
         "--dropout-duration", str(args.dropout_duration), "--gyro-noise", str(args.gyro_noise),
         "--accel-noise", str(args.accel_noise), *(["--sync"] if sync else [])],
        cwd=ROOT, stdout=subprocess.PIPE, text=True)
    recorder = TruthRecorder(args.lcm_url, TRUTH_CHANNEL + tag)
    try:
        ready = fake.stdout.readline()
        if "ready" not in ready:
            raise SystemExit(f"the fake robot did not start: {ready!r}")
        overrides = [f"plant.lcm_url={args.lcm_url}", f"telemetry.lcm_url={args.lcm_url}",
                     f"plant.state_channel={channels['ROBOT_STATE']}",
                     f"plant.command_channel={channels['JOINT_COMMAND']}",
                     f"plant.step_channel={channels['SIM_STEP']}",
                     f"plant.mocap.command_port={command_port}",
                     f"plant.mocap.data_port={data_port}", f"plant.sync={str(sync).lower()}",
                     f"plant.mocap.clock={'stream' if sync else 'receive'}", *args.set]
        cmd = [sys.executable, "-m", "mpc.app.cli", "configs/a1_lcm_mocap.yaml",
               "--mode", args.mode, "--duration", str(args.duration), "--backend", args.backend,
               "--quiet", "--out", str(run_dir)]
        for o in overrides:
            cmd += ["--set", o]
        wall = time.perf_counter()
        run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - wall
        if run.returncode != 0:  # a run that ended in damping still has a run directory
            print(run.stdout, run.stderr, file=sys.stderr)
            if not (run_dir / "summary.json").exists():
                raise SystemExit(f"mpc-run failed with exit code {run.returncode}")
    finally:
        fake.send_signal(signal.SIGINT)
        fake_tail = fake.communicate(timeout=10)[0].strip()
        recorder.close()
    summary = json.loads((run_dir / "summary.json").read_text())
    result = {
        "mode": args.mode, "backend": args.backend, "duration_s": args.duration,
        "mpc_run_exit_code": run.returncode,
        "mocap_latency_s": args.mocap_latency, "dropout_every_s": args.dropout_every,
        "dropout_duration_s": args.dropout_duration, "wall_time_s": round(wall, 1),
        "run": {k: summary.get(k) for k in (
            "fell", "goal_distance_start_m", "goal_distance_end_m", "planning_rate_hz",
            "feedback_rate_hz", "iteration_ms_median", "policy_age_ms_median",
            "real_time_factor", "damping_reason")},
        "robot_process": fake_tail.splitlines()[-1] if fake_tail else "",
        "estimation": estimation_errors(run_dir, recorder.truth),
        "run_dir": str(run_dir),
    }
    (run_dir / "estimation.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    ok = (run.returncode == 0 and not summary["fell"]
          and summary["goal_distance_end_m"] <= args.goal_tolerance)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
