"""Terrain maps over LCM (``map_input.source.type: lcm``).

Messages are ``lcm_types.height_map_t`` (hardware/lcm/lcm_types/height_map_t.lcm; the fields
are those of every map message, :mod:`mpc.app.maps.map_source`) on ``channel``. A background
thread receives them; each valid one replaces the map the run has not taken yet, and the run
applies the newest between plans. A message that does not decode, or whose grid is wrong (a
length other than rows · cols, NaN or inf, a resolution of zero or below, fewer than 2 x 2
samples), is refused and counted with one warning naming what is wrong (at most one a second,
:mod:`hardware.refusals`); the last good map stays. :func:`encode` makes the message of a
map (what a mapping process, or a test, publishes).
"""

from __future__ import annotations

import logging

from hardware.lcm import DECODE_ERRORS, DEFAULT_URL, subscription
from hardware.lcm.lcm_types import height_map_t
from hardware.map_receiver import MapReceiver
from hardware.refusals import UNDECODABLE
from mpc.tasks.terrain_map import HeightMap

log = logging.getLogger(__name__)


def encode(terrain: HeightMap, utime: int = 0) -> bytes:
    """The ``height_map_t`` bytes of ``terrain``."""
    msg = height_map_t()
    msg.utime = int(utime)
    msg.origin_x, msg.origin_y = terrain.origin
    msg.resolution = terrain.resolution
    msg.rows, msg.cols = terrain.shape
    msg.heights = terrain.heights.ravel().tolist()
    msg.num_heights = len(msg.heights)
    return msg.encode()


class LcmMapSource(MapReceiver):
    name = "lcm"

    def __init__(self, lcm_url: str = DEFAULT_URL, channel: str = "TERRAIN_MAP"):
        super().__init__(f"map_input lcm {channel}", log)
        self.check_options({"lcm_url": lcm_url, "channel": channel})
        self.channel = channel
        self._subscription = subscription.Subscription(
            lcm_url, channel, self._on_message, self.refused, "map_input.source", "lcm-map")

    @classmethod
    def check_options(cls, options: dict) -> None:
        subscription.check_options(options, "map_input.source")

    def describe(self) -> str:
        return f"LCM channel {self.channel}"

    def _on_message(self, data: bytes) -> None:
        try:
            msg = height_map_t.decode(data)
        except DECODE_ERRORS as e:
            self.refused.refuse(UNDECODABLE, f"{len(data)} B, {e}")
            return
        self.receive(msg)

    def close(self) -> None:
        self._subscription.close()
