"""``mpc-run`` on hardware configs, as a user runs it, against a fake robot on loopback: bad
input gives one line and exit 2; SIGINT ends in damping and a clean exit; a safety trip ends
the run with its reason, in its events; a dry run sends no motion."""

import json
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from unitree_helpers import (
    ROOT,
    commands,
    domain_id,
    first_damping,
    free_udp_port,
    link_pid,
    wait_for,
)

from mpc.app.record.reader import load_run

#: ``mpc-run`` as this interpreter runs it, whichever environment the tests run in.
MPC_RUN = [sys.executable, "-m", "mpc.app.cli"]


def mpc_run(config: str, *args: str, **popen) -> subprocess.Popen:
    return subprocess.Popen([*MPC_RUN, config, "--quiet", *args], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen)


def at_fake(fake, tmp_path, *sets: str) -> list[str]:
    """Arguments pointing a shipped UDP config at ``fake``, with a short ramp and limits that
    tolerate a busy machine (the watchdogs' own timing is tested on the bridge directly)."""
    out = ["--out", str(tmp_path / "run"), "--set", "plant.robot_ip=127.0.0.1",
           "--set", f"plant.robot_port={fake.port}", "--set", f"plant.local_port={free_udp_port()}",
           "--set", "safety.ramp_time=0.5", "--set", "safety.state_timeout=0.5",
           "--set", "runtime.policy_timeout=2.0", "--set", "safety.command_timeout=0.5",
           "--set", "safety.max_command_age=0.5"]
    for s in sets:
        out += ["--set", s]
    return out


def one_line_error(proc: subprocess.Popen, timeout: float = 400) -> str:
    """stderr's one line of a run that failed with exit code 2. The timeout covers a first
    run on a fresh machine, which compiles the planner's kernels (minutes) before it gets to
    the robot; errors in the config come at once."""
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mpc-run: error: "), err
    return lines[0]


@pytest.mark.parametrize("args, message", [
    (["configs/go2_hw.yaml", "--set", "plant.interface=eth9"], "no network interface 'eth9'"),
    (["configs/a1_hw.yaml", "--set", "robot=b2"], "unknown robot 'b2'"),
    (["configs/go1_hw.yaml", "--set", "plant.robot_ip=127.0.0.1", "--set",
      "plant.robot_port=9", "--set", "plant.connect_timeout=0.5"],
     "no state from the robot at 127.0.0.1:9"),
    (["configs/a1_hw.yaml", "--set", "robot=go2"], "needs plant type unitree_dds"),
    (["configs/go1_hw.yaml", "--set", "safety.state_timeout=2"], "state_timeout"),
    (["configs/go1_hw.yaml", "--set", "plant.base_state={type: gps}"],
     "unknown base-state source 'gps'"),
    (["configs/a1_hw.yaml", "--set", "plant.base_state={type: kalman, slip_gate: -1}"],
     "'plant.base_state.slip_gate' must be >= 0.05"),
    (["configs/a1_hw.yaml", "--set", "plant.base_state={type: kalman, slip_gat: 0.1}"],
     "slip_gat"),
    (["configs/a1_trot.yaml", "--set", "plant.type=sim_estimated", "--set",
      "plant.sensors={gyro_noise: -2}"], "sensors.gyro_noise must be a finite number >= 0"),
    # lockstep would run the feedback law in the planner's thread against a robot's clock
    (["configs/go1_hw.yaml", "--mode", "lockstep"],
     "'runtime.mode' lockstep needs a plant stepped by the run (a simulation, or plant.sync "
     "with an LCM simulation); plant.type unitree_udp drives a robot on its own clock"),
    (["configs/go2_hw.yaml", "--set", "runtime.mode=lockstep"],
     "plant.type unitree_dds drives a robot on its own clock: use realtime"),
    (["configs/a1_lcm_mocap.yaml", "--mode", "lockstep"],
     "plant.type lcm drives a robot on its own clock: use realtime"),
    (["configs/go1_hw.yaml", "--set", "safety.max_command_age=0.001"],
     "'safety.max_command_age' must be >= 0.01"),
])
def test_bad_input_is_one_line(args, message, tmp_path):
    line = one_line_error(mpc_run(*args, "--out", str(tmp_path / "run")))
    assert message in line


def test_unreachable_robot_network_is_one_line(tmp_path):
    """In an empty network namespace nothing routes to the robot's 192.168.123.10 (and no
    packet can leave this machine)."""
    line = one_line_error(subprocess.Popen(
        ["unshare", "--net", *MPC_RUN, "configs/go1_hw.yaml", "--quiet", "--out",
         str(tmp_path / "run")], cwd=ROOT, text=True, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE))
    assert "cannot reach 192.168.123.10:8007: Network is unreachable" in line


