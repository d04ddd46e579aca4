"""Short version of scripts/mocap_closed_loop.py: the A1 trots in lockstep over LCM with its
base state from the fake NatNet stream fused with the IMU (truth hidden from the controller),
and the estimate stays close to the simulator's truth. The long run is in the script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_trot_on_estimated_base_state(udpm_url, tmp_path):
    out = subprocess.run(
        [sys.executable, "scripts/mocap_closed_loop.py", "--mode", "lockstep", "--duration",
         "1.0", "--lcm-url", udpm_url, "--goal-tolerance", "5", "--dropout-every", "0.5",
         "--mocap-latency", "0.02", "--out", str(tmp_path / "run")],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    result = json.loads(out.stdout[out.stdout.index("{"):])
    run, est = result["run"], result["estimation"]
    assert not run["fell"] and run["damping_reason"] is None
    assert run["goal_distance_end_m"] < run["goal_distance_start_m"] - 0.2  # it trots forward
    assert est["samples"] >= 95
    assert est["position_m"]["max"] < 0.01
    assert est["orientation_deg"]["max"] < 1.0
    assert est["linvel_world_mps"]["rms"] < 0.06
    # the fake robot's realistic gyro (hardware.fake.sensors): mostly its 2 ms latency on a
    # trotting body
    assert est["angvel_body_radps"]["rms"] < 0.07
