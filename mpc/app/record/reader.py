"""A run directory read back for plotting and replay: time series, config, summary, events.

Times are seconds since the first recorded state, so runs overlay. Run directories written
before a series was recorded still load; the figures leave out (and say so) what is missing.
A run that did not close (killed, or its machine lost power) has no timeseries.npz and maybe
no summary.json: its series are read from the incremental record it wrote while it ran
(:mod:`mpc.app.record.store`), up to its last second, and :attr:`Run.closed` is False.
"""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import mujoco
import numpy as np
import yaml

import robots
from common import yamlfile
from mpc.app.record.store import INCREMENTAL, read_record
from robots.info import RobotInfo

#: Event kinds, by the first pattern their message matches (checked in this order).
EVENT_KINDS = (("damping", re.compile(r"damping|e-stop|estop", re.I)),
               ("fall", re.compile(r"\bfell\b", re.I)),
               ("discarded", re.compile(r"discarded", re.I)))
_LOG_LINE = re.compile(r"^\S+ \S+ (WARNING|ERROR|CRITICAL) [^:]+: (.*)$")


class RunDirError(Exception):
    """A path that is not a readable run directory (the message is one line for the user)."""


@dataclass(frozen=True)
class Event:
    """A warning or error of the run; ``time`` is NaN when the run did not record it."""

    time: float
    level: str
    message: str

    @property
    def kind(self) -> str:
        """damping, fall, discarded (a planner iteration) or warning."""
        return next((k for k, pattern in EVENT_KINDS if pattern.search(self.message)),
                    "warning")


@dataclass(frozen=True)
class JointInfo:
    """The actuated joints in the recorded (planning-model) order, with their limits."""

    names: list[str]
    qpos: np.ndarray  # index of each joint's angle in qpos
    qvel: np.ndarray  # index of each joint's speed in qvel
    angle_limits: np.ndarray  # (n, 2) rad
    torque_limits: np.ndarray  # (n,) N m


@dataclass
class Run:
    """One run directory, loaded."""

    dir: Path
    config: dict
    summary: dict
    series: dict[str, np.ndarray]
    events: list[Event] = field(default_factory=list)
    #: False for a run read from its incremental record (it did not close).
    closed: bool = True

    @property
    def label(self) -> str:
        """Legend label: the directory's name."""
        return self.dir.name

    @property
    def robot(self) -> RobotInfo:
        return robots.info(robot_name(self.config))

    @property
    def mode(self) -> str:
        return self.summary.get("mode") or self.config.get("runtime", {}).get("mode", "")

    @property
    def t0(self) -> float:
        """Simulated time of the first recorded state."""
        return float(self.series["state_time"][0])

    def time(self, prefix: str = "state") -> np.ndarray:
        """Times of the ``state`` samples or the ``plan`` iterations, from the first state."""
        return self.series[f"{prefix}_time"] - self.t0

    def has(self, key: str) -> bool:
        """Whether the run recorded series ``key`` (with at least one sample)."""
        return key in self.series and len(self.series[key]) > 0

    @property
    def events_timed(self) -> bool:
        """Whether event times were recorded (run directories before that have none)."""
        return "event_time" in self.series

    def joints(self) -> JointInfo:
        """Joint names, indices and limits (robot metadata, in motor order, mapped by name)."""
        robot = self.robot
        model = robots.load_planning_model(robot.name)
        ids = model.actuator_trnid[:, 0]
        names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) for j in ids]
        angle = dict(zip(robot.motor_joints, robot.joint_limits, strict=True))
        torque = dict(zip(robot.motor_joints, robot.torque_limit, strict=True))
        return JointInfo(names, model.jnt_qposadr[ids], model.jnt_dofadr[ids],
                         np.array([angle[n] for n in names]), np.array([torque[n] for n in names]))


def load_run(path: str | Path) -> Run:
    """Read run directory ``path``; raises :class:`RunDirError` naming what is wrong."""
    d = Path(path)
    if not d.is_dir():
        raise RunDirError(f"{d}: no such directory")
    npz, cfg_file, partial = d / "timeseries.npz", d / "config.yaml", d / INCREMENTAL
    closed = npz.is_file() or not (partial / "schema.json").is_file()
    missing = [p.name for p in (npz, cfg_file) if not p.is_file() and (p != npz or closed)]
    if missing:
        raise RunDirError(f"{d}: not a run directory (no {' or '.join(missing)})")
    source = npz if closed else partial
    try:
        if closed:
            with np.load(npz) as z:
                series = {k: z[k] for k in z.files}
        else:
            series = read_record(partial)
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as e:
        raise RunDirError(f"{source}: unreadable ({e})") from None
    if not len(series.get("state_time", ())):
        raise RunDirError(f"{source}: no state samples recorded")
    try:
        config = yamlfile.loads(cfg_file.read_text())
        summary_file = d / "summary.json"
        summary = json.loads(summary_file.read_text()) if summary_file.is_file() else {}
    except (yaml.YAMLError, json.JSONDecodeError) as e:
        raise RunDirError(f"{d}: unreadable config.yaml or summary.json ({e})") from None
    if not isinstance(config, dict) or robot_name(config) not in robots.ROBOTS:
        raise RunDirError(f"{cfg_file}: no known robot in the config")
    return Run(d, config, summary, series, _events(d, series), closed)


def robot_name(config: dict) -> object:
    """The robot's name in a recorded config: ``robot`` itself, or its ``name`` when it is the
    mapping form (a run with a model overlay)."""
    robot = config.get("robot")
    return robot.get("name") if isinstance(robot, dict) else robot


def _events(d: Path, series: dict[str, np.ndarray]) -> list[Event]:
    """The recorded events, or (older run directories) the warnings of events.log, untimed."""
    if "event_time" in series:
        return [Event(float(t), str(lv), str(m)) for t, lv, m in
                zip(series["event_time"], series["event_level"], series["event_message"],
                    strict=True)]
    log = d / "events.log"
    if not log.is_file():
        return []
    matches = (_LOG_LINE.match(line) for line in log.read_text(errors="replace").splitlines())
    return [Event(float("nan"), m[1], m[2]) for m in matches if m]
