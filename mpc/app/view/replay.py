"""``mpc-replay RUN_DIR``: a recorded run replayed in the MuJoCo viewer.

The robot moves through the recorded states at ``--speed`` times real time, with the goal (a
green disc) and, where the run recorded them, the planned base path (blue, on the floor) and
foot paths (orange) of the latest planner iteration. The replay ends with the recording
(``--loop`` starts it over) or when the window is closed. The viewer's ``MjData`` is the
replay's own, written only under the viewer's lock: its render thread reads it concurrently.
"""

from __future__ import annotations

import argparse
import sys
import time

import mujoco
import numpy as np

import robots
from mpc.app.errors import UserError
from mpc.app.plants import terrain as terrain_mod
from mpc.app.plants.terrain import TerrainSpec
from mpc.app.record.reader import Run, RunDirError, load_run
from mpc.app.view.window import Window
from robots.info import RobotInfo

FRAME_PERIOD = 1.0 / 60.0


class ReplayError(Exception):
    """The replay cannot start (the message is one line for the user)."""


def replay_model(robot: RobotInfo, terrain: TerrainSpec = None) -> mujoco.MjModel:
    """The model the recorded states belong to (the planning model: H1's legs-only layout),
    with a mocap disc marking the goal, on the run's terrain (``plant.terrain``): its ground,
    without the loose slabs, whose motion is not recorded."""
    spec = mujoco.MjSpec.from_file(str(robots.planning_model_path(robot.name)))
    ground = [f for f in terrain_mod.parse(terrain) if not isinstance(f, terrain_mod.Slabs)]
    terrain_mod.build(spec, ground, list(robot.feet))
    goal = spec.worldbody.add_body(name="goal", mocap=True, pos=[0, 0, 0.02])
    goal.add_geom(type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[0.08, 0.01, 0], contype=0,
                  conaffinity=0, rgba=[0.1, 0.9, 0.2, 0.6])
    return spec.compile()


class Replayer:
    """Shows the recording of ``run`` in a passive viewer window, frame by frame."""

    def __init__(self, run: Run, speed: float = 1.0, loop: bool = False):
        self.run, self.speed, self.loop = run, speed, loop
        try:
            self.model = replay_model(run.robot, run.config.get("plant", {}).get("terrain"))
        except terrain_mod.TerrainError as e:
            raise ReplayError(f"{run.dir}: config.yaml: plant: {e}") from None
        self.data = mujoco.MjData(self.model)
        self.times, self.qpos = run.time(), run.series["state_qpos"]
        if self.qpos.shape[1] != self.model.nq:
            raise ReplayError(f"{run.dir}: recorded states have {self.qpos.shape[1]} "
                              f"coordinates, the {run.robot.name} model {self.model.nq}")
        self.plan_times = run.time("plan")
        self.goal = (run.series["plan_goal"] if run.has("plan_goal")
                     else np.array([run.summary.get("goal", [0.0, 0.0])], dtype=float))
        self.paths = run.has("plan_base_path") and run.has("plan_foot_paths")
        #: Frames shown so far, and the index of the state sample shown last.
        self.frames = 0
        self.shown = -1
        self._set_state(0)
        self.window = Window(self.model, self.data, run.robot, "mpc-replay")
        self.handle = self.window.handle

    def play(self) -> int:
        """Show the recording until its end (or forever with ``loop``) or until the window
        closes; returns the number of frames shown."""
        start = time.monotonic()
        while self.window.is_open():
            elapsed = (time.monotonic() - start) * self.speed
            last = elapsed >= self.times[-1]
            i = len(self.times) - 1 if last else int(np.searchsorted(self.times, elapsed,
                                                                      "right")) - 1
            with self.window.lock():
                self.window.draw_paths(self._plan_paths(self._set_state(i)))
            # outside the lock, which set_texts takes itself
            self.handle.set_texts((None, mujoco.mjtGridPos.mjGRID_TOPLEFT, "t",
                                   f"{self.times[i]:.2f} s  (x{self.speed:g})"))
            self.window.sync()
            self.frames += 1
            if last and not self.loop:
                break
            if last:
                start = time.monotonic()
            time.sleep(FRAME_PERIOD)
        return self.frames

    def close(self) -> None:
        self.window.close()

    def _set_state(self, i: int) -> int:
        """Put state sample ``i`` and the goal at its time into the viewer's data (viewer lock
        held, once the viewer runs); returns the index of the plan in force at that time."""
        d = self.data
        d.time = self.times[i]
        d.qpos[:] = self.qpos[i]
        k = max(int(np.searchsorted(self.plan_times, self.times[i], "right")) - 1, 0)
        d.mocap_pos[0, :2] = self.goal[min(k, len(self.goal) - 1)]
        mujoco.mj_forward(self.model, d)
        self.shown = i
        return k

    def _plan_paths(self, k: int) -> list[tuple[str, np.ndarray]]:
        """Plan ``k``'s base and foot paths, as recorded."""
        if not self.paths or not len(self.plan_times):
            return []
        base = self.run.series["plan_base_path"][k].astype(float)
        base[:, 2] = 0.005  # on the floor, where the body does not hide it
        feet = self.run.series["plan_foot_paths"][k].astype(float)
        return [("base", base), *(("foot", f) for f in feet)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="mpc-replay", description=__doc__.splitlines()[0])
    p.add_argument("run_dir", metavar="RUN_DIR")
    p.add_argument("--speed", type=float, default=1.0, help="times real time (default 1)")
    p.add_argument("--loop", action="store_true", help="start over at the end")
    args = p.parse_args(argv)
    if not args.speed > 0:
        print("mpc-replay: --speed must be > 0", file=sys.stderr)
        return 2
    try:
        replayer = Replayer(load_run(args.run_dir), args.speed, args.loop)
    except (RunDirError, ReplayError, UserError) as e:
        print(f"mpc-replay: {e}", file=sys.stderr)
        return 2
    try:
        replayer.play()
    finally:
        replayer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
