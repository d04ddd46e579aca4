"""Build the parts of a run from a validated configuration.

Also checks the open config sections (task parameters, backend options, plant options) against
the classes that consume them, for :func:`mpc.config.validate`.
"""

from __future__ import annotations

import inspect
from dataclasses import asdict
from typing import TYPE_CHECKING

import mujoco
import numpy as np

import derivatives
import robots
from derivatives import BACKENDS
from mpc.config import ConfigError, check_kwargs, unknown_key
from mpc.ilqr import ILQR, ILQRSettings
from mpc.plants import PLANTS
from mpc.tasks import TASKS, Task, make_task

if TYPE_CHECKING:
    from mpc.config import Config
    from mpc.plant_base import Plant


# --- validation of open sections --------------------------------------------------------------
def validate_task(cfg: Config, source: str) -> dict:
    try:
        info = robots.info(cfg.robot)
    except ValueError as e:
        raise ConfigError(f"{source}: robot: {e}") from None
    task = dict(cfg.task)
    name = task.pop("name", None)
    if name is None:
        raise ConfigError(f"{source}: missing required key 'task.name' "
                          f"(available: {', '.join(TASKS.available())})")
    try:
        cls = TASKS.get(name)
    except ValueError as e:
        raise ConfigError(f"{source}: task.name: {e}") from None
    params = check_kwargs(cls, task, source, "task.", exclude=("robot",))
    try:
        make_task(name, info, **params)
    except ValueError as e:
        raise ConfigError(f"{source}: task: {e}") from None
    return {"name": name, **params}


def validate_derivatives(cfg: Config, source: str) -> dict:
    section = dict(cfg.derivatives)
    backend = section.get("backend", "fd")
    valid = ["backend", *BACKENDS.available()]
    for key in section:
        if key not in valid:
            raise unknown_key(source, "derivatives.", str(key), valid)
    if backend not in BACKENDS:
        raise ConfigError(f"{source}: unknown derivative backend '{backend}'; available: "
                          f"{', '.join(BACKENDS.available())}")
    out = {"backend": backend}
    for name in BACKENDS.available():
        if name in section:
            out[name] = check_kwargs(BACKENDS.get(name), section[name] or {}, source,
                                     f"derivatives.{name}.", exclude=("model",))
    return out


def validate_plant(cfg: Config, source: str) -> dict:
    section = dict(cfg.plant)
    kind = section.pop("type", "sim")
    try:
        cls = PLANTS.get(kind)
    except ValueError as e:
        raise ConfigError(f"{source}: plant.type: {e}") from None
    params = check_kwargs(cls, section, source, "plant.", exclude=("robot", "seed", "safety"))
    check = getattr(cls, "check_options", None)  # e.g. addresses, network interface
    if check is not None:
        try:
            check(cfg.robot, params)
        except (ValueError, OSError) as e:
            raise ConfigError(f"{source}: plant: {e}") from None
    return {"type": kind, **params}


def validate_safety(cfg: Config, source: str) -> dict:
    from hardware.safety.layer import SafetyConfig

    params = check_kwargs(SafetyConfig, dict(cfg.safety), source, "safety.")
    try:
        SafetyConfig(**params)
    except ValueError as e:
        raise ConfigError(f"{source}: {e}") from None
    return params


# --- construction ----------------------------------------------------------------------------
def build_task(cfg: Config) -> Task:
    params = dict(cfg.task)
    return make_task(params.pop("name"), robots.info(cfg.robot), **params)


def build_planner(cfg: Config, task: Task) -> ILQR:
    settings = ILQRSettings(**asdict(cfg.planner))
    model = task.planning_model(settings.timestep, settings.self_collision)
    backend = cfg.derivatives["backend"]
    provider = derivatives.make_provider(backend, model, **cfg.derivatives.get(backend, {}))
    planner = ILQR(task, model, provider, settings, home_ctrl(model, task.robot.home_key))
    if PLANTS.get(cfg.plant.get("type", "sim")).realtime_only:
        _warm_up(planner, model, task.robot.home_key)
    return planner


def _warm_up(planner: ILQR, model: mujoco.MjModel, key_name: str) -> None:
    """One iteration from the home pose before a hardware plant connects: compiling the
    kernels holds the interpreter for long stretches, which would starve the robot link."""
    key = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, key_name)
    qpos, act = model.key_qpos[key].copy(), model.key_act[key].copy()
    qvel = np.zeros(model.nv)
    planner.reset(0.0, qpos, qvel, act)
    planner.iterate(0.0, qpos, qvel, act)


def build_plant(cfg: Config) -> Plant:
    """The plant, ready for the control loop: behind the safety layer if it is hardware (or
    ``safety.in_simulation``), prepared (hardware: connected, ramped to the home pose)."""
    from hardware.safety.layer import SafetyConfig
    from hardware.safety.safe_plant import SafePlant

    params = dict(cfg.plant)
    cls = PLANTS.get(params.pop("type"))
    robot = robots.info(cfg.robot)
    safety = SafetyConfig(**cfg.safety)
    takes_safety = "safety" in inspect.signature(cls.__init__).parameters
    if takes_safety:  # hardware bridges enforce the whole layer themselves
        params["safety"] = safety
    plant = cls(robot, seed=cfg.runtime.seed, **params)
    if not takes_safety and (plant.realtime_only or safety.in_simulation or safety.dry_run):
        plant = SafePlant(plant, robot, safety, robots.load_planning_model(cfg.robot))
    try:
        plant.prepare()
    except BaseException:
        plant.close()
        raise
    return plant


def home_ctrl(model: mujoco.MjModel, key_name: str) -> np.ndarray:
    key = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, key_name)
    return model.key_ctrl[key].copy()