def test_fake_robot_bad_input_is_one_line():
    for args in (["--robot", "b2", "--transport", "udp"],
                 ["--robot", "go2", "--transport", "udp"],
                 ["--robot", "go2", "--transport", "dds", "--interface", "eth9"],
                 ["--robot", "a1", "--transport", "udp", "--sensor", "latency=5"]):
        proc = subprocess.run([sys.executable, "-m", "hardware.fake.cli", *args], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("mpc-fake-robot: error:"), proc.stderr


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_damps_then_exits_cleanly(fake_robot, tmp_path, sig):
    # hanging: a fall (a loaded machine) would end the run, and a signal while a run closes
    # is ignored (mpc.app.runtime.signals); sent once the control loop records states
    fake = fake_robot("go1", gantry=True)
    proc = mpc_run("configs/go1_hw.yaml", "--duration", "60", *at_fake(fake, tmp_path))
    states = tmp_path / "run" / "incremental" / "state.bin"
    try:
        assert wait_for(lambda: (states.is_file() and states.stat().st_size > 0)
                        or proc.poll() is not None, 400.0, 0.05)
        time.sleep(1.0)
        assert proc.poll() is None, proc.communicate()
        sent = time.monotonic()
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and f"e-stop: {sig.name}" in err
    damped = first_damping(fake, sent, 3.0)
    assert damped - sent < 0.5, err
    after = commands(fake, damped - 1e-9)
    assert len(after["t"]) > 0 and np.all(after["kp"] == 0), err  # nothing but damping after


@pytest.mark.parametrize("first, second", [("link", None), ("link", "mpc-run"),
                                           ("mpc-run", "mpc-run")])
def test_a_signal_to_either_process_interrupts_the_run_and_a_second_one_waits(
        fake_robot, tmp_path, first, second):
    """A terminal's Ctrl-C reaches mpc-run's link process too, which damps at once and reports
    the signal: the run ends interrupted by it, whichever process hears it first. A signal that
    reaches mpc-run while it closes (the same Ctrl-C arriving late, or a second one) does not
    cut the close short: the record is complete."""
    # hanging, standing: on a busy machine no fall ends the run first
    fake = fake_robot("go1", gantry=True)
    proc = mpc_run("configs/go1_hw.yaml", "--duration", "60",
                   *at_fake(fake, tmp_path, "task.gait=stand"))
    states = tmp_path / "run" / "incremental" / "state.bin"
    try:  # sent once the control loop records states: the run has started
        assert wait_for(lambda: (states.is_file() and states.stat().st_size > 0)
                        or proc.poll() is not None, 400.0, 0.05)
        time.sleep(1.0)
        link = link_pid(proc.pid)
        assert proc.poll() is None and link is not None, proc.communicate()
        sent = time.monotonic()
        os.kill(link if first == "link" else proc.pid, signal.SIGINT)
        if second is not None:  # while mpc-run closes: after the robot's damping began
            assert wait_for(lambda: first_damping(fake, sent, 3.0) < np.inf, 2.0)
            time.sleep(0.1)
            proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "e-stop: SIGINT" in err, err
    assert "before the run started" not in err, err
    assert first_damping(fake, sent, 3.0) - sent < 0.5, err
    run = tmp_path / "run"
    summary = json.loads((run / "summary.json").read_text())
    assert summary["interrupted"] is True and summary["damping_reason"] == "e-stop: SIGINT"
    assert "interrupted by SIGINT" in (run / "events.log").read_text()


def test_safety_trip_ends_the_run_with_its_reason(fake_robot, tmp_path):
    fake = fake_robot("a1")
    proc = mpc_run("configs/a1_hw.yaml", "--duration", "60", *at_fake(fake, tmp_path))
    try:
        assert wait_for(lambda: fake.stood or proc.poll() is not None, 400.0, 0.05)
        fake.stop_publishing()
        _out, err = proc.communicate(timeout=400)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, err
    assert "mpc-run: the robot was put in damping: stale state" in err
    assert "Traceback" not in err
    # the trip came from the link process: it is in the run's events, at its time
    trips = [e for e in load_run(tmp_path / "run").events
             if e.kind == "damping" and "stale state" in e.message]
    assert len(trips) == 1 and trips[0].level == "ERROR" and np.isfinite(trips[0].time), trips
    # logged by the bridge in the link process, forwarded to mpc-run's log
    assert re.search(r"ERROR hardware\.unitree\.bridge: damping: stale state",
                     (tmp_path / "run" / "events.log").read_text())


def test_dry_run_computes_but_sends_no_motion(fake_robot, tmp_path):
    fake = fake_robot("a1", start="standing", gantry=True)  # hanging: no fall to stop the run
    proc = mpc_run("configs/a1_hw.yaml", "--dry-run", "--duration", "1.0",
                   *at_fake(fake, tmp_path))
    _out, err = proc.communicate(timeout=400)
    assert proc.returncode == 0, err
    c = commands(fake)
    assert len(c["t"]) > 50
    assert np.all(c["mode"] == 0) and np.all(c["kp"] == 0) and np.all(c["tau"] == 0)
    assert (tmp_path / "run" / "summary.json").is_file()


def test_dds_config_against_fake_process(tmp_path):
    """The Go2 config as shipped, pointed at a fake Go2 in another process on ``lo``."""
    from unitree_helpers import start_fake_process

    domain = domain_id() + 5
    fake = start_fake_process(["--robot", "go2", "--transport", "dds", "--interface", "lo",
                               "--domain-id", str(domain), "--start", "standing", "--gantry"])
    try:
        time.sleep(2.0)
        proc = mpc_run("configs/go2_hw.yaml", "--dry-run", "--duration", "1.0", "--out",
                       str(tmp_path / "run"), "--set", "plant.interface=lo", "--set",
                       f"plant.domain_id={domain}", "--set",
                       "plant.release_motion_service=false", "--set", "plant.connect_timeout=20",
                       "--set", "safety.state_timeout=0.5", "--set", "runtime.policy_timeout=2",
                       "--set", "safety.command_timeout=0.5",
                       "--set", "safety.max_command_age=0.5")
        _out, err = proc.communicate(timeout=400)
    finally:
        fake.send_signal(signal.SIGINT)
        fake.communicate(timeout=30)
    assert proc.returncode == 0, err
