"""LCM messages: generated types match the definitions; state, command and telemetry messages
round-trip over udpm:// between separate sockets and processes (lcm-logger)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import lcm
import numpy as np
import pytest

from hardware.lcm.lcm_types import joint_command_t, planner_telemetry_t, robot_state_t
from hardware.lcm.telemetry import TelemetryPublisher
from mpc.app.config import load_config
from mpc.app.errors import UserError
from mpc.app.run import check_mode
from mpc.app.runtime.lockstep import run_lockstep
from mpc.app.runtime.session import Session

ROOT = Path(__file__).resolve().parents[3]


def test_generated_types_match_the_definitions():
    out = subprocess.run([sys.executable, "scripts/generate_lcm_types.py", "--check"], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def state_message(seq: int) -> robot_state_t:
    m = robot_state_t()
    m.utime, m.seq, m.num_joints = 1_000_000 + 2000 * seq, seq, 12
    m.q = list(np.linspace(-1, 1, 12) + seq)
    m.dq, m.tau_est = [0.5] * 12, [-2.0] * 12
    m.imu_quat, m.imu_gyro, m.imu_accel = [1.0, 0, 0, 0], [0.1, 0.2, 0.3], [0, 0, 9.81]
    return m


def exchange(transport, messages: list[tuple[str, object]]) -> list[tuple[str, bytes]]:
    """Publish on one LCM instance and receive on another (udpm), or on the same (memq)."""
    tx = lcm.LCM(transport.url)
    rx = lcm.LCM(transport.url) if transport.multicast else tx
    got = []
    rx.subscribe("TEST_.*", lambda c, d: got.append((c, d)))
    for channel, msg in messages:  # 1 kHz, twice a robot's state rate
        tx.publish(channel, msg.encode())
        rx.handle_timeout(0)
        time.sleep(0.001)
    deadline = time.monotonic() + 2.0
    while len(got) < len(messages) and time.monotonic() < deadline:
        rx.handle_timeout(50)
    return got


def test_state_and_command_round_trip(lcm_transport):
    cmd = joint_command_t()
    cmd.utime, cmd.state_seq, cmd.num_joints = 123, 7, 12
    cmd.q, cmd.dq, cmd.kp, cmd.kd = [0.9] * 12, [0.0] * 12, [100.0] * 12, [2.0] * 12
    cmd.tau = [0.5] * 12
    cmd.damping = 1
    sent = [("TEST_STATE", state_message(i)) for i in range(200)] + [("TEST_CMD", cmd)]
    got = exchange(lcm_transport, sent)
    assert len(got) == len(sent), f"{len(got)}/{len(sent)} over {lcm_transport.url}"
    states = [robot_state_t.decode(d) for c, d in got if c == "TEST_STATE"]
    assert [s.seq for s in states] == list(range(200))
    np.testing.assert_allclose(states[5].q, np.linspace(-1, 1, 12) + 5)
    assert states[5].imu_gyro == (0.1, 0.2, 0.3) and states[5].base_flags == 0
    (back,) = [joint_command_t.decode(d) for c, d in got if c == "TEST_CMD"]
    assert back.kp == tuple(cmd.kp) and back.damping == 1 and back.state_seq == 7


def _recorded(log: Path, channel: str) -> list:
    """Events of ``channel`` in the log written so far (an empty or absent log: none)."""
    if not log.exists() or log.stat().st_size == 0:
        return []
    return [e for e in lcm.EventLog(str(log), "r") if e.channel == channel]


def _handshake(url: str, log: Path, payload: bytes, timeout: float = 30.0) -> None:
    """Publish ``payload`` on TEST_PROBE until the logger has written it: the logger has
    joined the group (first call) or has written everything sent before (last call)."""
    link = lcm.LCM(url)
    deadline = time.monotonic() + timeout
    while not any(e.data == payload for e in _recorded(log, "TEST_PROBE")):
        assert time.monotonic() < deadline, "lcm-logger recorded nothing"
        link.publish("TEST_PROBE", payload)
        time.sleep(0.05)


def test_telemetry_of_a_planner_run_recorded_by_lcm_logger(udpm_url, tmp_path):
    """A short lockstep simulation publishes telemetry; LCM's own logger (another process)
    records it, and the log decodes to the run's iterations and plans."""
    log = tmp_path / "telemetry.lcmlog"
    # the lcm-logger entry point runs the logger binary as a child: own process group, so
    # that ending the group ends both
    logger = subprocess.Popen([str(Path(sys.executable).parent / "lcm-logger"), "-l", udpm_url,
                               "-c", "TEST_(TELEMETRY|PROBE)", "-f", str(log)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              start_new_session=True)
    try:
        cfg = load_config("configs/a1_trot.yaml", [
            "runtime.mode=lockstep", f"telemetry.lcm_url={udpm_url}",
            "telemetry.channel=TEST_TELEMETRY"])
        _handshake(udpm_url, log, b"start")
        session = Session(cfg, tmp_path / "run")
        run_lockstep(session, 0.2)
        nominal = session.planner.nominal
        session.close("lockstep")
        _handshake(udpm_url, log, b"end")
    finally:
        os.killpg(logger.pid, signal.SIGTERM)
        logger.wait(timeout=5)
    events = _recorded(log, "TEST_TELEMETRY")
    msgs = [planner_telemetry_t.decode(e.data) for e in events]
    telemetry = [o for o in session.observers if isinstance(o, TelemetryPublisher)]
    assert len(telemetry) == 1
    expected = round(0.2 * cfg.runtime.planning_rate)  # 0.2 s of plans, none lost
    assert telemetry[0].published == len(msgs) == expected
    iterations = [m.iteration for m in msgs]
    assert iterations == list(range(iterations[0], iterations[0] + expected))
    last = msgs[-1]
    assert last.status == "ok" and np.isfinite(last.cost)
    assert last.term_names == [t.name for t in session.task.terms]
    assert last.horizon == nominal.horizon and len(last.base_pos) == nominal.horizon
    np.testing.assert_allclose(last.plan_time, nominal.time)
    np.testing.assert_allclose(last.base_pos, nominal.sensordata[:, session.task.sensor(
        "base_pos")])
    assert last.foot_names == list(session.robot.feet)
    assert np.array(last.foot_pos).shape == (4, nominal.horizon, 3)
    assert last.base_pos[0][2] > 0.2  # the A1's base stands about 0.27 m high


def test_lockstep_over_lcm_needs_sync():
    """A robot behind LCM runs on its own clock: lockstep is refused, unless ``plant.sync``
    makes it a simulation stepped over LCM (scripts/mocap_closed_loop.py --mode lockstep)."""
    with pytest.raises(UserError, match=r"plant\.type lcm drives a robot on its own clock"):
        check_mode(load_config("configs/a1_lcm_mocap.yaml", ["runtime.mode=lockstep"]))
    check_mode(load_config("configs/a1_lcm_mocap.yaml", ["runtime.mode=lockstep",
                                                         "plant.sync=true",
                                                         "plant.mocap.clock=stream"]))
