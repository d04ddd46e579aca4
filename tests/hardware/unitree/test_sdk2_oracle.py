"""The SDK2 messages against Unitree's own Python SDK (``unitree_sdk2py``, PyPI
``unitree-sdk2py-dimos`` 1.0.3: Unitree's IDL classes and its compiled CRC library), not against
the project's own types: every member of LowCmd_/LowState_ filled at random serialises to the
same bytes from Unitree's classes and the project's, the project's encoders produce the sample
Unitree's classes and CRC make from the same values (these run here, on cyclonedds 11), and a
process running the SDK with Unitree's own classes on cyclonedds 0.10.2, as the robots do,
drives a bridge over real DDS in both directions (see ``sdk2_peer.py``)."""

import dataclasses
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from unitree_helpers import ROOT, domain_id, wait_for
from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowCmd_ as SdkLowCmd
from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowState_ as SdkLowState
from unitree_sdk2py.utils.crc import CRC

import robots
from hardware.lowlevel import LowState, MotorCommand, remote_block
from hardware.safety.layer import SafetyConfig
from hardware.unitree import sdk2_messages as sm
from hardware.unitree import sdk2_types as st
from hardware.unitree.dds_plant import UnitreeDdsPlant
from hardware.unitree.legacy_packets import PacketError
from hardware.unitree.udp_link import LinkError

_INTS = {"uint8": (0, 255), "byte": (0, 255), "int8": (-128, 127), "uint16": (0, 65535),
         "int16": (-32768, 32767), "uint32": (0, 2**32 - 1), "int32": (-2**31, 2**31 - 1)}


def _kind(annotation) -> str:
    text = repr(annotation)
    for name in ("float32", *sorted(_INTS, key=len, reverse=True)):
        if f"'{name}'" in text or f"types.{name}" in text or f"[{name}" in text:
            return name
    raise AssertionError(f"unknown member type {text}")


def randomise(msg, rng) -> None:
    """Every scalar member of ``msg`` (nested structs and arrays too) set at random, from the
    member's declared type as Unitree's class declares it."""
    for f in dataclasses.fields(msg):
        value = getattr(msg, f.name)
        if dataclasses.is_dataclass(value):
            randomise(value, rng)
            continue
        if isinstance(value, list) and value and dataclasses.is_dataclass(value[0]):
            for item in value:
                randomise(item, rng)
            continue
        kind = _kind(type(msg).__annotations__[f.name])
        n = len(value) if isinstance(value, list) else None
        size = n or 1
        if kind == "float32":
            new = rng.normal(scale=100.0, size=size).astype(np.float32).tolist()
        else:
            lo, hi = _INTS[kind]
            new = [int(v) for v in rng.integers(lo, hi, size=size, endpoint=True)]
        setattr(msg, f.name, new if n is not None else new[0])


@pytest.mark.parametrize("sdk_cls,ours_cls", [(SdkLowCmd, st.LowCmd_),
                                              (SdkLowState, st.LowState_)])
def test_every_member_serialises_like_unitrees_classes(sdk_cls, ours_cls, rng):
    """Unitree's classes declare u8 members ``uint8`` and the project ``byte``: the same bytes
    on the wire, member by member (a member out of order or of another width would differ)."""
    from unitree_sdk2py.idl.default import (
        unitree_go_msg_dds__LowCmd_,
        unitree_go_msg_dds__LowState_,
    )

    make = unitree_go_msg_dds__LowCmd_ if sdk_cls is SdkLowCmd else unitree_go_msg_dds__LowState_
    for _ in range(50):
        theirs = make()
        randomise(theirs, rng)
        wire = theirs.serialize()
        ours = ours_cls.deserialize(wire)
        assert ours.serialize() == wire
        assert sdk_cls.deserialize(ours.serialize()).serialize() == wire


def test_our_low_cmd_is_the_sample_unitrees_sdk_makes(rng):
    crc = CRC()
    for _ in range(50):
        cmd = MotorCommand(mode=rng.integers(0, 256, 20).astype(np.uint8),
                           q=rng.normal(size=20), dq=rng.normal(size=20),
                           tau=rng.normal(size=20), kp=rng.uniform(0, 100, 20),
                           kd=rng.uniform(0, 5, 20))
        remote = remote_block(["L2", "B"])
        from unitree_sdk2py.idl.default import unitree_go_msg_dds__LowCmd_

        msg = unitree_go_msg_dds__LowCmd_()
        msg.head, msg.level_flag = [0xFE, 0xEF], 0xFF
        msg.wireless_remote = list(remote)
        for i, m in enumerate(msg.motor_cmd):
            m.mode = int(cmd.mode[i])
            m.q, m.dq, m.tau, m.kp, m.kd = (float(np.float32(getattr(cmd, k)[i]))
                                            for k in ("q", "dq", "tau", "kp", "kd"))
        msg.crc = crc.Crc(msg)
        ours = sm.encode_low_cmd(cmd, remote)
        assert ours == msg.serialize()
        msg.crc ^= 1 << int(rng.integers(32))
        with pytest.raises(PacketError, match="checksum"):
            sm.decode_low_cmd(msg.serialize())


