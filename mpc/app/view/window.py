"""A MuJoCo passive-viewer window on data of its own, for the live viewer and the replay.

Three things every window here needs, learned the hard way:

- it renders an ``MjData`` that no other thread steps (two threads on one ``MjData`` make
  MuJoCo refuse or corrupt memory), written by its owner under :meth:`Window.lock`;
- its threads (the render loop and the software-OpenGL workers) run at the lowest priority:
  the render loop draws as fast as it can where nothing paces it, which with software OpenGL
  (Xvfb, remote desktops) is more than a core of a 2-core computer, taken from the planner;
- closing joins the render thread, however long its last low-priority frame takes: GLFW torn
  down at exit while it still swaps buffers is a segfault at exit.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import threading
import time
from collections.abc import Callable, Iterable

import mujoco
import numpy as np

from mpc.app.errors import UserError
from robots.info import RobotInfo

#: Line colours of the drawn paths.
TRACE_RGBA = {"base": (0.2, 0.6, 1.0, 1.0), "foot": (1.0, 0.5, 0.1, 1.0)}


class Window:
    """A passive viewer showing ``data`` of ``model``, its camera following ``robot``'s base.

    Raises :class:`UserError` (one line, ``what`` names the command) without a display or
    when no window can be opened.
    """

    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData, robot: RobotInfo,
                 what: str, key_callback: Callable[[int], None] | None = None):
        if os.name == "posix" and not (os.environ.get("DISPLAY") or
                                       os.environ.get("WAYLAND_DISPLAY")):
            raise UserError(f"{what} needs a display: DISPLAY is not set (run under X or "
                            "Wayland, or a virtual display such as Xvfb)")
        try:
            import mujoco.viewer

            before, tasks_before = set(threading.enumerate()), _native_threads()
            self.handle = mujoco.viewer.launch_passive(model, data, show_left_ui=False,
                                                       show_right_ui=False,
                                                       key_callback=key_callback)
        except Exception as e:  # GLFW/OpenGL failures arrive as assorted exception types
            raise UserError(f"{what} could not open a window: {e}") from None
        self.render_threads = [t for t in threading.enumerate() if t not in before]
        #: The kernel threads the window started (render loop, software-OpenGL workers).
        self.render_tasks = _native_threads() - tasks_before
        _set_priority(self.render_tasks, 19)
        with self.handle.lock():
            self.handle.cam.type = mujoco.mjtCamera.mjCAMERA_TRACKING
            self.handle.cam.trackbodyid = model.body(robot.base_body).id
            self.handle.cam.distance = 1.6 if robot.name != "h1" else 3.0
            self.handle.cam.elevation = -20.0

    def is_open(self) -> bool:
        return self.handle.is_running()

    def lock(self):
        """Held while the window's data or scene is written."""
        return self.handle.lock()

    def draw_paths(self, paths: Iterable[tuple[str, np.ndarray]]) -> None:
        """Replace the drawn lines by ``paths`` ((kind, points (n, 3)), kind a key of
        :data:`TRACE_RGBA`) as far as the scene holds them (lock held)."""
        scn = self.handle.user_scn
        scn.ngeom = 0
        for kind, path in paths:
            rgba = np.array(TRACE_RGBA[kind], np.float32)
            for a, b in itertools.pairwise(path):
                if scn.ngeom >= scn.maxgeom:
                    return
                g = scn.geoms[scn.ngeom]
                mujoco.mjv_initGeom(g, mujoco.mjtGeom.mjGEOM_LINE, np.zeros(3), np.zeros(3),
                                    np.eye(3).ravel(), rgba)
                mujoco.mjv_connector(g, mujoco.mjtGeom.mjGEOM_LINE, 3.0, a, b)
                scn.ngeom += 1

    def sync(self) -> None:
        """Show what was written since the last sync (lock not held)."""
        self.handle.sync()

    def close(self, timeout: float = 60.0) -> None:
        """Close the window and wait for its render thread to finish.

        The render thread runs at the lowest priority, so on a busy computer finishing its
        last frame can take seconds (3-7 s measured with two busy cores); it gets its normal
        priority back where the user may raise it. Should it outlive ``timeout``, GLFW is left
        to the operating system at exit rather than torn down under the thread.
        """
        self.handle.close()
        _set_priority(self.render_tasks, 0)
        deadline = time.monotonic() + timeout
        for thread in self.render_threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        if any(thread.is_alive() for thread in self.render_threads):
            import glfw

            atexit.unregister(glfw.terminate)


def _native_threads() -> set[int]:
    """The process's kernel thread ids (Linux), or none where /proc does not list them."""
    try:
        return {int(t) for t in os.listdir("/proc/self/task")}
    except OSError:
        return set()


def _set_priority(threads: set[int], niceness: int) -> None:
    for tid in threads:
        # A thread that ended meanwhile; or, raising it back, a user without the right to.
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, tid, niceness)
