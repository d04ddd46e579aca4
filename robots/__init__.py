"""Robot models and per-robot metadata.

Each robot has one MJCF file in ``robots/models/`` (the simulated plant, and the planner's model
unless the robot names a separate planning model: H1 plans on ``h1_legs.xml``, generated from
``h1.xml`` by :mod:`robots.derive`) and one :class:`RobotInfo` record in :mod:`robots.info`.
"""

from __future__ import annotations

from pathlib import Path

import mujoco

from robots.info import ROBOTS, RobotInfo
from robots.overlay import Overlay, OverlayError
from robots.overlay import load as _load_overlay

MODELS_DIR = Path(__file__).resolve().parent / "models"

__all__ = [
    "ROBOTS", "Overlay", "OverlayError", "RobotInfo", "available", "info", "load_model",
    "load_overlay", "load_planning_model", "model_path", "model_spec", "planning_model_path",
    "planning_spec",
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


def model_spec(name: str, overlay: Overlay | None = None) -> mujoco.MjSpec:
    """The MJCF model of robot ``name`` as a spec to edit, with ``overlay`` applied."""
    return _with_overlay(mujoco.MjSpec.from_file(str(model_path(name))), name, overlay)


def load_model(name: str, overlay: Overlay | None = None) -> mujoco.MjModel:
    """Compile the MJCF model of robot ``name`` (with ``overlay`` applied)."""
    if overlay is None:
        return mujoco.MjModel.from_xml_path(str(model_path(name)))
    return model_spec(name, overlay).compile()


def planning_model_path(name: str) -> Path:
    """Path of the MJCF file the planner uses for robot ``name`` (its model file unless it has a
    separate planning model)."""
    robot = info(name)
    return MODELS_DIR / (robot.planning_model_file or robot.model_file)


def planning_spec(name: str, overlay: Overlay | None = None) -> mujoco.MjSpec:
    """The planning model of robot ``name`` as a spec to edit, with ``overlay`` applied."""
    return _with_overlay(mujoco.MjSpec.from_file(str(planning_model_path(name))), name, overlay)


def load_planning_model(name: str, overlay: Overlay | None = None) -> mujoco.MjModel:
    """Compile the planning model of robot ``name`` (with ``overlay`` applied)."""
    if overlay is None:
        return mujoco.MjModel.from_xml_path(str(planning_model_path(name)))
    return planning_spec(name, overlay).compile()


def load_overlay(path: str | Path, robot: str | None = None) -> Overlay:
    """Read and check an overlay file (for ``robot``, if given); OverlayError (one line)
    naming what is wrong."""
    return _load_overlay(path, ROBOTS, robot)


def _with_overlay(spec: mujoco.MjSpec, name: str, overlay: Overlay | None) -> mujoco.MjSpec:
    if overlay is not None:
        overlay.apply(spec, info(name))
    return spec
