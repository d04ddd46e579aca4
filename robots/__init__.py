"""Robot models and per-robot metadata.

Each robot has one MJCF file in ``robots/models/`` (used both as the planner's model and as the
simulated plant) and one :class:`RobotInfo` record in :mod:`robots.info`.
"""

from __future__ import annotations

from pathlib import Path

import mujoco

from robots.info import ROBOTS, RobotInfo

MODELS_DIR = Path(__file__).resolve().parent / "models"

__all__ = ["ROBOTS", "RobotInfo", "available", "info", "load_model", "model_path"]


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
