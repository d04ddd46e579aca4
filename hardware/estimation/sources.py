"""Base-state sources by name (``plant.base_state.type`` of a hardware config).

Each source is built as ``cls(model, robot, **options)`` with the planner's model; its options
are checked against its keyword parameters, like a plant's. A new source registers itself with
``SOURCES.register(name, "module:Class")``.
"""

from __future__ import annotations

import mujoco

from common.registry import Registry
from hardware.estimation.base_state import BaseStateSource
from mpc.app.schema import check_kwargs, check_value
from robots.info import RobotInfo

SOURCES: Registry[BaseStateSource] = Registry("base-state source", {
    "kalman": "hardware.estimation.kalman:LegKalman",
    "leg_odometry": "hardware.estimation.leg_odometry:LegOdometry",
}, group="base_state_sources")  # + sim_truth, the fake robot's truth (an entry point: it is a
#                                 test aid of hardware.fake, which sits above this package)


def _source(name: str, where: str) -> type[BaseStateSource]:
    """The source class ``name``; ValueError naming the key ``where.type`` otherwise."""
    try:
        return SOURCES.get(name)
    except ValueError as e:
        raise ValueError(f"{where}.type: {e}") from None


def check_spec(spec: dict | None, where: str = "plant.base_state") -> None:
    """ValueError unless ``spec`` names a known source; ConfigError naming the key unless its
    options fit the source's keyword parameters and bounds (checked with the config, in the
    controller's process, before a link process builds the source); ValueError naming the
    section where options that depend on each other do not fit (a source's ``check_options``)."""
    if spec is not None:
        options = dict(spec)
        name = check_value(options.pop("type", "kalman"), str, "config", f"{where}.type")
        cls = _source(name, where)
        options = check_kwargs(cls, options, "config", f"{where}.", exclude=("model", "robot"))
        check = getattr(cls, "check_options", None)
        if check is not None:
            try:
                check(options)
            except ValueError as e:
                raise ValueError(f"{where}: {e}") from None


def make_source(spec: dict, model: mujoco.MjModel, robot: RobotInfo,
                where: str = "plant.base_state") -> BaseStateSource:
    """Build the source described by ``spec`` (``{"type": NAME, **options}``)."""
    options = dict(spec)
    cls = _source(options.pop("type", "kalman"), where)
    options = check_kwargs(cls, options, "config", f"{where}.", exclude=("model", "robot"))
    return cls(model, robot, **options)
