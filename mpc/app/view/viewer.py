"""MuJoCo viewer of a live run: the robot, the goal (drag it with Ctrl + right mouse) and the
plan; with ``command.source.type: keyboard`` its keys drive the robot
(:mod:`mpc.app.commands.keyboard`).

The plan is drawn from the planner's latest nominal trajectory: each foot's path and the base
path (drawn on the floor, where it is not hidden by the body), read from the planning model's
position sensors. The camera follows the robot's base.

The window renders its own ``MjData`` (:class:`mpc.app.view.window.Window`), never the plant's: in
realtime the plant thread steps the plant's data. Each tick copies the plant's state under the
plant's lock (:meth:`Plant.copy_state`) and recomputes the window's kinematics in the run's
main thread.
"""

from __future__ import annotations

import logging
import time

import mujoco
import numpy as np

from mpc.app.commands.keyboard import KeyboardCommand
from mpc.app.errors import UserError
from mpc.app.observers.observer_base import Observer, Status
from mpc.app.runtime.session import Session
from mpc.app.view.window import Window

#: Seconds between frames: each costs the main thread a copy of the state, a forward pass and
#: the plan's lines, all holding the interpreter the planner also needs.
FRAME_PERIOD = 1.0 / 30.0

log = logging.getLogger(__name__)


def open_viewer(session: Session) -> ViewerSync:
    """Open the viewer on the simulated plant, or fail with a one-line reason."""
    plant = session.plant
    if plant.model is None:
        raise UserError("--viewer needs a simulated plant (plant.type: sim)")
    shown = mujoco.MjData(plant.model)
    plant.copy_state(shown)
    mujoco.mj_forward(plant.model, shown)
    return ViewerSync(session, Window(plant.model, shown, session.robot, "--viewer",
                                           key_callback=_key_callback(session)), shown)


class ViewerSync(Observer):
    """Shows the plant's latest state, copies goal drags from the viewer to the task and draws
    the plan, once per tick (called from the run's main thread)."""

    def __init__(self, session: Session, window: Window, shown: mujoco.MjData):
        self.plant = session.plant
        self.task = session.task
        self.keyboard = (session.command_source
                         if isinstance(session.command_source, KeyboardCommand) else None)
        self.window = window
        #: Seconds between frames (see FRAME_PERIOD).
        self.frame_period = FRAME_PERIOD
        self._next_frame = 0.0
        self._closed = False
        #: The window's own data: the plant's state copied in, the goal marker dragged here.
        self.shown = shown
        task = session.task
        self.sensors = [("base", task.sensor("base_pos"))] if _has(task, "base_pos") else []
        self.sensors += [("foot", task.sensor(f"{f}_pos")) for f in session.robot.feet
                         if _has(task, f"{f}_pos")]
        if task.goal is not None:
            shown.mocap_pos[0, :2] = task.goal

    def tick(self, status: Status) -> bool:
        if not self.window.is_open():
            if not self._closed:
                self._closed = True
                log.info("the viewer window was closed: the run ends")
            return False
        if self.keyboard is not None:
            self.keyboard.heartbeat()
        with self.window.lock():
            goal = self.shown.mocap_pos[0, :2].copy()
        if self.task.goal is not None and not np.allclose(goal, self.task.goal):
            self.task.set_goal(goal)
        now = time.perf_counter()
        if now < self._next_frame:  # the loop ticks at 100 Hz; a screen needs 30
            return True
        self._next_frame = now + self.frame_period
        with self.window.lock():
            self.plant.copy_state(self.shown)
            mujoco.mj_forward(self.plant.model, self.shown)
            self.window.draw_paths(self._paths(status))
        self.window.sync()
        return True

    def _paths(self, status: Status) -> list[tuple[str, np.ndarray]]:
        nominal = status.nominal
        if nominal is None:
            return []
        paths = []
        for kind, rows in self.sensors:
            path = nominal.sensordata[:, rows].copy()
            if kind == "base":
                path[:, 2] = 0.005  # on the floor, where the body does not hide it
            paths.append((kind, path))
        return paths

    def close(self, summary: dict | None = None) -> None:
        self.window.close()


def _key_callback(session: Session):
    """The command source's key handler (keyboard driving), if the run has a source."""
    source = session.command_source
    return source.on_key if source is not None else None


def _has(task, name: str) -> bool:
    try:
        task.sensor(name)
    except KeyError:
        return False
    return True
