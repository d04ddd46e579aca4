"""Build the parts of a run from a validated configuration (:mod:`mpc.app.config`)."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import TYPE_CHECKING

import mujoco
import numpy as np

import derivatives
import robots
from mpc.app.plants import PLANTS, SAFETY
from mpc.planner.ilqr import ILQR
from mpc.planner.planner_base import Planner
from mpc.planner.scripted import ScriptedPlanner
from mpc.tasks import Task, make_task

if TYPE_CHECKING:
    from mpc.app.config import Config
    from mpc.app.plants.plant_base import Plant


def build_task(cfg: Config) -> Task:
    params = dict(cfg.task)
    return make_task(params.pop("name"), robots.info(cfg.robot), **params)


def build_planner(cfg: Config, task: Task) -> Planner:
    """The task's planner: iLQR, or for an open-loop task (a joint excitation) the planner
    that publishes its reference (:class:`mpc.planner.scripted.ScriptedPlanner`). With a map
    input (``map_input.source``) the task plans on its window (:mod:`mpc.tasks.map_window`)."""
    settings = cfg.planner
    if cfg.map_input.source:  # maps received while running: a window moving with the robot
        task.set_map_window(cfg.map_input.window())
    model = task.planning_model(settings.timestep, settings.self_collision,
                               settings.impratio, cfg.robot_overlay, settings.jacobian)
    if getattr(task, "open_loop", False):
        return ScriptedPlanner(task, model)
    backend = cfg.derivatives["backend"]
    provider = derivatives.make_provider(backend, model, **cfg.derivatives.get(backend, {}))
    planner = ILQR(task, model, provider, settings, home_ctrl(model, task.robot.home_key))
    if plant_class(cfg).realtime_only:
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


def plant_class(cfg: Config) -> type[Plant]:
    """The class of the plant the config describes."""
    return PLANTS.get(cfg.plant.get("type", "sim"))


def build_plant(cfg: Config, run_dir: Path | None = None) -> Plant:
    """The plant, ready for the control loop: behind the safety layer if it is hardware (or
    ``safety.in_simulation``), prepared (hardware: connected, ramped to the home pose)."""
    plant = make_plant(cfg, run_dir)
    try:
        plant.prepare()
    except BaseException:
        plant.close()
        raise
    return plant


def make_plant(cfg: Config, run_dir: Path | None = None) -> Plant:
    """The plant behind the safety layer if it is hardware (or ``safety.in_simulation``), not
    yet prepared (hardware: connected; nothing moves before :meth:`Plant.prepare`). A relative
    ``plant.log_file`` (a robot link's log) is a file in ``run_dir``."""
    params = dict(cfg.plant)
    log_file = params.get("log_file")
    if run_dir is not None and log_file and not Path(log_file).is_absolute():
        params["log_file"] = str(Path(run_dir) / log_file)
    cls = PLANTS.get(params.pop("type"))
    robot = robots.info(cfg.robot)
    safety = SAFETY.get("config")(**cfg.safety)
    takes_safety = "safety" in inspect.signature(cls.__init__).parameters
    if takes_safety:  # hardware bridges enforce the whole layer themselves
        params["safety"] = safety
    if cfg.robot_overlay is not None and takes_overlay(cls):
        params["overlay"] = cfg.robot_overlay  # a simulated robot: the overlay is its model
    plant = cls(robot, seed=cfg.runtime.seed, **params)
    try:  # from the moment it exists: a Ctrl-C between two lines must close it too
        if not takes_safety and (plant.realtime_only or safety.in_simulation or safety.dry_run):
            plant = SAFETY.get("wrapper")(plant, robot, safety,
                                           robots.load_planning_model(cfg.robot))
    except BaseException:
        plant.close()
        raise
    return plant


def takes_overlay(plant_class: type) -> bool:
    """Whether a plant simulates the robot and so takes a model overlay (``overlay``): the
    simulated plants do; a real robot is what it is, and its bridge commands the gains of the
    nominal model (the overlay's ``kp`` and ``damping`` are what the motors make of them)."""
    return "overlay" in inspect.signature(plant_class.__init__).parameters


def home_ctrl(model: mujoco.MjModel, key_name: str) -> np.ndarray:
    key = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, key_name)
    return model.key_ctrl[key].copy()
