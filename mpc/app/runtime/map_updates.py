"""Maps received while running, applied between plans.

Before each planner iteration (in the planner's thread, so never while a plan steps the
planning model) :meth:`MapUpdates.apply` takes the source's newest map, if a new one arrived,
and lets the task follow it and the robot (:meth:`mpc.tasks.legged.LeggedTask.follow_map`:
the window moves, is re-sampled, written into the planning model's height field, and the
targets' maps are recomputed). When the terrain changed the derivative backend's caches are
cleared (a backend that reuses derivatives across plans, ``wasp``, would otherwise reuse
those of the old ground); the analytic backend reads the model's height field itself.
"""

from __future__ import annotations

import logging
import time as _time

import numpy as np

from mpc.app.maps.map_source import MapSource
from mpc.app.runtime.tally import Tally

log = logging.getLogger(__name__)


class MapUpdates:
    """The run's map source and what it has done (see the module docstring)."""

    def __init__(self, source: MapSource, task, planner):
        self.source = source
        self.task = task
        self.planner = planner
        #: Maps applied, window moves, and the delay from a map's arrival to its application.
        self.applied = 0
        self.changes = 0
        self.delay_ms = Tally()

    def apply(self, qpos: np.ndarray) -> bool:
        """Take a new map if there is one and move the window with the base at ``qpos``;
        whether the planning model's terrain changed."""
        got = self.source.take()
        received = None if got is None else got[0]
        changed = self.task.follow_map(received, qpos)
        if got is not None:
            self.applied += 1
            self.delay_ms.add((_time.monotonic() - got[1]) * 1e3)
        if changed:
            self.changes += 1
            self.planner.provider.reset()
        return changed

    def stats(self) -> dict:
        return {**self.source.stats(), "applied": self.applied, "terrain_changes": self.changes,
                "apply_delay_ms_median": self.delay_ms.median(),
                "apply_delay_ms_max": self.delay_ms.max()}

    def close(self) -> None:
        self.source.close()
