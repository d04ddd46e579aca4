"""The LCM plant's own watchdogs and who may command the robot process, against the simulated
robot process (real LCM, real NatNet): a frozen robot process (SIGSTOP: its state and its mocap
stream stop together) and a mocap stream that stops alone each put the plant in damping within
their limits; commands of another controller session are refused and counted."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time

import lcm
import numpy as np
from test_lcm_plant import ROOT, FakeRobotProcess, robot_home_ctrl

import robots
from hardware.lcm.lcm_types import joint_command_t
from hardware.lcm.plant import DEFAULT_URL
from hardware.safety.layer import SafetyConfig
from hardware.safety.safe_plant import SafePlant


class CommandListener:
    """Every joint_command_t on ``channel``, with its arrival time (monotonic)."""

    def __init__(self, url: str, channel: str):
        self.got: list[tuple[float, joint_command_t]] = []
        self._lc = lcm.LCM(url)
        self._lc.subscribe(channel, lambda _c, data: self.got.append(
            (time.monotonic(), joint_command_t.decode(data))))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._listen, daemon=True)
        self._thread.start()

    def _listen(self) -> None:
        while not self._stop.is_set():
            self._lc.handle_timeout(10)

    def first_damping(self, after: float) -> float:
        return min((t for t, m in list(self.got) if t > after and m.damping), default=np.inf)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=1.0)


def close_robot(robot: FakeRobotProcess) -> tuple[str, str]:
    """Stop the robot process; its stdout (the summary line) and stderr."""
    robot._stop.set()  # its truth listener
    robot._thread.join(timeout=1.0)
    robot.proc.send_signal(signal.SIGINT)
    return robot.proc.communicate(timeout=10)


def drive_until_tripped(plant, timeout: float) -> float:
    """Send the home pose at 200 Hz, as a controller would, until the plant trips; returns
    the time of the trip as seen here (inf: none within ``timeout``)."""
    home = robot_home_ctrl()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if plant.damping_reason is not None:
            return time.monotonic()
        plant.read_state()
        plant.send(home)
        time.sleep(0.005)
    return np.inf


def test_frozen_robot_process_means_damping_within_the_state_timeout(udpm_url):
    robot = FakeRobotProcess(udpm_url, False)
    plant = robot.plant(state_timeout=0.2)  # a busy machine may starve the robot 50 ms
    listener = CommandListener(udpm_url, robot.channels["COMMAND"])
    try:
        plant.read_state()
        assert drive_until_tripped(plant, 0.5) == np.inf  # alive and well: no trip
        os.kill(robot.proc.pid, signal.SIGSTOP)
        frozen = time.monotonic()
        tripped = drive_until_tripped(plant, 2.0)
        assert tripped < np.inf, plant.health()
        assert re.fullmatch(r"stale state: none for \d+ ms \(limit 200 ms\)",
                            plant.damping_reason), plant.damping_reason
        time.sleep(0.05)
        damped = listener.first_damping(frozen)
        print(f"\nLCM robot frozen: damping sent after {(damped - frozen) * 1e3:.0f} ms")
        assert damped - frozen < 0.2 + 0.1  # the limit, plus the 10 ms watch period and load
    finally:
        os.kill(robot.proc.pid, signal.SIGCONT)
        listener.close()
        plant.close()  # a clean exit: damping published, threads joined
        tail = robot.close()
    assert robot.proc.returncode == 0, tail


def test_stopped_mocap_stream_means_damping_within_the_pose_age_limit(udpm_url):
    # its own command timeout loose: a busy machine may pause this test's commands for 50 ms,
    # and the robot's damping would end the run first
    robot = FakeRobotProcess(udpm_url, False, "--mocap-stop-at", "1.0", "--command-timeout",
                             "0.5")
    plant = robot.plant(max_pose_age=0.1)
    listener = CommandListener(udpm_url, robot.channels["COMMAND"])
    try:
        plant.read_state()
        tripped = drive_until_tripped(plant, 10.0)
        assert tripped < np.inf, plant.health()
        assert re.fullmatch(r"stale mocap: newest pose \d+ ms old \(limit 100 ms\)",
                            plant.damping_reason), plant.damping_reason
        age = int(re.search(r"(\d+) ms old", plant.damping_reason).group(1))
        print(f"\nmocap stopped: damping at a pose age of {age} ms")
        assert age < 100 + 50  # the limit, plus the 10 ms watch period and load
        assert plant.health()["state_age"] < 0.05  # the robot still talks: the mocap tripped
        time.sleep(0.05)
        assert listener.first_damping(tripped - 0.1) < np.inf
    finally:
        listener.close()
        plant.close()
        robot.close()


INTRUDER = """
import sys, time
import lcm
from hardware.lcm.lcm_types import joint_command_t
lc = lcm.LCM(sys.argv[1])
cmd = joint_command_t()
cmd.session, cmd.num_joints, cmd.damping = 12345, 12, 1
cmd.q = cmd.dq = cmd.kp = cmd.kd = cmd.tau = [0.0] * 12
for _ in range(int(sys.argv[3])):
    lc.publish(sys.argv[2], cmd.encode())
    time.sleep(0.005)
