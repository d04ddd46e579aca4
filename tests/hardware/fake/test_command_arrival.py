"""A fake robot's motors take a command at the instant it arrives, not at the next simulation
step: a step during which the law changes applies each law's torque for its share of the step.
Taken in at the steps, a command arriving just before a step boundary acted a whole step earlier
than one arriving just after it, which biased system identification over loopback."""

import numpy as np
import pytest
from unitree_helpers import free_udp_port

import robots
from hardware.fake.robot import FakeRobotSim
from hardware.fake.server import FakeRobot
from hardware.lowlevel import MotorCommand
from hardware.unitree import legacy_packets
from robots.overlay import Overlay


def torque_command(sim: FakeRobotSim, tau: float) -> MotorCommand:
    """Servo mode, no gains, ``tau`` N m feed-forward on every motor: the torque is the law's
    own, whatever the joints do."""
    cmd = MotorCommand()
    cmd.mode[sim.slots] = sim.servo_mode
    cmd.q[sim.slots] = sim.data.qpos[sim.qadr]
    cmd.tau[sim.slots] = tau
    return cmd


@pytest.mark.parametrize("fraction", [0.0, 0.25, 0.5, 0.9])
@pytest.mark.parametrize("delay_steps", [0.0, 1.5])
def test_a_command_takes_over_at_its_arrival_plus_the_delay(fraction, delay_steps):
    """A command arriving at t + f h takes over at t + f h + δ: the step it falls in applies
    the old law for that share of the step, the new one for the rest."""
    sim0 = FakeRobotSim(robots.info("go1"), start="standing", gantry=True)
    h = sim0.timestep
    overlay = Overlay("go1", delay=delay_steps * h)
    sim = FakeRobotSim(robots.info("go1"), start="standing", gantry=True, overlay=overlay)
    sim.command(torque_command(sim, 0.0), 0.0)
    for _ in range(3):  # the old law in force (after the delay too)
        sim.step(0.0)
    np.testing.assert_allclose(sim.tau, 0.0, atol=1e-12)
    t = float(sim.data.time)
    sim.command(torque_command(sim, 1.0), 0.0, arrival=t + fraction * h)
    takes_over = fraction + delay_steps  # in steps from t
    for k in range(4):
        sim.step(0.0)
        share = min(max(k + 1 - takes_over, 0.0), 1.0)  # of step [t + k h, t + (k+1) h)
        np.testing.assert_allclose(sim.tau, share, atol=1e-9, err_msg=f"step {k}")


def test_just_before_and_just_after_a_step_boundary_act_alike():
    """Two commands arriving 0.2 ms apart, either side of a step boundary, move the joints
    alike: what differs is 0.2 ms of the command, not a whole 2 ms step."""
    def run(arrival_in_steps: float) -> np.ndarray:
        sim = FakeRobotSim(robots.info("go1"), start="standing", gantry=True)
        hold = MotorCommand()
        hold.mode[sim.slots] = sim.servo_mode
        hold.q[sim.slots] = sim.data.qpos[sim.qadr]
        hold.kp[sim.slots], hold.kd[sim.slots] = 40.0, 1.0
        sim.command(hold, 0.0)
        sim.step(0.0)
        t0, h = float(sim.data.time), sim.timestep
        moved = MotorCommand()
        for field in ("mode", "q", "kp", "kd"):
            getattr(moved, field)[:] = getattr(hold, field)
        moved.q[sim.slots] += 0.2
        whole = int(arrival_in_steps)
        for _ in range(whole):
            sim.step(0.0)
        sim.command(moved, 0.0, arrival=t0 + arrival_in_steps * h)
        for _ in range(10 - whole):
            sim.step(0.0)
        return sim.data.qpos[sim.qadr].copy()

    before, after, a_step_later = run(0.95), run(1.05), run(1.95)
    gap = np.abs(before - after).max()
    step = np.abs(before - a_step_later).max()
    assert step > 1e-3  # a whole step of delay moves the joints measurably
    assert gap < 0.15 * step  # 0.1 of a step, as against the whole one


def test_the_wire_robot_stamps_a_command_where_it_arrived_in_the_step():
    """Over the wire: a command received 1.5 ms after the fake robot's latest step (of 2 ms)
    takes over three quarters into the next one."""
    fake = FakeRobot(robots.info("go1"), "udp", port=free_udp_port(), start="standing",
                     gantry=True)
    try:
        sim, fmt = fake.sim, legacy_packets.FORMATS["go1"]
        sender = ("127.0.0.1", free_udp_port())
        fake._on_command(legacy_packets.encode_low_cmd(fmt, torque_command(sim, 0.0)), sender,
                         100.0)
        fake.step(100.0)
        h = sim.timestep
        fake._on_command(legacy_packets.encode_low_cmd(fmt, torque_command(sim, 2.0)), sender,
                         100.0 + 0.75 * h)
        fake.step(100.0 + h)
        np.testing.assert_allclose(sim.tau, 0.25 * 2.0, atol=1e-9)
        fake.step(100.0 + 2 * h)
        np.testing.assert_allclose(sim.tau, 2.0, atol=1e-9)
        assert fake.arrival(100.0 + 5 * h) == pytest.approx(float(sim.data.time) + h)
    finally:
        fake.link.close()
