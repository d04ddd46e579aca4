"""Interoperability with Unitree's own Go1 SDK (PyPI ``unitree-legged-sdk``, the compiled
library robots are driven with): its packets and ours are the same bytes, its commands decode
in the fake robot to the values it was given, and it accepts the fake robot's states (it drops
packets with a bad checksum) and decodes them to the simulated values."""

import socket
import time

import numpy as np
from unitree_helpers import free_udp_port, wait_for
from unitree_legged_sdk import robot_interface  # a test dependency: missing, the module fails

from hardware.lowlevel import MotorCommand
from hardware.unitree import legacy_packets as lp


def random_command(rng) -> MotorCommand:
    """Values on the wire's grid (float32 targets; torques, gains in its steps)."""
    return MotorCommand(mode=np.full(20, 0x0A, np.uint8),
                        q=rng.uniform(-2, 2, 20).astype(np.float32).astype(float),
                        dq=rng.uniform(-5, 5, 20).astype(np.float32).astype(float),
                        tau=rng.integers(-4000, 4000, 20) / 256.0,
                        kp=rng.integers(0, 3000, 20) / 32.0, kd=rng.integers(0, 80, 20) / 16.0)


def sdk_command(udp, cmd: MotorCommand):
    """The SDK's LowCmd (header from its InitCmdData) carrying ``cmd``."""
    low = robot_interface.LowCmd()
    udp.InitCmdData(low)
    for i in range(20):
        m = low.motorCmd[i]
        m.mode, m.q, m.dq = int(cmd.mode[i]), float(cmd.q[i]), float(cmd.dq[i])
        m.tau, m.Kp, m.Kd = float(cmd.tau[i]), float(cmd.kp[i]), float(cmd.kd[i])
        low.motorCmd[i] = m
    return low


def test_our_lowcmd_bytes_equal_the_sdks(rng):
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.bind(("127.0.0.1", free_udp_port()))
    rx.settimeout(2.0)
    udp = robot_interface.UDP(0xFF, free_udp_port(), "127.0.0.1", rx.getsockname()[1])
    try:
        for _ in range(20):
            cmd = random_command(rng)
            udp.SetSend(sdk_command(udp, cmd))
            udp.Send()
            theirs = rx.recv(2048)
            assert len(theirs) == lp.GO1.cmd_size
            assert lp.encode_low_cmd(lp.GO1, cmd) == theirs
    finally:
        rx.close()


def test_sdk_drives_the_fake_robot_and_reads_its_state(fake_robot, rng):
    fake = fake_robot("go1", start="standing")
    udp = robot_interface.UDP(0xFF, free_udp_port(), "127.0.0.1", fake.port)
    cmd = random_command(rng)
    cmd.kp[:] = 0.0  # keep the robot quiet: gains off, small torques
    cmd.kd[:] = 1.0
    cmd.tau = np.round(cmd.tau / 10 * 256) / 256
    low = sdk_command(udp, cmd)
    state = robot_interface.LowState()
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline and state.tick == 0:
        udp.SetSend(low)
        udp.Send()
        time.sleep(0.004)
        udp.Recv()
        udp.GetRecv(state)
    assert fake.counts["commands"] > 0 and fake.counts["bad_checksum"] == 0
    got = fake.log
    for field in ("mode", "q", "dq", "tau", "kp", "kd"):
        np.testing.assert_array_equal(got[f"cmd_{field}"][-1], getattr(cmd, field))
    assert state.tick > 0  # the SDK accepted a state (it drops bad checksums)
    # Freeze the stream, then compare the SDK's decoding with what the fake robot sent last.
    fake.publishing = False
    time.sleep(0.05)
    sent = fake.last_state
    assert wait_for(lambda: (udp.Recv(), udp.GetRecv(state), state.tick == sent.tick)[-1],
                    1.0)
    np.testing.assert_allclose([state.motorState[i].q for i in range(12)], sent.q[:12],
                               rtol=1e-6)
    np.testing.assert_allclose([state.motorState[i].tauEst for i in range(12)],
                               np.trunc(sent.tau_est[:12] * 256) / 256, atol=1e-9)
    np.testing.assert_allclose(list(state.imu.quaternion), sent.quat, rtol=1e-6)
    assert list(state.footForce) == [round(f) for f in sent.foot_force]
