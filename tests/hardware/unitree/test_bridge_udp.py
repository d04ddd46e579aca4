"""The legacy UDP bridge (A1, Go1) against a fake robot on 127.0.0.1: startup, watchdogs,
guards and trips, each checked on what the robot received."""

import logging
import math
import time

import numpy as np
import pytest
from unitree_helpers import (
    assert_stale_state_damps_within_50_ms,
    commands,
    first_damping,
    free_udp_port,
    wait_for,
)

import robots
from hardware.safety.layer import SafetyConfig
from hardware.unitree.link_process import LinkProcessPlant
from hardware.unitree.udp_link import LinkError
from hardware.unitree.udp_plant import UdpBridge, UnitreeUdpPlant


@pytest.mark.parametrize("name", ["a1", "go1"])
def test_ramps_from_lying_to_home_and_holds(name, fake_robot, udp_bridge):
    fake = fake_robot(name)
    lying = fake.sim.data.qpos[2]
    plant = udp_bridge(fake)
    assert plant.phase == "hold"
    time.sleep(0.3)
    m = plant.map
    q = fake.sim.data.qpos[fake.sim.qadr]
    home = m.home[fake.sim.slots]
    assert np.max(np.abs(q - home)) < 0.25  # PD under the robot's weight
    assert fake.sim.data.qpos[2] > lying + 0.1
    c = commands(fake)
    assert np.all(c["mode"][-1][m.used] == 0x0A) and np.all(c["kp"][-1][m.used] > 0)
    state = plant.read_state()
    # model order = slot order here; the state read is a few ms older than the simulation
    np.testing.assert_allclose(state.qpos[7:], q, atol=0.05)


def test_stale_state_commands_damping_within_50_ms(fake_robot, udp_bridge):
    fake = fake_robot("go1")
    plant = udp_bridge(fake, safety=SafetyConfig(ramp_time=0.2, state_timeout=0.5))
    plant.safety.state_timeout = 0.02  # tight only now: a busy machine may stall the startup
    time.sleep(0.2)
    assert_stale_state_damps_within_50_ms(fake, plant)


def test_bad_state_checksums_are_dropped_and_counted(fake_robot, udp_bridge):
    fake = fake_robot("a1")
    fake.corrupt_every = 3
    plant = udp_bridge(fake)
    time.sleep(0.3)
    assert plant.counts["bad_checksum"] > 10
    assert plant.counts["states"] > plant.counts["bad_checksum"]
    assert plant.damping_reason is None


def test_nan_from_the_controller_never_reaches_the_wire(fake_robot, udp_bridge):
    fake = fake_robot("a1")
    plant = udp_bridge(fake)
    ctrl = plant.map.home[plant.map.actuator_slots].copy()
    plant.read_state()  # a command is computed from a state
    plant.send(ctrl)
    time.sleep(0.05)
    ctrl[4] = np.nan
    t_nan = time.monotonic()
    plant.read_state()  # a command is computed from a state
    plant.send(ctrl)
    assert plant.damping_reason.startswith("non-finite")
    time.sleep(0.05)
    c = commands(fake)
    for f in ("q", "dq", "tau", "kp", "kd"):
        assert np.all(np.isfinite(c[f]))
    assert first_damping(fake, t_nan, plant.safety.damping_kd) < math.inf
    assert np.all(commands(fake, t_nan + 0.01)["kp"] == 0)


def test_out_of_range_targets_and_gains_are_clamped_and_logged(fake_robot, udp_bridge, caplog):
    fake = fake_robot("a1")
    limits = SafetyConfig(ramp_time=0.3, state_timeout=0.5, max_command_age=0.5, max_kp=120.0,
                          max_kd=4.0)
    plant = udp_bridge(fake, kp=[400.0], kd=[20.0], safety=limits)
    m = plant.map
    ctrl = m.home[m.actuator_slots].copy()
    ctrl[2] = -3.5  # FR calf, range -2.7 .. -0.916
    with caplog.at_level(logging.WARNING, logger="hardware.safety.layer"):
        plant.read_state()  # a command is computed from a state
        plant.send(ctrl)
        assert wait_for(lambda: plant.stats()["clamps"].get("Kp", 0) > 0, 2.0)
        time.sleep(0.05)
    c = commands(fake, time.monotonic() - 0.04)
    assert len(c["kp"]) > 0
    assert np.all(c["kp"][:, m.used] == plant.safety.max_kp)
    assert np.all(c["kd"][:, m.used] == plant.safety.max_kd)
    assert np.all(c["q"][:, 2] >= m.lower[2] - 1e-6)
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "clamped Kp" in messages and "clamped Kd" in messages
    assert "clamped joint target" in messages
    assert plant.stats()["clamps"]["Kp"] > 0


