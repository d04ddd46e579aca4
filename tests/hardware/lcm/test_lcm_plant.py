"""The LCM plant against the simulated robot process (real LCM, real NatNet, two processes)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import lcm
import numpy as np
import pytest

import robots
from hardware.lcm.lcm_types import robot_state_t
from hardware.lcm.plant import LcmPlant
from hardware.rotations import quat_angle
from mpc.app.schema import ConfigError

ROOT = Path(__file__).resolve().parents[3]
CROUCH = np.array([0.0, 1.1, -2.2] * 4)


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class FakeRobotProcess:
    """``python -m hardware.fake.lcm_robot`` on channels and ports of its own."""

    def __init__(self, url: str, sync: bool, *extra: str):
        self.url = url
        self.command_port, self.data_port = free_udp_port(), free_udp_port()
        tag = f"_{self.command_port}"
        self.channels = {k: k + tag for k in ("STATE", "COMMAND", "STEP", "TRUTH")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "hardware.fake.lcm_robot", "--robot", "a1", "--lcm-url", url,
             "--state-channel", self.channels["STATE"], "--command-channel",
             self.channels["COMMAND"], "--step-channel", self.channels["STEP"],
             "--truth-channel", self.channels["TRUTH"], "--natnet-command-port",
             str(self.command_port), "--natnet-data-port", str(self.data_port),
             *(["--sync"] if sync else []), *extra],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert "ready" in line, line + self.proc.stderr.read()
        self.truth: dict[int, robot_state_t] = {}
        self._lc = lcm.LCM(url)
        self._lc.subscribe(self.channels["TRUTH"], self._on_truth)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._listen, daemon=True)
        self._thread.start()

    def _on_truth(self, channel, data):
        m = robot_state_t.decode(data)
        self.truth[m.utime] = m

    def _listen(self):
        while not self._stop.is_set():
            self._lc.handle_timeout(50)

    def plant(self, **options) -> LcmPlant:
        sync = options.pop("sync", False)
        mocap = {"command_port": self.command_port, "data_port": self.data_port,
                 "clock": "stream" if sync else "receive", **options.pop("mocap", {})}
        return LcmPlant(robots.info("a1"), lcm_url=self.url, sync=sync,
                        state_channel=self.channels["STATE"],
                        command_channel=self.channels["COMMAND"],
                        step_channel=self.channels["STEP"], mocap=mocap, **options)

    def close(self) -> str:
        self._stop.set()
        self._thread.join(timeout=1.0)
        self.proc.send_signal(signal.SIGINT)
        out, _ = self.proc.communicate(timeout=10)
        return out


@pytest.fixture
def sync_robot(udpm_url):
    robot = FakeRobotProcess(udpm_url, True)
    yield robot
    robot.close()


def wait_truth(robot: FakeRobotProcess, t: float) -> robot_state_t:
    key = round(t * 1e6)
    deadline = time.monotonic() + 2.0
    while key not in robot.truth:
        assert time.monotonic() < deadline, f"no truth at t={t}"
        time.sleep(0.002)
    return robot.truth[key]


def assert_close_to_truth(state, truth: robot_state_t, pos_tol=0.003, ang_tol=0.01,
                          vel_tol=0.05):
    np.testing.assert_allclose(state.qpos[7:], truth.q, atol=1e-12)
    np.testing.assert_allclose(state.qvel[6:], truth.dq, atol=1e-12)
    assert np.linalg.norm(state.qpos[:3] - truth.base_pos) < pos_tol
    assert quat_angle(state.qpos[3:7], np.array(truth.base_quat)) < ang_tol
    assert np.linalg.norm(state.qvel[:3] - truth.base_linvel) < vel_tol


def test_lockstep_state_commands_and_damping(sync_robot):
    plant = sync_robot.plant(sync=True)
    try:
        state = plant.read_state()  # steps the robot until 10 mocap poses are fused
        assert 0.09 < state.time < 0.2
        assert_close_to_truth(state, wait_truth(sync_robot, state.time))
        height = state.qpos[2]
        for i in range(250):  # 0.5 s crouching
            if i % 2 == 0:
                plant.send(CROUCH)
            plant.step()
        state = plant.read_state()
        assert state.time == pytest.approx(0.104 + 0.5, abs=0.01)
        assert_close_to_truth(state, wait_truth(sync_robot, state.time))
        assert np.abs(state.qpos[7:] - CROUCH).max() < 0.1  # the model's kp 100 tracks it
        assert state.qpos[2] < height - 0.03
        h = plant.health()
        assert h["robot_damping"] == 0 and h["dropouts"] == 0 and h["states_lost"] == 0
        assert h["pose_age"] < 0.03  # 10 ms latency plus up to one 10 ms frame period
        plant.damp("test")
        plant.step()
        assert plant.health()["robot_damping"] == 1
    finally:
        plant.close()


def test_robot_damps_when_commands_stop(sync_robot):
    """The robot side's own command watchdog damps; its damping flag then ends the run on the
    controller's side too (a robot that no longer obeys must not be commanded on)."""
    plant = sync_robot.plant(sync=True)
    try:
        plant.read_state()
        plant.send(CROUCH)
        for _ in range(20):  # 40 ms: within the robot's 50 ms command timeout
            plant.step()
        assert plant.health()["robot_damping"] == 0 and plant.damping_reason is None
        for _ in range(10):
            plant.step()
        assert plant.health()["robot_damping"] == 1
        assert plant.damping_reason == ("the robot side reports damping (its command "
                                        "watchdog, a damping command, or its operator)")
    finally:
        plant.close()


