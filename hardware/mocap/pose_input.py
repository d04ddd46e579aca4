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

Whatever arrives, the inputs keep receiving: a pose with a non-finite or absurd value (a
position beyond :data:`MAX_DISTANCE`, a quaternion component beyond 2, a zero quaternion, a
reported latency outside 0..1 s, a capture time that is not finite) is
refused by :class:`PoseStamper`, an LCM message that does not decode or repeats or precedes the
last frame number by :class:`LcmPoseInput`, a bad NatNet packet by the NatNet client; each is
counted by reason (``refused``) with a warning at most once a second.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from hardware.mocap.frames import MocapFrame, mocap_to_base, xyzw_to_wxyz
from hardware.mocap.natnet import NatNetClient
from hardware.mocap.natnet_packets import FrameOfData
from hardware.refusals import INVALID, Refusals

log = logging.getLogger(__name__)

#: A streamed position further than this from the mocap origin is refused (m).
MAX_DISTANCE = 10_000.0
#: The largest reported latency (s) taken as a real one.
MAX_LATENCY = 1.0

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
        #: Poses refused for their values.
        self.refused = Refusals("mocap poses", log)

    def __call__(self, pos_m, quat_m_wxyz, tracked: bool, received: float,
                 reported_latency: float, stream_time: float) -> bool:
        """Pass the pose on; False if it was dropped (refused, or no robot clock yet)."""
        pos_m, quat_m_wxyz = np.asarray(pos_m, float), np.asarray(quat_m_wxyz, float)
        if not (np.all(np.abs(self.options.scale * pos_m) < MAX_DISTANCE)  # also NaN
                and np.all(np.abs(quat_m_wxyz) <= 2.0) and quat_m_wxyz @ quat_m_wxyz > 1e-6):
            self.refused.refuse(INVALID, "a non-finite or absurd position or quaternion")
            return False
        if not 0.0 <= reported_latency <= MAX_LATENCY:  # also NaN
            self.refused.refuse(INVALID, f"reported latency {reported_latency!r} s")
            return False
        if self.options.clock == "stream":
            capture = stream_time
        else:
            capture = self.to_robot_clock(received - reported_latency
                                          - self.options.transport_latency)
            if capture is None:
                self.unclocked += 1
                return False
        if not math.isfinite(capture):
            self.refused.refuse(INVALID, f"capture time {capture!r} s")
            return False
        pos, quat = mocap_to_base(self.frame, pos_m, quat_m_wxyz)
        self.sink(capture, pos, quat, tracked)
        return True


class NatNetPoseInput:
    """Feeds one rigid body of a NatNet stream to a :class:`PoseStamper`."""

    def __init__(self, options: MocapOptions, stamper: PoseStamper, connect_timeout: float = 5.0):
        self.options = options
        self.stamper = stamper
        self.missing = 0
        self.client = NatNetClient(options.server, options.local, options.multicast_group,
                                   options.command_port, options.data_port, self._on_frame)
        self.client.connect(connect_timeout)

    @property
    def refused(self) -> Refusals:
        """Packets the NatNet client refused."""
        return self.client.refused

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
