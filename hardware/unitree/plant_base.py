"""The plants a config names for a Unitree robot (``unitree_udp``, ``unitree_dds``): their
common base and the bounds of the options they share."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from hardware.unitree.link_process import LinkProcessPlant
from mpc.app.plants.plant_base import Plant, PlantState
from robots.info import RobotInfo


class UnitreePlant(Plant):
    """A Unitree hardware plant: the controller's side of a bridge (a
    :class:`hardware.unitree.bridge.UnitreeBridge` subclass, built as ``bridge_cls(robot,
    **options)``) that runs in a child process (``link_process``) or in this one. Subclasses
    declare the options a config may set and pass them here."""

    realtime_only = True

    #: Bounds of the options every Unitree plant takes, read by mpc.app.schema.check_kwargs;
    #: a subclass adds its own (``RANGES = {**UnitreePlant.RANGES, ...}``).
    RANGES: ClassVar[dict[str, dict[str, float]]] = {
        "rate": {"min": 50.0, "max": 2000.0},
        "connect_timeout": {"gt": 0.0, "max": 60.0},
        "kp": {"min": 0.0, "max": 1000.0},
        "kd": {"min": 0.0, "max": 100.0},
        "link_nice": {"min": -20, "max": 19},
        "link_priority": {"min": 0, "max": 98},
    }

    def __init__(self, bridge_cls: type, robot: RobotInfo, options: dict, link_process: bool,
                 link_nice: int, link_priority: int = 0):
        """``link_nice``: the link process's niceness, added to the controller's;
        ``link_priority``: above 0, the link process runs under SCHED_FIFO at that priority
        (:mod:`mpc.app.runtime.priority`; one line if not permitted)."""
        #: What this plant talks to: the bridge itself, or its proxy in this process.
        self.bridge: Plant = (
            LinkProcessPlant(bridge_cls, robot, {**options, "link_nice": link_nice,
                                                 "link_priority": link_priority})
            if link_process else bridge_cls(robot, **options))

    @property
    def damping_reason(self) -> str | None:
        return self.bridge.damping_reason

    @property
    def interrupted_by(self) -> str | None:
        return self.bridge.interrupted_by

    @property
    def timestep(self) -> float:
        return self.bridge.timestep

    def read_state(self) -> PlantState:
        return self.bridge.read_state()

    def wireless_remote(self) -> bytes:
        """The 40-byte wireless-remote block of the robot's latest state (sticks, buttons)."""
        return self.bridge.wireless_remote()

    def send(self, ctrl: np.ndarray) -> None:
        self.bridge.send(ctrl)

    def set_planned_stance(self, stance: np.ndarray | None) -> None:
        self.bridge.set_planned_stance(stance)

    def damp(self, reason: str) -> None:
        self.bridge.damp(reason)

    def prepare(self) -> None:
        self.bridge.prepare()

    def stats(self) -> dict:
        return self.bridge.stats()

    def close(self) -> None:
        self.bridge.close()
