"""Only the controller commands the robot, only the robot feeds the controller: a second
process on the host sends valid, checksummed commands to the fake robot and states to the
bridge; the fake robot (told its controller's address) refuses every one and counts them, the
bridge's connected socket is given none of them (the kernel drops them), and neither the
motors nor the trips see them."""

from __future__ import annotations

import math
import subprocess
import sys
import time

import numpy as np
from unitree_helpers import ROOT, commands, free_udp_port, wait_for

from hardware.safety.layer import SafetyConfig
from hardware.unitree.udp_plant import UnitreeUdpPlant

#: The intruder: N LowCmd packets (every motor servoing to 0 with Kp 7) to the robot and N
#: LowState packets (the base rolled 70 degrees: the tilt trip, were it believed) to the
#: controller's port, one pair every 2 ms.
INTRUDER = """
import math, socket, sys, time
import numpy as np
from hardware.unitree import legacy_packets
from hardware.lowlevel import SLOTS, LowState, MotorCommand
fmt = legacy_packets.FORMATS["a1"]
robot, controller, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
cmd = MotorCommand(mode=np.full(SLOTS, 0x0A, np.uint8), q=np.zeros(SLOTS), dq=np.zeros(SLOTS),
                   kp=np.full(SLOTS, 7.0), kd=np.full(SLOTS, 1.0))
half = math.radians(70) / 2
state = LowState(0, np.array([math.cos(half), math.sin(half), 0, 0]), np.zeros(3),
                 np.array([0, 0, 9.81]), np.zeros(3), np.zeros(SLOTS), np.zeros(SLOTS),
                 np.zeros(SLOTS), np.zeros(SLOTS, np.uint8), np.zeros(4))
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(n):
    sock.sendto(legacy_packets.encode_low_cmd(fmt, cmd), ("127.0.0.1", robot))
    sock.sendto(legacy_packets.encode_low_state(fmt, state), ("127.0.0.1", controller))
    time.sleep(0.002)
"""
SENT = 200


def test_commands_and_states_from_a_second_process_are_refused(fake_robot):
    local_port = free_udp_port()
    fake = fake_robot("a1", controller=("127.0.0.1", local_port), start="standing",
                      gantry=True)  # hanging: it holds still, whatever the wait
    plant = UnitreeUdpPlant(fake.robot, robot_ip="127.0.0.1", robot_port=fake.port,
                            local_port=local_port,
                            safety=SafetyConfig(ramp_time=0.2, state_timeout=0.5))
    try:
        plant.prepare()
        start = time.monotonic()
        intruder = subprocess.run([sys.executable, "-c", INTRUDER, str(fake.port),
                                   str(local_port), str(SENT)], cwd=ROOT, capture_output=True,
                                  text=True, timeout=60)
        assert intruder.returncode == 0, intruder.stderr
        assert wait_for(lambda: fake.counts["refused"] >= SENT, 2.0)
        time.sleep(0.1)
        assert plant.damping_reason is None  # the intruder's tilted states never tripped it
        c = commands(fake, start)
        used = fake.sim.slots
        assert len(c["t"]) > 100
        assert not np.any(np.all(c["kp"][:, used] == 7.0, axis=1))  # none of its commands
        q = fake.sim.data.qpos[fake.sim.qadr]
        assert not np.allclose(q, 0.0, atol=0.3)  # the robot holds its pose, not the intruder's
    finally:
        plant.close()
    assert fake.counts["refused"] == SENT
    stats = plant.stats()
    refusals = ("refused_packets", "bad_packets", "bad_checksum", "duplicate", "out_of_order")
    assert all(stats[k] == 0 for k in refusals), stats  # the intruder's states: never read
    assert stats["damping_reason"] == "run ended"
    assert math.isfinite(fake.summary()["command_rate_hz"])
