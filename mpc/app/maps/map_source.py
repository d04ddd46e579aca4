"""Where terrain maps come from while the robot runs.

**The map message** (the same fields over every transport: ``height_map_t`` over LCM,
``legged_mpc_msgs/msg/HeightMap`` over DDS): a grid of ground heights in metres, like a
``grid_map`` layer or an elevation map,

    rows, cols              samples along y and along x (each >= 2)
    resolution              metres between samples (> 0)
    origin_x, origin_y      world x, y of the first sample
    heights[rows * cols]    row-major: heights[r * cols + c] is the ground at
                            (origin_x + c · resolution, origin_y + r · resolution)

in the frame the robot plans in (the estimator's: x ahead of its start, the start at height
0), as :mod:`mpc.tasks.terrain_map` has it. A message whose heights are not rows · cols long,
hold a NaN or an infinity, or whose resolution is zero or below (or that does not decode) is
refused with one logged line naming what is wrong and counted; the last good map stays
(:func:`mpc.tasks.terrain_map.from_message` checks the grid).

A :class:`MapSource` receives in a thread of its own and keeps only the newest valid map; the
run takes it between plans (:meth:`MapSource.take`), never during one.
"""

from __future__ import annotations

import threading
import time as _time
from abc import ABC, abstractmethod

from mpc.tasks.terrain_map import HeightMap


class MapSource(ABC):
    """Receives map messages (see the module docstring). Subclasses take their options as
    keyword arguments (checked against a config's ``map_input.source`` section) and, when
    they map a simulated plant (``sim``), the plant as ``plant``; they receive in a thread
    and hand each valid map to :meth:`offer`."""

    #: Name in :data:`mpc.app.maps.MAP_SOURCES`.
    name: str = ""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._arrived = threading.Event()
        #: (map, monotonic arrival time, its number) of the newest valid map, or None.
        self._latest: tuple[HeightMap, float, int] | None = None
        self._taken = 0
        #: Valid maps received.
        self.accepted = 0

    @classmethod  # noqa: B027
    def check_options(cls, options: dict) -> None:
        """Raise ValueError (one line) if ``options`` cannot work; nothing is opened."""

    @classmethod  # noqa: B027
    def check_plant(cls, plant_cls: type) -> None:
        """Raise ValueError (one line) if the source cannot serve a run on a plant of
        ``plant_cls`` (``plant.type``)."""

    @classmethod
    def build(cls, options: dict, plant) -> MapSource:
        """The source for a run on ``plant`` (a source that maps the plant itself, ``sim``,
        overrides this)."""
        return cls(**options)

    def offer(self, terrain: HeightMap) -> None:
        """A valid map has arrived (the receiving thread): it replaces any not yet taken."""
        with self._lock:
            self.accepted += 1
            self._latest = (terrain, _time.monotonic(), self.accepted)
        self._arrived.set()

    def take(self) -> tuple[HeightMap, float] | None:
        """The newest valid map and its arrival (monotonic s) if it has not been taken yet,
        else None."""
        with self._lock:
            if self._latest is None or self._latest[2] == self._taken:
                return None
            terrain, arrival, self._taken = self._latest
        return terrain, arrival

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for a first valid map; whether one has arrived."""
        return self._arrived.wait(timeout)

    @abstractmethod
    def describe(self) -> str:
        """Where the maps come from, for messages (``LCM channel TERRAIN_MAP``)."""

    def stats(self) -> dict:
        """Maps taken and messages refused by reason, for the run's summary."""
        return {"accepted": self.accepted}

    def close(self) -> None:  # noqa: B027
        """Stop receiving and release what the source holds."""
