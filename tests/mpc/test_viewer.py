"""The viewer on a virtual display: goal drags reach the task and the plan is drawn."""

import atexit
import os
import shutil
import subprocess
import time

import numpy as np
import pytest

from mpc.config import load_config
from mpc.runtime.lockstep import run_lockstep
from mpc.runtime.session import Session


@pytest.fixture(scope="module")
def display():
    """A private Xvfb display (Xvfb is installed by .ci/run)."""
    xvfb = shutil.which("Xvfb")
    assert xvfb, "Xvfb is required for the viewer test (apt-get install xvfb)"
    number = 90 + os.getpid() % 100
    proc = subprocess.Popen([xvfb, f":{number}", "-screen", "0", "800x600x24", "-nolisten",
                             "tcp"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Stopped at exit, after GLFW (imported later, so its exit handler runs first) let go.
    atexit.register(proc.terminate)
    time.sleep(1.0)
    old = os.environ.get("DISPLAY")
    os.environ["DISPLAY"] = f":{number}"
    yield
    if old is None:
        os.environ.pop("DISPLAY")
    else:
        os.environ["DISPLAY"] = old


def test_goal_drag_moves_the_task_goal_and_the_plan_is_drawn(display, tmp_path):
    from mpc.viewer import open_viewer

    cfg = load_config("configs/a1_trot.yaml", ["runtime.mode=lockstep"])
    session = Session(cfg, tmp_path)
    viewer = open_viewer(session)
    try:
        run_lockstep(session, 0.1, viewer.tick)
        assert viewer.handle.user_scn.ngeom > 0  # planned foot and base paths
        with viewer.handle.lock():
            session.plant.data.mocap_pos[0, :2] = [0.5, -1.5]  # what a mouse drag does
        viewer.tick(session)
        np.testing.assert_allclose(session.task.goal, [0.5, -1.5])
    finally:
        viewer.close()
        session.close("lockstep")
