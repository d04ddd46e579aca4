"""Base-state sources by name (``plant.base_state.type`` of a hardware config).

Each source is built as ``cls(model, robot, **options)`` with the planner's model; its options
are checked against its keyword parameters, like a plant's.
"""

from __future__ import annotations

import importlib

import mujoco

from hardware.estimation.base_state import BaseStateSource
from mpc.config import check_kwargs
from robots.info import RobotInfo

_SOURCES: dict[str, str] = {
    "leg_odometry": "hardware.estimation.leg_odometry:LegOdometry",
    "sim_truth": "hardware.fake.sim_truth:SimTruth",
}


def register(name: str, target: str) -> None:
    """Register a base-state source given as ``"module:Class"``."""
    _SOURCES[name] = target


def available() -> list[str]:
    return sorted(_SOURCES)


def source_class(name: str) -> type[BaseStateSource]:
    try:
        module, cls = _SOURCES[name].split(":")
    except KeyError:
        raise ValueError(f"unknown base-state source {name!r}; available: "
                         f"{', '.join(available())}") from None
    return getattr(importlib.import_module(module), cls)


def check_spec(spec: dict | None) -> None:
    """ValueError unless ``spec`` names a known source (its options are checked when it is
    built)."""
    if spec is not None:
        source_class(dict(spec).get("type", "leg_odometry"))


def make_source(spec: dict, model: mujoco.MjModel, robot: RobotInfo,
                where: str = "plant.base_state") -> BaseStateSource:
    """Build the source described by ``spec`` (``{"type": NAME, **options}``)."""
    options = dict(spec)
    name = options.pop("type", "leg_odometry")
    cls = source_class(name)
    options = check_kwargs(cls, options, "config", f"{where}.", exclude=("model", "robot"))
    return cls(model, robot, **options)
