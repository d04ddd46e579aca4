"""Bridges connected to fake robots on loopback, for the Unitree hardware tests.

The fake robot (the ``fake_robot`` fixture of ``tests/hardware/conftest.py``) runs the real
protocol over real sockets (UDP on 127.0.0.1, cyclonedds on ``lo``); in-process fakes run in a
thread, and the tests that the issue asks to cross a process boundary start ``mpc-fake-robot``
as a separate process (see ``unitree_helpers``).
"""

from __future__ import annotations

import pytest
from unitree_helpers import free_udp_port

from hardware.fake.server import FakeRobot
from hardware.safety.layer import SafetyConfig


@pytest.fixture
def udp_bridge():
    """``udp_bridge(fake, **options)``: a UdpBridge in this process (``link_process`` false)
    connected to ``fake``, with a short startup ramp unless ``safety`` is given. The stale-state
    limit is loose (500 ms): fake robot and bridge share one interpreter here, on a machine that
    may be busy; only the tests of that watchdog tighten it."""
    from hardware.unitree.udp_plant import UnitreeUdpPlant

    made = []

    def connect(fake: FakeRobot, prepare: bool = True, **options):
        options.setdefault("safety", SafetyConfig(ramp_time=0.3, state_timeout=0.5,
                                                  max_command_age=0.5))
        plant = UnitreeUdpPlant(fake.robot, robot_ip="127.0.0.1", robot_port=fake.port,
                                local_port=free_udp_port(), link_process=False, **options).bridge
        made.append(plant)
        if prepare:
            plant.prepare()
        return plant

    yield connect
    for plant in made:
        plant.close()
