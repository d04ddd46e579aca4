"""Robot states are taken in order, and from the robot only, over the real transports:
duplicated and reordered states (the fault relay on UDP, the fake robot's faulty DDS link) are
refused and counted and the accepted ticks strictly increase; a tick that stands still or
restarts is refused until the stale-state watchdog trips, and its reason says what was refused
meanwhile; a second writer of rt/lowstate on the DDS domain is refused (its tilted states would
trip the robot, were they believed)."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import numpy as np
import pytest
from unitree_helpers import ROOT, domain_id, first_damping, free_udp_port, wait_for

import robots
from hardware.fake.netfaults import Faults, FaultyDdsLink, UdpFaultProxy
from hardware.safety.layer import SafetyConfig
from hardware.unitree.dds_plant import UnitreeDdsPlant
from hardware.unitree.udp_plant import UnitreeUdpPlant

#: Duplicates and reordering only, towards the bridge.
SHUFFLE = Faults(duplicate=0.2, reorder=0.2, seed=5)


def _udp(fake_robot, log: str):
    fake = fake_robot("go1", start="standing", gantry=True)
    proxy = UdpFaultProxy(("127.0.0.1", fake.port), Faults(), SHUFFLE).start()
    bridge = UnitreeUdpPlant(robots.info("go1"), robot_ip="127.0.0.1", robot_port=proxy.port,
                             local_port=free_udp_port(), link_process=False, log_file=log,
                             safety=SafetyConfig(ramp_time=0.3, state_timeout=0.5)).bridge
    return bridge, proxy.down, proxy.stop


def _dds(fake_robot, log: str):
    fake = fake_robot("go2", transport="dds", domain_id=domain_id() + 13, start="standing",
                      gantry=True)
    link = fake.link = FaultyDdsLink(fake.link, SHUFFLE, Faults())
    bridge = UnitreeDdsPlant(robots.info("go2"), interface="lo", domain_id=domain_id() + 13,
                             link_process=False, connect_timeout=10.0, log_file=log,
                             safety=SafetyConfig(ramp_time=0.3, state_timeout=0.5)).bridge
    return bridge, link.outbound, fake.stop


@pytest.mark.parametrize("wire", [_udp, _dds], ids=["udp", "dds"])
def test_duplicated_and_reordered_states_are_refused_and_counted(fake_robot, wire, tmp_path):
    log = tmp_path / "link.npz"
    bridge, to_bridge, stop = wire(fake_robot, str(log))
    try:
        bridge.prepare()
        time.sleep(1.5)
    finally:
        bridge.close()  # writes the log
        stop()
    # read once the bridge and the relay are closed: what the bridge refused was injected
    # before it closed (read earlier, the bridge goes on refusing what the count missed)
    injected = dict(to_bridge.counts)
    ticks = np.load(log)["state_tick"].astype(np.int64)
    c = bridge.counts
    print(f"\n{injected['duplicated']} duplicated, {injected['reordered']} held back on the "
          f"wire; refused {c['duplicate']} duplicate, {c['out_of_order']} out of order; "
          f"{c['states']} accepted")
    assert len(ticks) > 300 and np.all(np.diff(ticks) > 0)  # what was taken is in order
    assert c["duplicate"] > 0 and c["out_of_order"] > 0
    # only what the relay duplicated or held back is refused; over DDS the best-effort
    # reader may lose some of it when the bridge is starved
    shuffled = injected["duplicated"] + injected["reordered"]
    assert 0.5 * shuffled <= c["duplicate"] + c["out_of_order"] <= shuffled
    assert bridge.damping_reason == "run ended"


@pytest.mark.parametrize("fault,last", [
    (lambda fake: fake.freeze_tick(), "duplicate"),
    # the counter restarts from 0 without a pause (a reboot is silent first, and trips on that)
    (lambda fake: fake.shift_tick(-fake.last_state.tick), "out_of_order"),
], ids=["frozen", "restarted"])
def test_a_tick_that_stands_still_or_restarts_trips_the_stale_state_watchdog(
        fake_robot, udp_bridge, fault, last):
    fake = fake_robot("go1", start="standing", gantry=True)
    bridge = udp_bridge(fake, safety=SafetyConfig(ramp_time=0.2, state_timeout=0.1))
    time.sleep(0.2)
    assert bridge.damping_reason is None
    t = fault(fake)
    assert wait_for(lambda: bridge.damping_reason is not None, 2.0)
    assert re.fullmatch(rf"stale state: none for \d+ ms \(limit 100 ms\); \d+ refused "
                        rf"meanwhile, the last as {last}", bridge.damping_reason), \
        bridge.damping_reason
    print(f"\n{last} ticks: damping {(bridge.damping_time - t) * 1e3:.0f} ms after the fault")
    assert bridge.damping_time - t < 0.1 + 0.3  # the limit, plus a loaded machine
    assert bridge.counts[last] > 10  # the states went on arriving all along
    assert wait_for(lambda: first_damping(fake, t, bridge.safety.damping_kd) < np.inf, 1.0)


#: A second participant on the domain: it copies each of the robot's states (even ticks) with
#: the tick one microsecond on (newer, so the ordering rule alone would take it) and the base
#: rolled 70 degrees (the tilt trip, were it believed), for N copies.
INTRUDER = """
import math, sys, time
import numpy as np
from hardware.unitree import sdk2_messages, sdk2_types
from hardware.unitree.dds_link import DdsLink
domain, n = int(sys.argv[1]), int(sys.argv[2])
link = DdsLink(domain, "lo", "rt/lowstate", sdk2_types.LowState_, "rt/lowstate",
               sdk2_types.LowState_)
half = math.radians(70) / 2
sent, deadline = 0, time.monotonic() + 30
while sent < n and time.monotonic() < deadline:
    for raw in link.receive(0.01):
        state = sdk2_messages.decode_low_state(raw)
        if state.tick % 2:
            continue  # its own copy
        state.tick += 1
        state.quat = np.array([math.cos(half), math.sin(half), 0.0, 0.0])
        link.send(sdk2_messages.encode_low_state(state))
        sent += 1
print(sent)
"""
COPIES = 300


def test_a_second_lowstate_writer_on_the_domain_is_refused(fake_robot):
    domain = domain_id() + 17
    fake_robot("go2", transport="dds", domain_id=domain, start="standing", gantry=True)
    plant = UnitreeDdsPlant(robots.info("go2"), interface="lo", domain_id=domain,
                            link_process=False, connect_timeout=10.0,
                            safety=SafetyConfig(ramp_time=0.2, state_timeout=0.5)).bridge
    try:
        plant.prepare()
        intruder = subprocess.run([sys.executable, "-c", INTRUDER, str(domain), str(COPIES)],
                                  cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert intruder.returncode == 0, intruder.stderr
        assert int(intruder.stdout) == COPIES
        time.sleep(0.1)
        assert plant.damping_reason is None, plant.damping_reason  # no tilt trip
        refused = plant.counts["refused_packets"]
    finally:
        plant.close()
    # best effort: a starved bridge may lose some of either writer's samples
    assert 0.5 * COPIES <= refused <= COPIES, refused
    assert plant.counts["states"] > 200
    assert len(plant.stats()["lowstate_writer"]) == 36  # the GUID of the robot's writer