"""
SENT = 100


def test_commands_of_another_session_are_refused_and_counted(udpm_url):
    """A second process sends damping commands (of all commands the most likely to get
    through) under its own session: the robot process refuses and counts every one, and
    keeps obeying the controller."""
    assert "ttl=0" in DEFAULT_URL  # the default keeps LCM on this host
    # its own command timeout loose: a busy machine may delay a command by tens of ms
    robot = FakeRobotProcess(udpm_url, False, "--command-timeout", "0.5")
    plant = robot.plant(state_timeout=1.0, max_pose_age=2.0)  # this test is not about them
    try:
        plant.read_state()
        assert drive_until_tripped(plant, 0.3) == np.inf  # the robot now obeys this session
        intruder = subprocess.Popen([sys.executable, "-c", INTRUDER, udpm_url,
                                     robot.channels["COMMAND"], str(SENT)], cwd=ROOT,
                                    stderr=subprocess.PIPE, text=True)
        while intruder.poll() is None:
            assert drive_until_tripped(plant, 0.05) == np.inf
        assert intruder.returncode == 0, intruder.stderr.read()
        assert drive_until_tripped(plant, 1.0) == np.inf  # time to handle what is queued
        damping = plant.health()["robot_damping"]
    finally:
        plant.close()
        tail, err = close_robot(robot)
    # the intruder's damping was not obeyed (the robot's own watchdog may fire on a machine
    # so busy that this test's commands pause for 0.5 s; it says so)
    assert damping == 0 or "no command for" in err, (err, tail, plant.damping_reason)
    # every one that arrived: a robot process starved of the processor (real-time factor 0.2
    # was seen) may lose datagrams or not get to them
    refused = re.search(r"(\d+) refused from other sessions", tail)
    assert refused and 0.5 * SENT <= int(refused.group(1)) <= SENT, tail


def test_mpc_run_ends_cleanly_when_the_robot_process_freezes(udpm_url, tmp_path):
    """``mpc-run`` on the LCM + mocap config, the robot process frozen at the controller's
    first command: the run ends with exit code 1 and the stale-state reason, after publishing
    damping, instead of running on with a plan that never looks expired."""
    robot = FakeRobotProcess(udpm_url, False, "--command-timeout", "0.5")
    listener = CommandListener(udpm_url, robot.channels["COMMAND"])
    sets = {"plant.lcm_url": udpm_url, "telemetry.lcm_url": udpm_url,
            "plant.state_channel": robot.channels["STATE"],
            "plant.command_channel": robot.channels["COMMAND"],
            "plant.mocap.command_port": robot.command_port,
            "plant.mocap.data_port": robot.data_port,
            "safety.max_command_age": 0.5}  # this test is not about it: a busy machine
    args = [a for k, v in sets.items() for a in ("--set", f"{k}={v}")]
    proc = subprocess.Popen(
        [sys.executable, "-m", "mpc.app.cli", "configs/a1_lcm_mocap.yaml", "--quiet", "--duration",
         "60", "--out", str(tmp_path / "run"), *args],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    frozen = np.inf
    try:
        deadline = time.monotonic() + 400  # a first run compiles the planner's kernels
        while not listener.got and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.001)
        os.kill(robot.proc.pid, signal.SIGSTOP)
        frozen = time.monotonic()
        _out, err = proc.communicate(timeout=60)
        ended = time.monotonic()
    finally:
        if proc.poll() is None:
            proc.kill()
        os.kill(robot.proc.pid, signal.SIGCONT)
        listener.close()
        close_robot(robot)
    assert proc.returncode == 1, err
    assert "mpc-run: the robot was put in damping: stale state" in err, err
    assert "Traceback" not in err
    damped = listener.first_damping(frozen) - frozen
    print(f"\nmpc-run, LCM robot frozen: damping published after {damped * 1e3:.0f} ms, "
          f"exit after {(ended - frozen) * 1e3:.0f} ms")
    assert damped < 0.1 + 0.1  # the default state_timeout, the watch period and load


def test_commands_carry_the_state_they_were_computed_from(udpm_url):
    """A command is stamped with the state its thread read, not the newest one when it is
    sent: the robot side's latency and freshness figures depend on it."""
    robot = FakeRobotProcess(udpm_url, False, "--command-timeout", "0.5")
    plant = robot.plant(state_timeout=1.0, max_pose_age=2.0)
    listener = CommandListener(udpm_url, robot.channels["COMMAND"])
    try:
        state = plant.read_state()
        time.sleep(0.05)  # some 25 newer states arrive meanwhile
        newest = plant._state.utime
        plant.send(robot_home_ctrl())
        assert wait_for_command(listener, 1.0)
    finally:
        listener.close()
        plant.close()
        close_robot(robot)
    cmd = listener.got[0][1]
    assert cmd.utime == round(state.time * 1e6) < newest, (cmd.utime, state.time, newest)


