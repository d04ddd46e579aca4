"""Terrain maps from a ROS 2 topic over DDS (``map_input.source.type: ros2``).

The message is ``legged_mpc_msgs/msg/HeightMap`` (DDS type
``legged_mpc_msgs::msg::dds_::HeightMap_``), the fields of every map message
(:mod:`mpc.app.maps.map_source`) behind a ROS header:

    std_msgs/Header header   # frame_id: the frame the robot plans in (its odom frame)
    float64 resolution       # m between samples, > 0
    float64 origin_x         # world x of heights[0] (m)
    float64 origin_y
    uint32 rows              # samples along y
    uint32 cols              # samples along x
    float64[] heights        # rows * cols, row-major: heights[r * cols + c]

A ROS 2 package with that ``msg/HeightMap.msg`` publishes it from rclpy or rclcpp (a
``grid_map`` layer or an elevation map converts field by field). It is read on ``topic``
through the run's ROS 2 participant (the ``ros2:`` section: domain, interface) with rclcpp's
default QoS (reliable, volatile, keep-last 10), or best effort with ``qos: sensor_data``. A
background thread takes the messages; a valid one replaces the map the run has not taken
yet. Refused and counted, with one warning naming what is wrong (at most one a second,
:mod:`hardware.refusals`), the last good map staying: bytes that do not decode
(``undecodable``) and a grid that is wrong (``invalid``: a length other than rows · cols,
NaN or inf, a resolution of zero or below, fewer than 2 x 2 samples).

No ``from __future__ import annotations`` here: cyclonedds resolves the annotations.
"""

import logging
import threading
from dataclasses import dataclass, field

import cyclonedds.idl as idl
import cyclonedds.idl.annotations as annotate
import cyclonedds.idl.types as types

from hardware.map_receiver import MapReceiver
from hardware.refusals import UNDECODABLE
from hardware.ros2 import dds
from hardware.ros2.messages import Header
from mpc.tasks.terrain_map import HeightMap

log = logging.getLogger(__name__)


@dataclass
@annotate.final
class HeightMapMsg(idl.IdlStruct, typename="legged_mpc_msgs::msg::dds_::HeightMap_"):
    """``legged_mpc_msgs/msg/HeightMap`` (see the module docstring)."""

    header: Header = field(default_factory=Header)
    resolution: types.float64 = 0.0
    origin_x: types.float64 = 0.0
    origin_y: types.float64 = 0.0
    rows: types.uint32 = 0
    cols: types.uint32 = 0
    heights: types.sequence[types.float64] = field(default_factory=list)


def message(terrain: HeightMap, frame_id: str = "odom") -> HeightMapMsg:
    """The message of ``terrain``."""
    rows, cols = terrain.shape
    return HeightMapMsg(Header(frame_id=frame_id), terrain.resolution, terrain.origin[0],
                        terrain.origin[1], rows, cols, terrain.heights.ravel().tolist())


class Ros2MapSource(MapReceiver):
    name = "ros2"

    def __init__(self, topic: str = "/mpc/height_map", qos: str = "default", ros2=None):
        """``ros2``: the config's ``ros2`` section (domain, interface); None: its defaults."""
        super().__init__(f"map_input ros2 {topic}", log)
        self.check_options({"topic": topic, "qos": qos})
        domain_id = getattr(ros2, "domain_id", 0)
        interface = getattr(ros2, "interface", "")
        dds.check_domain(domain_id, interface)
        self.topic = topic
        self.reader = dds.Reader(dds.participant(domain_id, interface), topic, HeightMapMsg, qos)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._receive, name="ros2-map", daemon=True)
        self._thread.start()

    @classmethod
    def check_options(cls, options: dict) -> None:
        dds.check_topic(options.get("topic", "/mpc/height_map"))
        dds.qos(options.get("qos", "default"))

    def describe(self) -> str:
        return f"ROS 2 topic {self.topic}"

    def _receive(self) -> None:
        self.reader.serve(self.handle, self._stop, self.refused, 0.05)

    def handle(self, data: bytes) -> None:
        """Take one sample (its CDR bytes), as the receiving thread does."""
        try:
            msg = HeightMapMsg.deserialize(data)
        except Exception as e:  # any decoding failure of foreign bytes
            self.refused.refuse(UNDECODABLE, f"{len(data)} B, {type(e).__name__}")
            return
        self.receive(msg)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(1.0)
        self.reader.close()
