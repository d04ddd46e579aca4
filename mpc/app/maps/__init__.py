"""Terrain maps received while running, by source (``map_input.source.type`` in a config).

A source receives map messages in a thread of its own and keeps the newest valid one
(:class:`~mpc.app.maps.map_source.MapSource`); between plans the run hands it to the task
(:class:`~mpc.app.runtime.map_updates.MapUpdates`), whose planning model holds a local
window of it (:mod:`mpc.tasks.map_window`). The sources that read a transport (``lcm``: an
LCM channel; ``ros2``: a ROS 2 topic over DDS) are plug-ins above ``mpc``: entry points of
group ``legged_mpc.map_sources`` (see :mod:`common.registry`); ``sim``, the simulated robot's
own mapper (:mod:`mpc.app.maps.sim_mapper`), is built in.
"""

from __future__ import annotations

from common.registry import Registry
from mpc.app.maps.map_source import MapSource

MAP_SOURCES: Registry[MapSource] = Registry("map source", {
    "sim": "mpc.app.maps.sim_mapper:SimMapper",
}, group="map_sources")

__all__ = ["MAP_SOURCES", "MapSource"]