def test_a_command_from_an_old_state_is_refused_and_damps(udpm_url):
    """The safety layer around the LCM plant refuses a command computed from a state older
    than ``safety.max_command_age`` (by the state's arrival on this computer): damping
    instead, counted. The limit is loose: a robot process starved by other work on this
    machine has sent states 250 ms late."""
    robot = FakeRobotProcess(udpm_url, False, "--command-timeout", "5.0")
    lcm_plant = robot.plant(state_timeout=1.0, max_pose_age=2.0)
    plant = SafePlant(lcm_plant, robots.info("a1"), SafetyConfig(max_command_age=0.5),
                      robots.load_model("a1"))
    listener = CommandListener(udpm_url, robot.channels["COMMAND"])
    home = robot_home_ctrl()
    try:
        for _ in range(10):  # fresh: obeyed
            plant.read_state()
            plant.send(home)
            time.sleep(0.005)
        assert plant.damping_reason is None
        plant.read_state()
        time.sleep(1.0)  # a stalled controller
        sent = time.monotonic()
        plant.send(home)
        reason = plant.damping_reason
        time.sleep(0.05)
    finally:
        listener.close()
        plant.close()
        close_robot(robot)
    assert re.fullmatch(r"stale command: computed from a state \d+ ms old \(limit 500 ms\)",
                        reason or ""), reason
    assert plant.stats()["stale_commands"] == 1
    after = [m for t, m in listener.got if t > sent]
    assert after and all(m.damping for m in after)  # the stale command never went out


def wait_for_command(listener: CommandListener, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not listener.got and time.monotonic() < deadline:
        time.sleep(0.005)
    return bool(listener.got)
