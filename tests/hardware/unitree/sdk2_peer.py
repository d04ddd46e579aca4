"""A robot's side of SDK2 low-level control written with Unitree's own Python SDK
(``unitree_sdk2py``, PyPI ``unitree-sdk2py-dimos``): its ChannelPublisher sends rt/lowstate,
its ChannelSubscriber takes rt/lowcmd, and its compiled CRC library seals and checks the
messages. The bridge is thus checked against Unitree's channels (their QoS, discovery) and
CRC rather than against itself.

The samples are instances of the project's IDL classes: Unitree's own classes declare 8-bit
members ``uint8``, which cyclonedds 11 announces as TK_UINT8, while the project declares them
``byte`` (TK_BYTE, what Cyclone 0.10.2 on the robots announces); cyclonedds 11 does not match
the two, so a reader of one never sees a writer of the other (tried, also with type coercion
allowed). That the two declarations put the same bytes on the wire is checked separately
(``test_sdk2_oracle.py``). The SDK's CRC packs the message by member name, so it seals and
checks these instances as it does its own.

    python sdk2_peer.py DOMAIN_ID [--bad-crc-every N]

Publishes at 500 Hz on interface ``lo`` until SIGINT/SIGTERM, then prints one JSON line:
states sent (and how many with a deliberately wrong CRC), commands taken, how many carried a
CRC the SDK accepts, and the last command with gains on and the last command of all.
"""

from __future__ import annotations

import argparse
import json
import signal
import threading
import time

from unitree_sdk2py.core.channel import (
    ChannelFactoryInitialize,
    ChannelPublisher,
    ChannelSubscriber,
)
from unitree_sdk2py.utils.crc import CRC

from hardware.unitree.sdk2_types import LowCmd_, LowState_

#: A Go2 lying folded (hip, thigh, calf per leg), as a robot at rest reports it.
LYING = [0.0, 1.2, -2.7] * 4


def motor_fields(msg: LowCmd_) -> dict:
    m = msg.motor_cmd
    return {k: [getattr(m[i], k) for i in range(20)] for k in ("mode", "q", "dq", "tau", "kp",
                                                                "kd")}


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
            out["head"], out["level_flag"] = list(msg.head), msg.level_flag
            fields = motor_fields(msg)
            out["last"] = fields
            if any(k > 0 for k in fields["kp"]):
                out["last_servo"] = fields

    sub = ChannelSubscriber("rt/lowcmd", LowCmd_)
    sub.Init(on_command, 10)
    pub = ChannelPublisher("rt/lowstate", LowState_)
    pub.Init()
    state = LowState_()
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
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
