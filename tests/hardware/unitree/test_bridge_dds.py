"""The SDK2 bridge (Go2, H1) on cyclonedds over ``lo``: against a fake robot in a separate
process and in-process for the faults; the motion-service release against a stand-in service."""

import json
import signal
import threading
import time

import numpy as np
import pytest
from unitree_helpers import (
    assert_stale_state_damps_within_50_ms,
    commands,
    domain_id,
    start_fake_process,
)

import robots
from hardware.safety.layer import SafetyConfig
from hardware.unitree import sdk2_types as st
from hardware.unitree.dds_link import domain_config, interfaces, is_loopback, participant
from hardware.unitree.dds_plant import DdsBridge, UnitreeDdsPlant
from hardware.unitree.udp_link import LinkError

# Tests of other behaviour tolerate a loaded machine; the stale-state tests tighten this.
FAST = dict(ramp_time=0.4, state_timeout=0.5, max_command_age=0.5)


def dds_bridge(name: str, domain: int, **options) -> DdsBridge:
    """The bridge itself, in this process."""
    options.setdefault("safety", SafetyConfig(**FAST))
    return UnitreeDdsPlant(robots.info(name), interface="lo", domain_id=domain,
                           link_process=False, **options).bridge


def test_exchanges_lowstate_and_lowcmd_with_a_separate_process():
    domain = domain_id() + 1
    fake = start_fake_process(["--robot", "go2", "--transport", "dds", "--interface", "lo",
                               "--domain-id", str(domain)])
    try:
        plant = dds_bridge("go2", domain, connect_timeout=20.0,  # a gentle stand-up
                           safety=SafetyConfig(ramp_time=1.0, state_timeout=0.5))
        try:
            plant.prepare()
            time.sleep(1.5)
            state = plant.read_state()
            home = plant.map.home[plant.map.actuator_slots]
            assert np.max(np.abs(state.qpos[7:] - home)) < 0.25  # PD under the robot's weight
            assert state.qpos[2] > 0.2  # stood up from lying
            assert plant.counts["states"] > 200 and plant.counts["bad_checksum"] == 0
        finally:
            plant.close()
    finally:
        fake.send_signal(signal.SIGINT)
        out, err = fake.communicate(timeout=30)
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["commands"] > 200, err
    assert summary["bad_checksum"] == 0 and summary["wrong_mode"] == 0
    assert summary["stood"] and not summary["fell"]


def test_stale_state_commands_damping_within_50_ms(fake_robot):
    fake = fake_robot("go2", "dds")
    plant = dds_bridge("go2", fake_domain(fake), safety=SafetyConfig(ramp_time=0.2,
                                                                     state_timeout=0.5))
    try:
        plant.prepare()
        plant.safety.state_timeout = 0.02  # tight only now: a busy machine may stall startup
        time.sleep(0.1)
        assert_stale_state_damps_within_50_ms(fake, plant)
    finally:
        plant.close()


def test_bad_state_checksums_are_dropped_and_counted(fake_robot):
    fake = fake_robot("go2", "dds")
    fake.corrupt_every = 4
    plant = dds_bridge("go2", fake_domain(fake))
    try:
        plant.prepare()
        time.sleep(0.2)
        assert plant.counts["bad_checksum"] > 10
        assert plant.damping_reason is None
    finally:
        plant.close()


