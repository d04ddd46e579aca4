"""Base-state sources by name (``plant.base_state.type`` of a hardware config).

Each source is built as ``cls(model, robot, **options)`` with the planner's model; its options
are checked against its keyword parameters, like a plant's. A new source registers itself with
``SOURCES.register(name, "module:Class")``.
"""

from __future__ import annotations

import importlib

import mujoco

from hardware.estimation.base_state import BaseStateSource
from mpc.schema import check_kwargs
from robots.info import RobotInfo
from robots.registry import Registry

SOURCES: Registry[BaseStateSource] = Registry("base-state source", {
    "kalman": "hardware.estimation.kalman:LegKalman",
    "leg_odometry": "hardware.estimation.leg_odometry:LegOdometry",
    # Test aid: reads the fake Unitree robot's simulated truth (``mpc-fake-robot --truth-port``).
    "sim_truth": "hardware.fake.sim_truth:SimTruth",
})


def check_spec(spec: dict | None) -> None:
    """ValueError (or ConfigError) naming the key unless ``spec`` names a known source with
    valid options (checked here, in the controller's process, before a link process builds
    the source)."""
    if spec is not None:
        options = dict(spec)
        cls = SOURCES.get(options.pop("type", "kalman"))
        check_kwargs(cls, options, "config", "plant.base_state.", exclude=("model", "robot"))
        bounds = getattr(importlib.import_module(cls.__module__), "check_options", None)
        if bounds is not None:
            bounds(options)


def make_source(spec: dict, model: mujoco.MjModel, robot: RobotInfo,
                where: str = "plant.base_state") -> BaseStateSource:
    """Build the source described by ``spec`` (``{"type": NAME, **options}``)."""
    options = dict(spec)
    name = options.pop("type", "kalman")
    cls = SOURCES.get(name)
    options = check_kwargs(cls, options, "config", f"{where}.", exclude=("model", "robot"))
    return cls(model, robot, **options)
