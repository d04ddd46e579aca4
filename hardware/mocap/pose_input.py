"""Mocap pose inputs: NatNet or LCM rigid-body poses, converted to base poses in the robot's
world and stamped with their capture time in the robot's clock, for the estimator.

Capture time ("pose latency"), by ``clock``:
- ``receive`` (hardware): local arrival time minus the latency the stream reports (NatNet:
  transmit - mid-exposure stamps over the server's clock rate; LCM: the message's ``latency``)
  minus ``transport_latency`` (network and client, measured or estimated by the user), mapped
  to the robot's clock with the offset learned from the robot's state messages;
- ``stream``: the stream's own timestamp is already in the robot's clock (a simulated robot
  streaming its own mocap, or clocks synchronized by PTP): NatNet's frame timestamp, or an LCM
  pose's ``utime`` minus its ``latency``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from hardware.mocap.frames import MocapFrame, mocap_to_base, xyzw_to_wxyz
from hardware.mocap.natnet import NatNetClient
from hardware.mocap.natnet_packets import FrameOfData

#: Receives (capture time in the robot's clock, base position, base quaternion, tracked).
PoseSink = Callable[[float, np.ndarray, np.ndarray, bool], None]


@dataclass(frozen=True)
class MocapOptions:
    """Where the base pose comes from (config section ``plant.mocap``)."""

    #: Bounds of the options, read by mpc.app.schema.check_kwargs (see mpc/app/schema.py).
    RANGES: ClassVar[dict[str, dict[str, float]]] = {
        "rigid_body": {"min": 0, "max": 2**31 - 1},
        "command_port": {"min": 1, "max": 65535},
        "data_port": {"min": 1, "max": 65535},
        "transport_latency": {"min": 0.0, "max": 1.0},
        "scale": {"gt": 0.0, "max": 10000.0},
        "world_offset_pos": {"min": -1000.0, "max": 1000.0},
        "world_offset_quat": {"min": -1.0, "max": 1.0},
        "body_offset_pos": {"min": -10.0, "max": 10.0},
        "body_offset_quat": {"min": -1.0, "max": 1.0},
    }

    #: ``natnet`` (OptiTrack Motive) or ``lcm`` (mocap_pose_t messages on ``pose_channel``).
    source: str = "natnet"
    rigid_body: int = 1
    server: str = "127.0.0.1"
    local: str = "127.0.0.1"
    #: "" for unicast.
    multicast_group: str = "239.255.42.99"
    command_port: int = 1510
    data_port: int = 1511
    pose_channel: str = "MOCAP_POSE"
    #: ``receive`` or ``stream`` (see the module docstring).
    clock: str = "receive"
    transport_latency: float = 0.0
    #: The frame conventions of :class:`hardware.mocap.frames.MocapFrame`.
    up_axis: str = "y"
    scale: float = 1.0
    world_offset_pos: tuple[float, ...] = (0.0, 0.0, 0.0)
    world_offset_quat: tuple[float, ...] = (1.0, 0.0, 0.0, 0.0)
    body_offset_pos: tuple[float, ...] = (0.0, 0.0, 0.0)
    body_offset_quat: tuple[float, ...] = (1.0, 0.0, 0.0, 0.0)

    def __post_init__(self):
        if self.source not in ("natnet", "lcm"):
            raise ValueError(f"mocap source must be natnet or lcm, got {self.source!r}")
        if self.clock not in ("receive", "stream"):
            raise ValueError(f"mocap clock must be receive or stream, got {self.clock!r}")

    def frame(self) -> MocapFrame:
        return MocapFrame(self.up_axis, self.scale, tuple(self.world_offset_pos),
                          tuple(self.world_offset_quat), tuple(self.body_offset_pos),
                          tuple(self.body_offset_quat))


class PoseStamper:
    """Converts a streamed rigid-body pose and passes it on with its capture time."""

    def __init__(self, options: MocapOptions, sink: PoseSink,
                 to_robot_clock: Callable[[float], float | None]):
        self.options = options
        self.frame = options.frame()
        self.sink = sink
        self.to_robot_clock = to_robot_clock
        #: Poses dropped because the robot's clock was not known yet.
        self.unclocked = 0

    def __call__(self, pos_m, quat_m_wxyz, tracked: bool, received: float,
                 reported_latency: float, stream_time: float) -> None:
        if self.options.clock == "stream":
            capture = stream_time
        else:
            capture = self.to_robot_clock(received - reported_latency
                                          - self.options.transport_latency)
            if capture is None:
                self.unclocked += 1
                return
        pos, quat = mocap_to_base(self.frame, pos_m, quat_m_wxyz)
        self.sink(capture, pos, quat, tracked)


class NatNetPoseInput:
    """Feeds one rigid body of a NatNet stream to a :class:`PoseStamper`."""

    def __init__(self, options: MocapOptions, stamper: PoseStamper, connect_timeout: float = 5.0):
        self.options = options
        self.stamper = stamper
        self.missing = 0
        self.client = NatNetClient(options.server, options.local, options.multicast_group,
                                   options.command_port, options.data_port, self._on_frame)
        self.client.connect(connect_timeout)

    def _on_frame(self, frame: FrameOfData, received: float) -> None:
        body = frame.body(self.options.rigid_body)
        if body is None:
            self.missing += 1
            return
        latency = frame.system_latency(self.client.info.clock_frequency) or 0.0
        self.stamper(body.pos, xyzw_to_wxyz(body.quat_xyzw), body.tracking_valid, received,
                     latency, frame.timestamp)

    def close(self) -> None:
        self.client.close()


def lcm_pose_handler(options: MocapOptions, stamper: PoseStamper):
    """An LCM subscription callback for ``mocap_pose_t`` messages of the configured body."""
    from hardware.lcm.lcm_types import mocap_pose_t

    def handle(channel: str, data: bytes) -> None:
        received = time.monotonic()
        msg = mocap_pose_t.decode(data)
        if msg.body_id != options.rigid_body:
            return
        stamper(np.array(msg.pos), np.array(msg.quat), bool(msg.tracking_valid), received,
                msg.latency, msg.utime * 1e-6 - msg.latency)

    return handle
