"""Short end to end on loopback: ``mpc-run`` on a shipped hardware config drives a fake robot in
another process over the real protocol. Checked: the robot stands up from lying, the planner's
commands reach it (matched by checksum between the bridge's log and the robot's), it does not
fall, nothing is dropped. The long run with the walking measurement is
``scripts/hw_loopback.py``."""

import json
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from unitree_helpers import ROOT, domain_id, free_udp_port, start_fake_process

# Standing, so that a plan that comes late is still safe to follow, and limits that survive a
# busy 2-core machine (there a planner iteration has taken over a second and the feedback loop
# has paused for half a second); the watchdogs' own timing is tested elsewhere.
TOLERANT = ["task.gait=stand", "safety.state_timeout=0.5", "safety.command_timeout=2.0",
            "safety.max_command_age=0.5", "runtime.policy_timeout=3.0", "safety.ramp_time=1.0"]


@pytest.mark.parametrize("robot", ["a1", "go2"])
def test_mpc_run_drives_a_fake_robot(robot, tmp_path):
    port, domain = free_udp_port(), domain_id() + 7
    wire = "udp" if robot == "a1" else "dds"
    fake = start_fake_process(["--robot", robot, "--transport", wire, "--port", str(port),
                               "--interface", "lo", "--domain-id", str(domain),
                               "--log", str(tmp_path / "fake.npz")])
    if wire == "udp":
        sets = ["plant.robot_ip=127.0.0.1", f"plant.robot_port={port}",
                f"plant.local_port={free_udp_port()}"]
    else:
        sets = ["plant.interface=lo", f"plant.domain_id={domain}",
                "plant.release_motion_service=false", "plant.connect_timeout=20"]
    sets += [*TOLERANT, f"plant.log_file={tmp_path / 'bridge.npz'}"]
    try:
        time.sleep(2.0)
        run = subprocess.run(
            [sys.executable, "-m", "mpc.app.cli", f"configs/{robot}_hw.yaml", "--quiet",
             "--duration", "4", "--out", str(tmp_path / "run"),
             *[a for s in sets for a in ("--set", s)]],
            cwd=ROOT, capture_output=True, text=True, timeout=500)
    finally:
        fake.send_signal(signal.SIGINT)
        out, _err = fake.communicate(timeout=60)
    assert run.returncode == 0, run.stderr
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["stood"] and not summary["fell"], summary
    assert summary["bad_checksum"] == 0 and summary["wrong_mode"] == 0
    bridge = np.load(tmp_path / "bridge.npz")
    robot_log = np.load(tmp_path / "fake.npz")
    fresh = bridge["cmd_tick"] >= 0  # commands carrying a new control of the planner
    assert fresh.sum() > 20
    received = set(robot_log["cmd_crc"].tolist())
    delivered = np.isin(bridge["cmd_crc"][fresh], list(received))
    assert delivered.mean() > 0.99
    mpc = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert not mpc["fell"] and mpc["planner_iterations"] > 0
    assert mpc["stale_commands"] == 0  # counted by the link, reported in the summary
    # the link process's counts, as it closed: what it took and what it refused, by reason
    link = mpc["plant"]
    assert link["states"] > 100 and link["damping_reason"] == "run ended", link
    assert all(link[k] == 0 for k in ("bad_checksum", "bad_packets", "refused_packets",
                                      "duplicate", "out_of_order")), link