def test_h1_legs_by_torque_upper_body_held_torques_clamped(fake_robot, caplog):
    fake = fake_robot("h1", "dds", start="standing", gantry=True)
    plant = dds_bridge("h1", fake_domain(fake), safety=SafetyConfig(
        ramp_time=0.2, state_timeout=0.5, max_command_age=0.5))
    try:
        plant.prepare()
        m = plant.map
        ctrl = np.zeros(plant.model.nu)
        ctrl[3] = 500.0  # left knee: limit 300 N m
        t = time.monotonic()
        plant.read_state()  # a command is computed from a state
        plant.send(ctrl)
        time.sleep(0.05)
        legs, locked = m.actuator_slots, m.locked
        c = commands(fake, t)
        # The controller's commands: legs by torque, upper body held (then the legs go limp and
        # the robot may trip to damping; those later commands do not count here).
        run = np.all(c["kp"][:, legs] == 0, axis=1) & np.all(c["kp"][:, locked] > 0, axis=1)
        assert run.any()
        c = {k: v[run] for k, v in c.items()}
        assert np.all(c["kd"][:, legs] == 0) and np.all(c["q"][:, legs] > 1e9)  # torque only
        assert np.all(c["tau"][:, m.actuator_slots[3]] == 300.0)
        np.testing.assert_allclose(c["q"][:, locked], np.broadcast_to(m.home[locked],
                                                                      c["q"][:, locked].shape),
                                   atol=1e-6)
        assert np.all(c["kp"][:, locked] > 0)
        assert fake.sim.wrong_mode == 0  # 0x0A for hips/knees/torso, 0x01 for ankles/arms
        assert "clamped torque" in caplog.text
    finally:
        plant.close()


def test_dry_run_creates_no_command_writer(fake_robot):
    fake = fake_robot("go2", "dds")
    plant = dds_bridge("go2", fake_domain(fake), safety=SafetyConfig(dry_run=True, **FAST))
    try:
        plant.prepare()
        plant.read_state()  # a command is computed from a state
        plant.send(plant.map.home[plant.map.actuator_slots])
        time.sleep(0.2)
        assert plant.link.writer is None
        assert fake.counts["commands"] == 0
    finally:
        plant.close()


def test_wrong_interface_is_a_clear_error():
    with pytest.raises(LinkError, match=r"no network interface 'eth9' \(available: .*lo"):
        UnitreeDdsPlant(robots.info("go2"), interface="eth9", domain_id=domain_id(),
                        link_process=False)


def test_no_robot_is_a_clear_error():
    with pytest.raises(LinkError, match="no state from the robot at rt/lowstate"):
        dds_bridge("go2", domain_id() + 2, connect_timeout=0.3)


def test_motion_service_release():
    """Against a stand-in for the robot's motion_switcher, built from the project's types:
    CheckMode reports a mode until ReleaseMode has been called."""
    domain = domain_id() + 3
    dp = participant(domain, "lo")
    from cyclonedds.pub import DataWriter
    from cyclonedds.sub import DataReader
    from cyclonedds.topic import Topic

    from hardware.unitree import motion_switcher as ms

    requests = DataReader(dp, Topic(dp, ms.REQUEST_TOPIC, st.Request_))
    responses = DataWriter(dp, Topic(dp, ms.RESPONSE_TOPIC, st.Response_))
    calls, stop = [], threading.Event()

    def serve():
        mode = "normal"
        while not stop.is_set():
            for req in requests.take(N=8):
                if not hasattr(req, "header"):
                    continue
                api = req.header.identity.api_id
                calls.append(api)
                if api == ms.RELEASE_MODE:
                    mode = ""
                resp = st.Response_()
                resp.header.identity.id = req.header.identity.id
                resp.header.identity.api_id = api
                resp.data = json.dumps({"form": "0", "name": mode})
                responses.write(resp)
            time.sleep(0.005)

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    try:
        ms.release_motion_service(dp)
    finally:
        stop.set()
        server.join()
    assert ms.RELEASE_MODE in calls and calls[-1] == ms.CHECK_MODE


def fake_domain(fake) -> int:
    """The DDS domain an in-process fake robot serves."""
    return fake.link.dp.domain_id


def test_on_loopback_discovery_also_goes_by_unicast():
    """Cyclone DDS 0.10.2 (Unitree's SDK and programs) has multicast off on loopback and finds
    the participants on this host by unicast only; the bridge names 127.0.0.1 as a peer there
    (the live exchange with it is ``test_sdk2_oracle.py``), and on a robot's wired interface
    leaves discovery to multicast as before."""
    assert is_loopback("lo")
    assert '<Peer address="127.0.0.1"/>' in domain_config(5, "lo")
    for name in (name for name in interfaces() if not is_loopback(name)):
        assert "<Peers>" not in domain_config(5, name)
