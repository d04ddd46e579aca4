"""MuJoCo passive viewer: the robot, the goal (drag it with Ctrl + right mouse) and the plan;
with ``command.source.type: keyboard`` its keys drive the robot (:mod:`mpc.commands.keyboard`).

The plan is drawn from the planner's latest nominal trajectory: each foot's path and the base
path (drawn on the floor, where it is not hidden by the body), read from the planning model's
position sensors. The camera follows the robot's base.

The viewer renders its own ``MjData``, never the plant's: in realtime the plant thread steps the
plant's data while the viewer's render thread reads whatever it was given, and MuJoCo refuses
(or corrupts memory) when two threads use one ``MjData``. Each tick copies the plant's state
under the plant's lock (:meth:`SimPlant.copy_state`) and recomputes the viewer's kinematics in
the caller's thread.
"""

from __future__ import annotations

import itertools
import os
import threading
import time

import mujoco
import numpy as np

from mpc.commands.keyboard import KeyboardCommand
from mpc.errors import UserError
from mpc.runtime.observer import Observer, Status
from mpc.runtime.session import Session

TRACE_RGBA = {"base": (0.2, 0.6, 1.0, 1.0), "foot": (1.0, 0.5, 0.1, 1.0)}


def open_viewer(session: Session):
    """Open the passive viewer on the simulated plant, or fail with a one-line reason."""
    plant = session.plant
    if plant.model is None:
        raise UserError("--viewer needs a simulated plant (plant.type: sim)")
    if os.name == "posix" and not (os.environ.get("DISPLAY") or
                                   os.environ.get("WAYLAND_DISPLAY")):
        raise UserError("--viewer needs a display: DISPLAY is not set (run without --viewer, "
                        "or under X/Wayland)")
    try:
        import mujoco.viewer

        shown = mujoco.MjData(plant.model)
        plant.copy_state(shown)
        mujoco.mj_forward(plant.model, shown)
        before = set(threading.enumerate())
        source = session.command_source
        handle = mujoco.viewer.launch_passive(
            plant.model, shown, show_left_ui=False, show_right_ui=False,
            key_callback=source.on_key if source is not None else None)
        # The render thread launch_passive started: closing waits for it to finish, or GLFW
        # is torn down at exit while it still swaps buffers (a segfault at exit).
        render_threads = [t for t in threading.enumerate() if t not in before]
    except Exception as e:  # GLFW/OpenGL failures arrive as assorted exception types
        raise UserError(f"--viewer could not open a window: {e}") from None
    with handle.lock():
        handle.cam.type = mujoco.mjtCamera.mjCAMERA_TRACKING
        handle.cam.trackbodyid = plant.model.body(session.robot.base_body).id
        handle.cam.distance = 1.6 if session.robot.name != "h1" else 3.0
        handle.cam.elevation = -20.0
    return ViewerSync(session, handle, shown, render_threads)


class ViewerSync(Observer):
    """Shows the plant's latest state, copies goal drags from the viewer to the task and draws
    the plan, once per tick (called from the run's main thread)."""

    def __init__(self, session: Session, handle, shown: mujoco.MjData,
                 render_threads: list[threading.Thread]):
        self.plant = session.plant
        self.task = session.task
        self.keyboard = (session.command_source
                         if isinstance(session.command_source, KeyboardCommand) else None)
        self.handle = handle
        self.render_threads = render_threads
        #: The viewer's own data: the plant's state copied in, the goal marker dragged here.
        self.shown = shown
        task = session.task
        self.sensors = [("base", task.sensor("base_pos"))] if _has(task, "base_pos") else []
        self.sensors += [("foot", task.sensor(f"{f}_pos")) for f in session.robot.feet
                         if _has(task, f"{f}_pos")]
        if task.goal is not None:
            shown.mocap_pos[0, :2] = task.goal

    def tick(self, status: Status) -> bool:
        if not self.handle.is_running():
            return False
        if self.keyboard is not None:
            self.keyboard.heartbeat()
        with self.handle.lock():
            goal = self.shown.mocap_pos[0, :2].copy()
            if self.task.goal is not None and not np.allclose(goal, self.task.goal):
                self.task.set_goal(goal)
            self.plant.copy_state(self.shown)
            mujoco.mj_forward(self.plant.model, self.shown)
            self._draw(status)
        self.handle.sync()
        return True

    def _draw(self, status: Status) -> None:
        scn = self.handle.user_scn
        scn.ngeom = 0
        nominal = status.nominal
        if nominal is None:
            return
        for kind, sl in self.sensors:
            path = nominal.sensordata[:, sl].copy()
            if kind == "base":
                path[:, 2] = 0.005
            for a, b in itertools.pairwise(path):
                if scn.ngeom >= scn.maxgeom:
                    return
                g = scn.geoms[scn.ngeom]
                mujoco.mjv_initGeom(g, mujoco.mjtGeom.mjGEOM_LINE, np.zeros(3), np.zeros(3),
                                    np.eye(3).ravel(), np.array(TRACE_RGBA[kind], np.float32))
                mujoco.mjv_connector(g, mujoco.mjtGeom.mjGEOM_LINE, 3.0, a, b)
                scn.ngeom += 1

    def close(self, summary: dict | None = None, timeout: float = 5.0) -> None:
        """Close the window and wait for the viewer's render thread to finish."""
        self.handle.close()
        deadline = time.monotonic() + timeout
        for thread in self.render_threads:
            thread.join(max(0.0, deadline - time.monotonic()))


def _has(task, name: str) -> bool:
    try:
        task.sensor(name)
    except KeyError:
        return False
    return True
