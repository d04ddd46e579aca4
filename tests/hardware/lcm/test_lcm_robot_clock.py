"""The fake LCM robot's command watchdog counts the controller's silence on the robot's clock,
which in real time is the wall clock's: a robot process held off the CPU falls behind the wall
clock and then catches up (up to 10 steps per pass), and that catch-up must not count as time
the controller left it without a command (the loaded-machine trips of the ``a1_lcm_mocap``
recipe: 54 ms of simulation time between a command and the trip, 11-13 ms of wall time)."""

from __future__ import annotations

import gc
import time

import lcm

import robots
from hardware.fake.lcm_robot import FakeLcmRobot, simulated_robot
from hardware.lcm.lcm_types import joint_command_t

HELD_OFF = 0.2  # s the robot process is kept from running, right after it starts


def hold_message(robot: FakeLcmRobot) -> joint_command_t:
    """A valid command: the robot's own hold law (actuator order), from controller session 7."""
    cmd = robot.sim.cmd
    s = robot.sim.slots
    msg = joint_command_t()
    msg.session, msg.num_joints = 7, robot.nu
    msg.q, msg.dq, msg.kp = cmd.q[s].tolist(), cmd.dq[s].tolist(), cmd.kp[s].tolist()
    msg.kd, msg.tau = cmd.kd[s].tolist(), cmd.tau[s].tolist()
    return msg


def test_a_robot_catching_up_does_not_count_its_own_delay_as_the_controllers(udpm_url):
    """The process is held off for 200 ms; the controller's command arrives as it resumes, at
    simulation time ~0 but wall time 0.2 s. The robot then runs to 0.24 s (40 ms after the
    command on the wall clock, within the 50 ms timeout): no damping. Stamped with the lagging
    simulation time, the command looked 50 ms old at 0.05 s and the robot damped. A controller
    that then stays silent still gets the robot damping once 50 ms have passed."""
    sim = simulated_robot(robots.info("a1"))
    robot = FakeLcmRobot(sim, lcm.LCM(udpm_url), state_channel="CLOCK_STATE",
                         command_channel="CLOCK_COMMAND", step_channel="CLOCK_STEP",
                         command_timeout=0.05)
    sender = lcm.LCM(udpm_url)
    message = hold_message(robot).encode()
    passes = []

    def stop() -> bool:
        passes.append(None)
        if len(passes) == 1:
            time.sleep(HELD_OFF)  # the process off the CPU; the controller's command comes
            sender.publish("CLOCK_COMMAND", message)
            time.sleep(0.005)
        return False

    robot.run_realtime(HELD_OFF + 0.04, stop)
    assert robot.commands == 1
    assert sim.data.time >= HELD_OFF + 0.04 - 1e-9
    assert not robot.damping and not sim.damping, f"command stamped {robot.command_time:.3f} s"
    assert robot.command_time >= HELD_OFF  # stamped on the wall clock, not at ~0 s

    robot.run_realtime(0.1, lambda: False)  # the controller silent from here on
    assert robot.damping and sim.damping


def test_the_robot_keeps_its_start_up_heap_out_of_collections_while_it_runs(udpm_url):
    """A full garbage collection over the process's whole heap held the robot off its pace for
    70-150 ms at a load of 5; what exists when the run starts is frozen for its duration."""
    robot = FakeLcmRobot(simulated_robot(robots.info("a1")), lcm.LCM(udpm_url),
                         state_channel="FREEZE_STATE", command_channel="FREEZE_COMMAND",
                         step_channel="FREEZE_STEP")
    built = len(gc.get_objects())
    frozen = []
    robot.run_realtime(0.05, lambda: frozen.append(gc.get_freeze_count()) or False)
    assert frozen and min(frozen) >= 0.9 * built, (min(frozen, default=0), built)
    assert gc.get_freeze_count() == 0