def test_silent_controller_means_damping(fake_robot, udp_bridge):
    fake = fake_robot("a1")
    limits = SafetyConfig(ramp_time=0.2, state_timeout=0.5, max_command_age=0.5,
                          command_timeout=0.05)
    plant = udp_bridge(fake, safety=limits)
    plant.read_state()  # a command is computed from a state
    plant.send(plant.map.home[plant.map.actuator_slots])
    assert wait_for(lambda: plant.damping_reason is not None, 1.0)
    assert plant.damping_reason.startswith("controller silent")


def test_remote_estop_buttons(fake_robot, udp_bridge):
    fake = fake_robot("go1")
    plant = udp_bridge(fake)
    fake.press(["L2"])  # one of the two: nothing happens
    time.sleep(0.1)
    assert plant.damping_reason is None
    t = time.monotonic()
    fake.press(["L2", "B"])
    assert wait_for(lambda: plant.damping_reason is not None, 1.0)
    assert plant.damping_reason == "e-stop: remote buttons L2+B"
    time.sleep(0.05)
    assert first_damping(fake, t, plant.safety.damping_kd) < math.inf


def test_tilt_tripwire(fake_robot, udp_bridge):
    fake = fake_robot("a1")
    plant = udp_bridge(fake)
    half = math.radians(70) / 2  # roll the simulated robot 70 degrees
    fake.sim.data.qpos[3:7] = [math.cos(half), math.sin(half), 0.0, 0.0]
    assert wait_for(lambda: plant.damping_reason is not None, 1.0)
    assert plant.damping_reason.startswith("tilt: roll 70 deg")


def test_dry_run_sends_no_motion(fake_robot, udp_bridge):
    fake = fake_robot("a1")
    plant = udp_bridge(fake, safety=SafetyConfig(dry_run=True, state_timeout=0.5,
                                                 max_command_age=0.5))
    plant.read_state()  # a command is computed from a state
    plant.send(plant.map.home[plant.map.actuator_slots])
    time.sleep(0.2)
    c = commands(fake)
    assert len(c["t"]) > 10  # it keeps the state stream alive ...
    assert np.all(c["mode"] == 0) and np.all(c["kp"] == 0) and np.all(c["kd"] == 0)
    assert plant.read_state().qpos[2] < 0.15  # ... and the robot stays down


def test_unanswered_address_is_a_clear_error():
    port = free_udp_port()  # nobody listens there
    with pytest.raises(LinkError, match=r"no state from the robot at 127\.0\.0\.1:\d+"):
        UnitreeUdpPlant(robots.info("a1"), robot_ip="127.0.0.1", robot_port=port,
                        local_port=free_udp_port(), connect_timeout=0.3, link_process=False)


def test_the_link_runs_in_a_child_process_unless_link_process_is_false(fake_robot):
    fake = fake_robot("go1")
    safety = SafetyConfig(ramp_time=0.3, state_timeout=0.5, max_command_age=0.5)
    for link_process, kind in ((True, LinkProcessPlant), (False, UdpBridge)):
        plant = UnitreeUdpPlant(fake.robot, robot_ip="127.0.0.1", robot_port=fake.port,
                                local_port=free_udp_port(), link_process=link_process,
                                safety=safety)
        try:
            assert type(plant.bridge) is kind
            assert plant.read_state().qpos.shape == (19,)
        finally:
            plant.close()
    assert fake.counts["commands"] > 0


@pytest.mark.parametrize("options, message", [
    ({"robot_ip": "192.168.123.300"}, "not an IPv4 address"),
    ({"robot_port": 70000}, "not a UDP port"),
])
def test_bad_addresses(options, message):
    with pytest.raises(LinkError, match=message):
        UnitreeUdpPlant(robots.info("go1"), local_port=free_udp_port(), link_process=False,
                        **options)


def test_wrong_robot_for_the_protocol():
    with pytest.raises(ValueError, match="unitree_dds"):
        UnitreeUdpPlant(robots.info("go2"), local_port=free_udp_port(), link_process=False)


def test_the_bridge_damps_on_a_non_finite_command(fake_robot, udp_bridge):
    """A NaN built into a command (any phase) is damped by the clamp in that very packet and
    latches damping; the robot receives nothing non-finite."""
    fake = fake_robot("go1")
    plant = udp_bridge(fake)
    bad = plant.map.hold_command(plant.map.home)
    bad.q[4] = math.nan
    sent = time.monotonic()
    plant._send(None, lambda: bad, sent)
    assert plant.damping_reason.startswith("non-finite motor command")
    assert wait_for(lambda: first_damping(fake, sent, plant.safety.damping_kd) < math.inf, 2.0)
    c = commands(fake, sent)
    assert all(np.isfinite(c[k]).all() for k in ("q", "dq", "tau", "kp", "kd"))
    # the packet with the NaN: that slot damped, the others still holding
    slot_damped = (c["kp"][:, 4] == 0) & (c["kd"][:, 4] == plant.safety.damping_kd)
    assert np.any(slot_damped & (c["kp"][:, 0] > 0))
