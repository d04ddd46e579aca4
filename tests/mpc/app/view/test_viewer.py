"""The viewer on a virtual display: goal drags reach the task, the plan is drawn, and a
realtime run with the viewer open lasts its whole duration for every shipped simulation config
(the plant thread steps the simulation while the viewer shows it)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from mpc.app.config import SHIPPED_DIR, load_config, read_config_tree
from mpc.app.runtime.lockstep import run_lockstep
from mpc.app.runtime.session import Session

#: As they resolve (``extends`` followed): a hardware config may inherit its plant.
SIM_CONFIGS = sorted(p.name for p in SHIPPED_DIR.glob("*.yaml")
                     if (read_config_tree(p).get("plant") or {}).get("type", "sim") == "sim")


def test_goal_drag_moves_the_task_goal_and_the_plan_is_drawn(display, tmp_path):
    from mpc.app.view.viewer import open_viewer

    cfg = load_config("configs/a1_trot.yaml", ["runtime.mode=lockstep"])
    session = Session(cfg, tmp_path)
    viewer = open_viewer(session)
    viewer.frame_period = 0.0  # every tick draws a frame
    session.attach(viewer)
    try:
        run_lockstep(session, 0.1)
        session.tick()
        assert viewer.window.handle.user_scn.ngeom > 0  # planned foot and base paths
        np.testing.assert_array_equal(viewer.shown.qpos, session.plant.data.qpos)
        with viewer.window.lock():
            viewer.shown.mocap_pos[0, :2] = [0.5, -1.5]  # what a mouse drag does
        session.tick()
        np.testing.assert_allclose(session.task.goal, [0.5, -1.5])
    finally:
        session.close("lockstep")


def test_the_viewer_renders_its_own_data_not_the_plants(display, tmp_path):
    """The plant thread steps ``plant.data``; the viewer must never be handed it."""
    from mpc.app.view.viewer import open_viewer

    cfg = load_config("configs/a1_trot.yaml", ["runtime.mode=lockstep"])
    session = Session(cfg, tmp_path)
    viewer = open_viewer(session)
    try:
        assert viewer.shown is not session.plant.data
        session.plant.step()
        session.attach(viewer)
        session.tick()
        assert viewer.shown.time == session.plant.data.time
    finally:
        session.close("lockstep")


@pytest.mark.slow
@pytest.mark.parametrize("config", SIM_CONFIGS)
def test_realtime_run_with_the_viewer_lasts_its_whole_duration(display, tmp_path, config):
    cfg = load_config(config)
    assert cfg.runtime.mode == "realtime"
    proc = subprocess.run([sys.executable, "-m", "mpc.app.cli", config, "--viewer", "--quiet",
                           "--out", str(tmp_path)], capture_output=True, text=True,
                          timeout=300, env=os.environ.copy())
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads((tmp_path / "summary.json").read_text())
    events = (tmp_path / "events.log").read_text()[-2000:]
    assert summary["sim_time_s"] >= cfg.runtime.duration - 0.01, (summary, events)
    assert not summary["fell"], events
    print(f"{config}: planning {summary['planning_rate_hz']} Hz with the viewer")


def test_frames_are_paced_but_goal_drags_are_not(display, tmp_path):
    """A tick within the frame period draws nothing (the main thread's frame work competes
    with the planner for the interpreter), yet a goal drag still reaches the task at once."""
    from mpc.app.view.viewer import open_viewer

    cfg = load_config("configs/a1_trot.yaml", ["runtime.mode=lockstep"])
    session = Session(cfg, tmp_path)
    viewer = open_viewer(session)
    viewer.frame_period = 3600.0
    session.attach(viewer)
    try:
        session.tick()  # the first frame
        shown = viewer.shown.time
        session.plant.step()
        with viewer.window.lock():
            viewer.shown.mocap_pos[0, :2] = [1.0, 1.0]
        session.tick()
        assert viewer.shown.time == shown < session.plant.data.time  # no new frame
        np.testing.assert_allclose(session.task.goal, [1.0, 1.0])
    finally:
        session.close("lockstep")
