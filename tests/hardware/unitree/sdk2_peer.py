"""A robot's side of SDK2 low-level control, written as a program on the robot would be: only
Unitree's Python SDK (``unitree_sdk2py``, PyPI ``unitree-sdk2py-dimos``) and its own IDL
classes, on cyclonedds 0.10.2, the Cyclone DDS release the robots run. Its ChannelPublisher
sends rt/lowstate, its ChannelSubscriber takes rt/lowcmd, and its compiled CRC library seals
and checks the messages, so the bridge is checked against Unitree's channels (their QoS,
discovery), types and CRC rather than against itself.

It runs in a virtual environment of its own (``make sdk2-peer-env``): on cyclonedds 0.10.2
Unitree's ``uint8`` members are announced as TK_BYTE, as on the robots, which is what the
project's ``byte`` members are announced as on cyclonedds 11; on cyclonedds 11 Unitree's
classes would be announced as TK_UINT8 and never match the bridge. Nothing of the project is
imported here (the JSON line says which modules were loaded from where).

    python sdk2_peer.py DOMAIN_ID [--bad-crc-every N]

Publishes at 500 Hz on interface ``lo`` until SIGINT/SIGTERM, then prints one JSON line:
states sent (and how many with a deliberately wrong CRC), commands taken, how many carried a
CRC the SDK accepts, the last command with gains on and the last command of all, and what the
process ran on (cyclonedds version, the classes' modules and type names).
"""

import argparse
import json
import signal
import sys
import threading
import time

import cyclonedds
from unitree_sdk2py.core.channel import (
    ChannelFactoryInitialize,
    ChannelPublisher,
    ChannelSubscriber,
)
from unitree_sdk2py.idl.default import unitree_go_msg_dds__LowState_
from unitree_sdk2py.idl.unitree_go.msg.dds_ import LowCmd_, LowState_
from unitree_sdk2py.utils.crc import CRC

#: A Go2 lying folded (hip, thigh, calf per leg), as a robot at rest reports it.
LYING = [0.0, 1.2, -2.7] * 4


def motor_fields(msg: LowCmd_) -> dict:
    m = msg.motor_cmd
    return {k: [getattr(m[i], k) for i in range(20)] for k in ("mode", "q", "dq", "tau", "kp",
                                                                "kd")}


def cyclonedds_version() -> str:
    from importlib.metadata import version

    return version("cyclonedds")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("domain", type=int)
    p.add_argument("--bad-crc-every", type=int, default=0)
    args = p.parse_args()
    stopping: list[bool] = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopping.append(True))
    ChannelFactoryInitialize(args.domain, "lo")
    crc = CRC()
    lock = threading.Lock()
    out = {"states_sent": 0, "bad_crc_sent": 0, "commands": 0, "crc_ok": 0,
           "head": None, "level_flag": None, "last_servo": None, "last": None}

    def on_command(msg: LowCmd_) -> None:
        ok = crc.Crc(msg) == msg.crc
        with lock:
            out["commands"] += 1
            out["crc_ok"] += ok
            out["command_class"] = f"{type(msg).__module__}.{type(msg).__qualname__}"
            out["head"], out["level_flag"] = list(msg.head), msg.level_flag
            fields = motor_fields(msg)
            out["last"] = fields
            if any(k > 0 for k in fields["kp"]):
                out["last_servo"] = fields

    sub = ChannelSubscriber("rt/lowcmd", LowCmd_)
    sub.Init(on_command, 10)
    pub = ChannelPublisher("rt/lowstate", LowState_)
    pub.Init()
    state = unitree_go_msg_dds__LowState_()
    state.head, state.level_flag = [0xFE, 0xEF], 0xFF
    state.imu_state.quaternion = [1.0, 0.0, 0.0, 0.0]
    state.imu_state.accelerometer = [0.0, 0.0, 9.81]
    for i, q in enumerate(LYING):
        state.motor_state[i].q, state.motor_state[i].mode = q, 1
    next_t = time.monotonic()
    while not stopping:
        state.tick += 1
        state.crc = crc.Crc(state)
        bad = args.bad_crc_every and state.tick % args.bad_crc_every == 0
        if bad:
            state.crc ^= 0x1
        pub.Write(state)
        with lock:
            out["states_sent"] += 1
            out["bad_crc_sent"] += bool(bad)
        next_t += 0.002
        time.sleep(max(0.0, next_t - time.monotonic()))
    with lock:
        out["runtime"] = {
            "python": sys.executable,
            "cyclonedds": cyclonedds_version(),
            "cyclonedds_path": cyclonedds.__file__,
            "state_class": f"{type(state).__module__}.{type(state).__qualname__}",
            "typenames": [LowState_.__idl_typename__, LowCmd_.__idl_typename__],
            "modules": sorted({name.split(".")[0] for name in sys.modules}),
        }
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