def test_our_low_state_is_the_sample_unitrees_sdk_makes(rng):
    from unitree_sdk2py.idl.default import unitree_go_msg_dds__LowState_

    crc = CRC()
    for _ in range(50):
        f32 = lambda n: rng.normal(size=n).astype(np.float32).astype(float)  # noqa: E731
        state = LowState(tick=int(rng.integers(2**32)), quat=f32(4), gyro=f32(3), accel=f32(3),
                         rpy=f32(3), q=f32(20), dq=f32(20), tau_est=f32(20),
                         mode=rng.integers(0, 256, 20).astype(np.uint8),
                         foot_force=rng.integers(-500, 500, 4).astype(float),
                         wireless_remote=remote_block(["L1", "Y"]))
        msg = unitree_go_msg_dds__LowState_()
        msg.head, msg.level_flag, msg.tick = [0xFE, 0xEF], 0xFF, state.tick
        imu = msg.imu_state
        imu.quaternion, imu.gyroscope = state.quat.tolist(), state.gyro.tolist()
        imu.accelerometer, imu.rpy = state.accel.tolist(), state.rpy.tolist()
        for i, m in enumerate(msg.motor_state):
            m.mode = int(state.mode[i])
            m.q = m.q_raw = float(state.q[i])
            m.dq = m.dq_raw = float(state.dq[i])
            m.tau_est = float(state.tau_est[i])
        msg.foot_force = [int(v) for v in state.foot_force]
        msg.wireless_remote = list(state.wireless_remote)
        msg.crc = crc.Crc(msg)
        sample = sm.encode_low_state(state)
        assert sample == msg.serialize()
        back = sm.decode_low_state(msg.serialize())  # the SDK's CRC passes our check
        np.testing.assert_array_equal(back.q, state.q)
        assert back.tick == state.tick


#: The peer's interpreter: a virtual environment inside the test's own, with cyclonedds 0.10.2
#: built against Debian's Cyclone DDS 0.10.2 and Unitree's SDK (``make sdk2-peer-env``).
PEER_PYTHON = Path(sys.prefix) / "sdk2-peer" / "bin" / "python"


def peer_python() -> Path:
    home = PEER_PYTHON.parent.parent
    if not (PEER_PYTHON.exists() and any(home.glob(".installed-*"))):
        pytest.fail(f"no SDK2 peer environment at {home} (Unitree's SDK on "
                    "cyclonedds 0.10.2): run `make test`, which builds it", pytrace=False)
    return PEER_PYTHON


def test_a_process_running_unitrees_sdk_exchanges_lowstate_and_lowcmd_with_the_bridge():
    """Unitree's SDK with its own IDL classes on cyclonedds 0.10.2 (a robot's side) and the
    bridge with the project's classes on cyclonedds 11. The SDK's ChannelPublisher sends
    rt/lowstate sealed by its CRC library, every 10th with a wrong CRC; the bridge takes the
    good ones, counts and drops the bad ones, ramps to home and holds it; the SDK's
    ChannelSubscriber takes rt/lowcmd and its CRC library accepts every command; the commands
    carry the hold pose, then, once the bridge closes, damping."""
    python = peer_python()
    domain = domain_id() + 7
    # -I: nothing from the environment or the working directory on the peer's path, so it runs
    # only what its own environment has (never the project's modules).
    peer = subprocess.Popen([str(python), "-I", str(ROOT / "tests/hardware/unitree/sdk2_peer.py"),
                             str(domain), "--bad-crc-every", "10"], cwd=python.parent,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        try:  # waits for the first state
            bridge = UnitreeDdsPlant(robots.info("go2"), interface="lo", domain_id=domain,
                                     link_process=False, connect_timeout=20.0,
                                     safety=SafetyConfig(ramp_time=0.4, state_timeout=0.5)).bridge
        except LinkError:
            if peer.poll() is not None:  # the peer died (e.g. its environment is broken)
                pytest.fail(f"the SDK2 peer exited: {peer.stderr.read()[-2000:]}")
            raise
        try:
            bridge.prepare()
            # Time enough on a loaded machine: 200 states and commands (0.4 s at 500 Hz).
            wait_for(lambda: min(bridge.counts["states"], bridge.counts["commands"]) > 200, 20.0)
            counts = dict(bridge.counts)
            assert bridge.damping_reason is None
        finally:
            bridge.close()
        time.sleep(0.2)
    finally:
        if peer.poll() is None:
            peer.send_signal(signal.SIGINT)
        out, err = peer.communicate(timeout=30)
    assert peer.returncode == 0 and out.strip(), f"the SDK2 peer failed: {err[-2000:]}"
    got = json.loads(out.strip().splitlines()[-1])
    runtime = got["runtime"]
    assert runtime["cyclonedds"] == "0.10.2", runtime
    assert runtime["state_class"].startswith("unitree_sdk2py.idl.unitree_go."), runtime
    assert got["command_class"].startswith("unitree_sdk2py.idl.unitree_go."), got
    assert runtime["typenames"] == ["unitree_go.msg.dds_.LowState_",
                                    "unitree_go.msg.dds_.LowCmd_"]
    assert not {"hardware", "robots", "mpc", "derivatives"} & set(runtime["modules"]), runtime
    print(f"bridge: {counts['states']} states taken, {counts['bad_checksum']} refused, "
          f"{counts['commands']} commands sent; SDK peer: {got['commands']} commands taken, "
          f"{got['crc_ok']} passed its CRC")
    assert counts["states"] > 200
    share = counts["bad_checksum"] / (counts["states"] + counts["bad_checksum"])
    assert 0.05 < share < 0.15, counts
    assert got["commands"] > 200 and got["crc_ok"] == got["commands"], err[-500:]
    assert got["head"] == [0xFE, 0xEF] and got["level_flag"] == 0xFF
    used, m = bridge.map.used, bridge.map
    servo, last = got["last_servo"], got["last"]
    np.testing.assert_array_equal(np.array(servo["q"])[used], m.home[used].astype(np.float32))
    np.testing.assert_array_equal(np.array(servo["kp"])[used], m.hold_kp[used].astype(np.float32))
    assert np.all(np.array(servo["mode"])[used] == 1)
    assert np.all(np.array(last["kp"])[used] == 0)
    np.testing.assert_allclose(np.array(last["kd"])[used], bridge.safety.damping_kd, rtol=1e-6)