def test_realtime_state_rate_clock_and_estimate(udpm_url):
    """Both processes on the wall clock, poses stamped at arrival minus the reported latency.
    The robot holds its home pose and is measured once it has settled: on a loaded machine the
    simulation may lag the wall clock, which a still robot tolerates (the clock mapping itself
    is tested in test_pose_input)."""
    robot = FakeRobotProcess(udpm_url, False, "--gyro-noise", "0.005", "--accel-noise", "0.05")
    plant = robot.plant()
    home = robot_home_ctrl()
    try:
        plant.read_state()
        settled = time.monotonic() + 0.5  # the drop onto the feet from the home key is over
        while time.monotonic() < settled:
            plant.send(home)
            time.sleep(0.005)
        n0, t0 = plant._states, time.monotonic()
        errors = []
        # 1 s, or longer until 100 states matched the truth: on a loaded machine this loop
        # may run a fifth of its 200 turns a second (43 matches in 1 s once)
        while time.monotonic() - t0 < 1.0 or (len(errors) < 100 and time.monotonic() - t0 < 5.0):
            plant.send(home)
            state = plant.read_state()
            truth = robot.truth.get(round(state.time * 1e6))
            if truth is not None:
                errors.append((np.linalg.norm(state.qpos[:3] - truth.base_pos),
                               quat_angle(state.qpos[3:7], np.array(truth.base_quat)),
                               np.linalg.norm(state.qvel[:3] - truth.base_linvel)))
            time.sleep(0.005)
        rate = (plant._states - n0) / (time.monotonic() - t0)
        h = plant.health()
    finally:
        plant.close()
        tail = robot.close()
    assert rate > 200, (rate, tail)  # 500 Hz nominal; far less means the link is broken
    errors = np.array(errors)
    assert len(errors) > 50, tail
    p95 = np.percentile(errors, 95, axis=0)
    assert p95[0] < 0.005 and p95[1] < 0.01 and p95[2] < 0.05, (p95, tail)
    assert h["poses"] > 50 and h["pose_age"] < 0.1 and h["rejected"] == 0, h


def robot_home_ctrl() -> np.ndarray:
    m = robots.load_model("a1")
    return m.key_ctrl[0].copy()


def test_bad_options_are_named(udpm_url):
    with pytest.raises(ConfigError, match=r"plant\.mocap\.rigid_bdy.*rigid_body"):
        LcmPlant(robots.info("a1"), lcm_url=udpm_url, mocap={"rigid_bdy": 1})
    with pytest.raises(ValueError, match=r"plant\.sync needs plant\.mocap\.clock: stream"):
        LcmPlant(robots.info("a1"), lcm_url=udpm_url, sync=True)
    with pytest.raises(ValueError, match="up_axis"):
        LcmPlant(robots.info("a1"), lcm_url=udpm_url, mocap={"up_axis": "x", "source": "lcm"})


def test_no_robot_gives_a_clear_timeout(udpm_url):
    plant = LcmPlant(robots.info("a1"), lcm_url=udpm_url, base_state="message",
                     state_channel="NOBODY_HERE", connect_timeout=0.3)
    try:
        with pytest.raises(TimeoutError, match="no robot state on LCM channel 'NOBODY_HERE'"):
            plant.read_state()
    finally:
        plant.close()
