"""Every state trip of the bridge over the real transport, with the link in its own process
(the default): the fake robot puts the fault on the wire (a runaway joint, a NaN angle with a
valid checksum, a tilted IMU), the link process trips, the robot receives damping and nothing
else, and the controller's side learns the reason."""

from __future__ import annotations

import math
import re
import time

import numpy as np
import pytest
from unitree_helpers import commands, first_damping, free_udp_port, wait_for

from hardware.safety.layer import SafetyConfig
from hardware.unitree.link_process import LinkProcessPlant
from hardware.unitree.udp_plant import UnitreeUdpPlant

#: A trip must reach the robot as damping within this long of the first state that shows the
#: fault. The bridge sends damping from that state, within 2-4 ms here; the bound is loose
#: because three processes share a machine that other work may load (400 ms was seen once).
TRIP_TO_DAMPING = 0.5


@pytest.fixture
def linked_bridge(fake_robot):
    """``linked_bridge(name)``: an in-process fake robot and a UnitreeUdpPlant connected to
    it with its link in a child process, past the startup ramp."""
    made = []

    def connect(name: str) -> tuple:
        fake = fake_robot(name)
        plant = UnitreeUdpPlant(fake.robot, robot_ip="127.0.0.1", robot_port=fake.port,
                                local_port=free_udp_port(),
                                safety=SafetyConfig(ramp_time=0.2, state_timeout=0.5))
        made.append(plant)
        assert type(plant.bridge) is LinkProcessPlant
        plant.prepare()
        return fake, plant

    yield connect
    for plant in made:
        plant.close()


FAULTS = {
    "joint speed": (lambda fake: fake.report_joint_speed(60.0),
                    r"joint speed 60\.0 rad/s at motor 0 beyond 40 rad/s"),
    "non-finite state": (lambda fake: fake.report_nan_angle(),
                         r"non-finite or invalid robot state"),
    # the standing robot's own roll and pitch add a few degrees to the 60 injected; the other
    # axis is the robot's own (a few degrees, 12 once on a loaded machine)
    "roll": (lambda fake: fake.report_tilt(math.radians(60), 0.0),
             r"tilt: roll [5-7]\d deg, pitch -?\d{1,2} deg beyond 46 deg"),
    "pitch": (lambda fake: fake.report_tilt(0.0, math.radians(-60)),
              r"tilt: roll -?\d{1,2} deg, pitch -[5-7]\d deg beyond 46 deg"),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_state_trip_damps_the_robot_from_the_link_process(fault, linked_bridge):
    fake, plant = linked_bridge("a1")
    time.sleep(0.1)
    assert plant.damping_reason is None
    inject, reason = FAULTS[fault]
    inject(fake)
    assert wait_for(lambda: plant.damping_reason is not None, 2.0), fault
    t = fake.fault_sent
    assert re.fullmatch(reason, plant.damping_reason), plant.damping_reason
    assert wait_for(lambda: first_damping(fake, t, 3.0) < math.inf, 1.0)
    delay = first_damping(fake, t, 3.0) - t
    print(f"\n{fault}: damping at the robot {delay * 1e3:.1f} ms after the first faulty state")
    assert delay < TRIP_TO_DAMPING, f"{fault}: damping {delay * 1e3:.0f} ms after the fault"
    time.sleep(0.05)
    after = commands(fake, t + delay - 1e-9)
    assert len(after["t"]) > 5 and np.all(after["kp"] == 0)  # nothing but damping after
    assert np.all(np.isfinite(after["q"])) and np.all(np.isfinite(after["kd"]))
