"""TEST ONLY: the base state a fake robot's simulation streams on loopback.

A real robot has no such stream. The fake robot (``mpc-fake-robot --truth-port N``) sends its
simulated base pose and twist with every state message; this source receives them, so an
end-to-end test exercises the bridge and the controller without the errors of an estimator.
Datagram (little-endian, 108 B): tick u32, time f64, pos f64[3], quat f64[4] (w, x, y, z),
linear velocity f64[3] (world), angular velocity f64[3] (body).
"""

from __future__ import annotations

import struct
from typing import ClassVar

import mujoco
import numpy as np

from hardware.estimation.base_state import BaseState, BaseStateSource, ImuSample
from hardware.udp import bound_socket
from robots.info import RobotInfo

TRUTH = struct.Struct("<Id3d4d3d3d")


def pack_truth(tick: int, time: float, qpos: np.ndarray, qvel: np.ndarray) -> bytes:
    """The datagram of a free-joint state (MuJoCo qpos[0:7], qvel[0:6])."""
    return TRUTH.pack(tick & 0xFFFFFFFF, time, *qpos[0:7], *qvel[0:6])


class SimTruth(BaseStateSource):
    #: Bounds of the options, read by mpc.app.schema.check_kwargs (see mpc/app/schema.py).
    RANGES: ClassVar[dict[str, dict[str, float]]] = {"port": {"min": 1, "max": 65535}}

    def __init__(self, model: mujoco.MjModel, robot: RobotInfo, port: int = 17020,
                 host: str = "127.0.0.1"):
        try:
            self.sock = bound_socket(host, port)
        except OSError as e:
            raise ValueError(f"sim_truth: cannot listen on {host}:{port}: {e.strerror}") from None
        self.last: BaseState | None = None
        self.tick = -1
        self.received = 0

    def update(self, imu: ImuSample, joint_q: np.ndarray, joint_dq: np.ndarray) -> None:
        while True:
            try:
                data = self.sock.recv(256)
            except BlockingIOError:
                return
            if len(data) != TRUTH.size:
                continue
            v = TRUTH.unpack(data)
            self.tick = v[0]
            self.received += 1
            self.last = BaseState(imu.time, np.array(v[2:5]), np.array(v[5:9]),
                                  np.array(v[9:12]), np.array(v[12:15]))

    def estimate(self) -> BaseState | None:
        return self.last

    def health(self) -> dict[str, float]:
        return {"truth_samples": float(self.received)}

    def close(self) -> None:
        self.sock.close()
