"""Robot models and per-robot metadata.

Each robot has one MJCF file in ``robots/models/`` (the simulated plant, and the planner's model
unless the robot names a separate planning model: H1 plans on ``h1_legs.xml``, generated from
``h1.xml`` by :mod:`robots.derive`) and one :class:`RobotInfo` record in :mod:`robots.info`.
"""

from __future__ import annotations

from pathlib import Path

import mujoco

from robots.info import ROBOTS, RobotInfo

MODELS_DIR = Path(__file__).resolve().parent / "models"

__all__ = [
    "ROBOTS", "RobotInfo", "available", "info", "load_model", "load_planning_model", "model_path",
    "planning_model_path",
]


class UnknownRobotError(ValueError):
    """Raised for a robot name that has no model."""


def available() -> list[str]:
    """Names of the robots that have a model."""
    return sorted(ROBOTS)


def info(name: str) -> RobotInfo:
    """Metadata of robot ``name`` (joint order, home pose, limits, gains, fall criterion)."""
    try:
        return ROBOTS[name]
    except KeyError:
        raise UnknownRobotError(
            f"unknown robot {name!r}; available: {', '.join(available())}"
        ) from None


def model_path(name: str) -> Path:
    """Path of the MJCF file of robot ``name``."""
    return MODELS_DIR / info(name).model_file


def load_model(name: str) -> mujoco.MjModel:
    """Compile the MJCF model of robot ``name``."""
    return mujoco.MjModel.from_xml_path(str(model_path(name)))


def planning_model_path(name: str) -> Path:
    """Path of the MJCF file the planner uses for robot ``name`` (its model file unless it has a
    separate planning model)."""
    robot = info(name)
    return MODELS_DIR / (robot.planning_model_file or robot.model_file)


def load_planning_model(name: str) -> mujoco.MjModel:
    """Compile the planning model of robot ``name``."""
    return mujoco.MjModel.from_xml_path(str(planning_model_path(name)))
