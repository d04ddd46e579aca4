"""What every transport's map source does with a decoded map message: check its grid, hand a
valid map to the run, refuse and count a bad one (:mod:`mpc.app.maps.map_source` states the
message and the rules)."""

from __future__ import annotations

import logging

import numpy as np

from hardware.refusals import INVALID, Refusals
from mpc.app.maps.map_source import MapSource
from mpc.tasks.terrain_map import MapError, from_message


class MapReceiver(MapSource):
    """A :class:`MapSource` over a transport: subclasses decode their bytes (refusing what does
    not decode through :attr:`refused`) and pass the message to :meth:`receive`."""

    def __init__(self, what: str, log: logging.Logger):
        """``what`` names the source in its refusal lines (``map_input lcm TERRAIN_MAP``)."""
        super().__init__()
        #: Messages refused (undecodable, a bad grid), and errors of the receiving thread.
        self.refused = Refusals(what, log)

    def receive(self, msg) -> None:
        """A decoded message (``rows``, ``cols``, ``heights``, ``resolution``, ``origin_x``,
        ``origin_y``): offered if its grid is valid, else refused with the reason."""
        try:
            terrain = from_message(msg.rows, msg.cols, np.asarray(msg.heights, dtype=float),
                                   msg.resolution, (msg.origin_x, msg.origin_y))
        except MapError as e:
            self.refused.refuse(INVALID, str(e))
            return
        self.offer(terrain)

    def stats(self) -> dict:
        """Maps taken, and messages refused by reason."""
        return {**super().stats(), "refused": self.refused.as_dict()}
