"""Run configuration: YAML files validated strictly against a schema.

The schema is a tree of sections. Fixed sections are dataclasses below; open sections (the
task's parameters, a derivative backend's options, a plant's options) are checked against the
keyword arguments of the class that consumes them, so a new task or backend is configurable
without touching this file. Every error names the file, the key and what was expected; an
unknown key also names the closest valid one.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

import yaml

import robots
from common import yamlfile
from common.settings import setting
from derivatives import BACKENDS
from mpc.app.commands import COMMAND_SOURCES, CommandFilter
from mpc.app.maps import MAP_SOURCES
from mpc.app.plants import PLANTS, SAFETY
from mpc.app.schema import (
    ConfigError,
    build_dataclass,
    check_kwargs,
    check_value,
    unknown_key,
)
from mpc.planner.ilqr import ILQRSettings
from mpc.tasks import TASKS, make_task
from mpc.tasks.map_window import WindowSpec
from mpc.tasks.terrain_map import MapError

#: The shipped configs: ``configs/`` of the repository, installed as ``mpc/configs`` (in the
#: source tree ``mpc/configs`` is a link to ``configs/``).
SHIPPED_DIR = Path(__file__).resolve().parents[1] / "configs"

log = logging.getLogger(__name__)


# Fixed sections (bounds as field metadata, see :func:`mpc.app.schema.setting`). The planner's
# section is :class:`mpc.planner.ilqr.ILQRSettings`.


@dataclass
class AuditSettings:
    """``derivatives.audit`` in a config (``every: 0`` turns the audit off)."""

    every: int = 0
    threshold: float = 1e-3
    switch_to_fd: bool = False
    eps: float = 1e-6

    def __post_init__(self) -> None:
        if self.every < 0 or self.threshold <= 0 or self.eps <= 0:
            raise ValueError("derivatives.audit: every >= 0, threshold > 0 and eps > 0")


@dataclass
class RuntimeConfig:
    mode: str = setting("realtime", choices=("lockstep", "realtime"))
    duration: float = setting(10.0, gt=0.0, max=86400.0, help="run length (s of plant time)")
    planning_rate: float = setting(50.0, gt=0.0, max=1000.0, help="planner target rate (Hz)")
    feedback_rate: float = setting(300.0, gt=0.0, max=10000.0,
                                  help="TV-LQR feedback rate (Hz)")
    feedback_gain: float = setting(1.0, min=0.0, max=1.0,
                              help="scale of the TV-LQR gains K (below 1 tolerates a slower "
                                   "command path; see docs/hardware.md)")
    seed: int = setting(0, min=0, max=2**32 - 1)
    plan_ahead: bool = setting(False, help="realtime: plan from the state predicted one planner "
                                      "iteration ahead (see mpc/app/runtime/predict.py)")
    plan_latency: float = setting(0.0, min=0.0, max=1.0,
                                  help="lockstep: a plan comes into force this long (s of plant "
                                       "time) after the state it started from, as a slow "
                                       "planner's would in real time (0: at once)")
    compensate_delay: bool = setting(True, help="feed back for when a command reaches the "
                                     "motors: the planning model overlay's delay plus "
                                     "sensor_latency ahead (see mpc/app/runtime/feedback.py)")
    sensor_latency: float = setting(0.002, min=0.0, max=0.1,
                                    help="age (s) of the robot's state when it is read (the "
                                         "encoders' latency: 2 ms on the Unitree robots and "
                                         "the fake robots); part of the command lead")
    policy_timeout: float = setting(0.5, gt=0.0, max=10.0,
                                    help="feedback damps after the policy is this old (s)")
    nice: int | None = setting(None, min=-20, max=19,
                               help="niceness of the controller's process (negative: a raised "
                                    "priority, e.g. -10 on a robot's computer; needs root or "
                                    "CAP_SYS_NICE; None: as started; see "
                                    "mpc/app/runtime/priority.py)")
    realtime_priority: int | None = setting(
        None, min=1, max=98, help="realtime: run the feedback law's thread under SCHED_FIFO "
        "at this priority (needs root or CAP_SYS_NICE; None: an ordinary thread; see "
        "mpc/app/runtime/priority.py)")


@dataclass
class OutputConfig:
    dir: str = setting("runs", help="parent folder of run directories")
    record_rate: float = setting(100.0, gt=0.0, max=10000.0,
                                help="time series sample rate (Hz)")
    mcap: bool = setting(True, help="also write run.mcap (ROS 2 messages; Foxglove opens it) "
                         "when the ros2 extra is installed")


@dataclass
class TelemetryConfig:
    lcm_url: str = setting("", help="LCM URL of planner telemetry ('' = off), "
                             "e.g. udpm://239.255.76.67:7667?ttl=0")
    channel: str = setting("MPC_TELEMETRY", help="LCM channel of planner_telemetry_t messages")


@dataclass
class Ros2Config:
    """``ros2:``: the run as a ROS 2 participant over DDS (see docs/ros2.md)."""

    enabled: bool = setting(False, help="publish the state, plan and status, take goals; on by "
                            "itself with command.source.type ros2")
    domain_id: int = setting(0, min=0, max=232, help="DDS domain (ROS_DOMAIN_ID)")
    interface: str = setting("", help="network interface ('': cyclonedds' own configuration, "
                             "CYCLONEDDS_URI if set)")
    odom_frame: str = setting("odom", help="frame of /odom's pose and /tf's parent (REP-105)")
    base_frame: str = setting("base_link", help="the robot's base frame (REP-105)")
    odom_topic: str = setting("/odom", help="nav_msgs/Odometry")
    joint_states_topic: str = setting("/joint_states", help="sensor_msgs/JointState")
    tf_topic: str = setting("/tf", help="tf2_msgs/TFMessage, odom -> base_link")
    path_topic: str = setting("/mpc/planned_path", help="nav_msgs/Path of the planned base")
    status_topic: str = setting("/diagnostics", help="diagnostic_msgs/DiagnosticArray")
    goal_topic: str = setting("/goal_pose", help="geometry_msgs/PoseStamped goals (goal mode)")
    state_rate: float = setting(50.0, gt=0.0, max=1000.0,
                                help="rate of /odom, /joint_states and /tf (Hz of plant time)")
    path_rate: float = setting(10.0, gt=0.0, max=1000.0, help="rate of the planned path (Hz)")
    status_rate: float = setting(1.0, gt=0.0, max=100.0, help="rate of the status (Hz)")


@dataclass
class CommandConfig:
    source: dict = setting({}, help="velocity command source {type: scripted | keyboard | lcm | "
                           "unitree_remote | ros2 | gamepad, its options} for task.mode "
                           "velocity ({}: none)")
    max_speed: list[float] = setting([1.0, 0.5, 1.0], min=0.0, max=10.0,
                                     help="limits of |vx|, |vy| (m/s) and |yaw rate| (rad/s)")
    max_accel: list[float] = setting([1.0, 1.0, 2.0], gt=0.0, max=50.0,
                                     help="limits of the command's rate of change (per s)")
    timeout: float = setting(0.5, gt=0.0, max=60.0, help="dead man: after this long (s) "
                             "without a fresh command the command decays to zero")


@dataclass
class MapInputConfig:
    """``map_input:``: terrain maps received while running (docs/terrain.md, "Maps while
    running"), planned on as a local window moving with the robot (:mod:`mpc.tasks.map_window`).
    Needs ``task.ground: map``; ``task.map``, if given, is the window's first contents."""

    source: dict = setting({}, help="map source {type: lcm | ros2, its options} ({}: none, the "
                           "map is task.map's alone)")
    size: list[float] = setting([4.0, 2.0], gt=0.0, max=100.0,
                                help="the window's length along x and width along y (m)")
    resolution: float = setting(0.05, gt=0.0, max=1.0, help="m between the window's samples")
    ahead: float = setting(0.5, min=-10.0, max=10.0,
                           help="the window's centre this far ahead of the base (m, heading)")
    recentre: float = setting(0.25, gt=0.0, max=100.0,
                              help="the window moves when its wanted centre is this far off (m)")
    heights: list[float] = setting([-0.5, 1.0], min=-100.0, max=100.0,
                                   help="[low, high] heights the window holds (m; clipped)")
    floor: float = setting(0.0, min=-100.0, max=100.0,
                           help="ground height (m) where no map has been received")
    wait: float = setting(0.0, min=0.0, max=60.0,
                          help="at the start wait this long (s) for a first map; 0: do not "
                               "wait (plan on task.map or the floor until one arrives)")

    def window(self) -> WindowSpec:
        """The window these keys describe (MapError if they do not make one)."""
        return WindowSpec(self.size[0], self.size[1], self.resolution, self.ahead,
                          self.recentre, self.heights[0], self.heights[1], self.floor)


@dataclass
class Config:
    #: The robot's name. In a file, ``robot:`` is the name, or a mapping ``{name: go1,
    #: overlay: FILE}`` that also names a model overlay (:mod:`robots.overlay`).
    robot: str
    description: str = ""
    task: dict = setting({})
    planner: ILQRSettings = field(default_factory=ILQRSettings)
    derivatives: dict = setting({"backend": "fd"})
    runtime: RuntimeConfig = field(default_factory=RuntimeConfig)
    plant: dict = setting({"type": "sim"})
    safety: dict = setting({})
    output: OutputConfig = field(default_factory=OutputConfig)
    telemetry: TelemetryConfig = field(default_factory=TelemetryConfig)
    command: CommandConfig = field(default_factory=CommandConfig)
    ros2: Ros2Config = field(default_factory=Ros2Config)
    map_input: MapInputConfig = field(default_factory=MapInputConfig)
    #: The model overlay's file (absolute; "" for none), from ``robot.overlay``.
    overlay: str = ""
    #: Where it came from, for messages.
    source: str = "<config>"

    def to_dict(self) -> dict:
        """The config as a file would state it (``robot`` a mapping when it has an overlay)."""
        d = dataclasses.asdict(self)
        d.pop("source")
        overlay = d.pop("overlay")
        if overlay:
            d["robot"] = {"name": self.robot, "overlay": overlay}
        return d

    @property
    def robot_overlay(self) -> robots.Overlay | None:
        """The model overlay (read and checked when the config was validated), or None."""
        return getattr(self, "_overlay", None)


# ----------------------------------------------------------------------------------------------
# Loading


def resolve_path(name: str) -> Path:
    """A config path as given, or a shipped config by name (``a1_trot``, ``a1_trot.yaml``)."""
    path = Path(name)
    if path.is_file():
        return path
    for candidate in (SHIPPED_DIR / path.name, SHIPPED_DIR / f"{path.name}.yaml"):
        if candidate.is_file():
            return candidate
    raise ConfigError(f"config file not found: {name}")


def read_yaml(path: Path) -> dict:
    """The config file's own sections (before ``extends:`` and overrides)."""
    data = yamlfile.read_yaml(path, "config file", ConfigError)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of sections at the top level")
    return data


def apply_overrides(data: dict, overrides: list[str], source: str) -> None:
    """Apply ``KEY=VALUE`` overrides (dotted keys, YAML values) to the raw config mapping."""
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"--set {item}: expected KEY=VALUE")
        key, _, text = item.partition("=")
        try:
            value = yamlfile.loads(text) if text != "" else ""
        except yaml.YAMLError:
            value = text
        except ValueError as e:  # a value YAML parses but Python cannot hold
            raise ConfigError(f"--set {key}: invalid value: {e}") from None
        node = data
        parts = key.strip().split(".")
        for part in parts[:-1]:
            if not isinstance(node.get(part, {}), dict):
                raise ConfigError(f"--set {key}: {part} is not a section")
            node = node.setdefault(part, {})
        node[parts[-1]] = value


def load_config(name: str, overrides: list[str] | None = None) -> Config:
    """Read (following ``extends``), override and validate a configuration file."""
    path = resolve_path(name)
    data = read_config_tree(path)
    apply_overrides(data, overrides or [], str(path))
    if "robot" not in data:  # a config that dropped its extends says so
        raise ConfigError(f"{path}: missing required key 'robot' (state it, or extend a "
                          f"config that does: extends: NAME)")
    robot_section(data, Path.cwd())  # --set robot=NAME, or robot.overlay relative to here
    map_files(data, Path.cwd())  # --set task.map=FILE relative to here
    estimator_map(data)
    return validate(data, str(path))


def read_config_tree(path: Path, _chain: tuple[Path, ...] = ()) -> dict:
    """The mapping of config file ``path`` with the configs it extends merged under it.

    ``extends: OTHER`` names another config file, relative to this file's folder (or a
    shipped config by name). This file's keys are merged over OTHER's (itself resolved the
    same way): a mapping merges key by key, anything else (a number, a list) replaces, and a
    plug-in section that selects another class (``task.name``, ``plant.type``,
    ``command.source.type``) replaces OTHER's section whole, since its options belong to the
    other class. ``KEY: null`` drops an inherited key (its default applies). ``description``
    is not inherited: each file says what it is.
    """
    data = read_yaml(path)
    robot_section(data, path.parent)
    map_files(data, path.parent)
    parent = data.pop("extends", None)
    if parent is None:
        return data
    if not isinstance(parent, str) or not parent.strip():
        raise ConfigError(f"{path}: 'extends' must name a config file, got {parent!r}")
    base_path = path.parent / parent
    try:
        base_path = base_path if base_path.is_file() else resolve_path(parent)
    except ConfigError:
        raise ConfigError(f"{path}: extends: config file not found: {parent}") from None
    chain = (*_chain, path.resolve())
    if base_path.resolve() in chain:
        loop = " -> ".join(p.name for p in (*chain, base_path.resolve()))
        raise ConfigError(f"{path}: extends: a loop ({loop})")
    base = read_config_tree(base_path, chain)
    base.pop("description", None)
    return merge_sections(base, data)


#: Keys that select a plug-in class inside a section: a different choice replaces the section.
SELECTORS = ("name", "type")
#: Keys of the ``robot`` section in its mapping form.
ROBOT_KEYS = ("name", "overlay")


def robot_section(data: dict, folder: Path) -> None:
    """``robot: NAME`` as the mapping ``{name: NAME}`` (so that a config extending another may
    add an overlay to its robot), and a relative ``robot.overlay`` made absolute from
    ``folder`` (the folder of the file that names it)."""
    robot = data.get("robot")
    if isinstance(robot, str):
        data["robot"] = {"name": robot}
    elif isinstance(robot, dict) and isinstance(robot.get("overlay"), str) and robot["overlay"]:
        path = Path(robot["overlay"]).expanduser()
        data["robot"] = {**robot, "overlay": str(path if path.is_absolute() else
                                                 (folder / path).resolve())}


def map_files(data: dict, folder: Path) -> None:
    """A relative terrain map file (``task.map``, ``plant.terrain``'s ``{kind: map, file}``,
    ``plant.base_state.map``) made absolute from ``folder`` (the folder of the file that names
    it)."""

    def absolute(name):
        if not isinstance(name, str) or not name:
            return name
        path = Path(name).expanduser()
        return str(path if path.is_absolute() else (folder / path).resolve())

    task, plant = data.get("task"), data.get("plant")
    if isinstance(task, dict) and "map" in task:
        task["map"] = absolute(task["map"])
    terrain = plant.get("terrain") if isinstance(plant, dict) else None
    for feature in terrain if isinstance(terrain, list) else [terrain]:
        if isinstance(feature, dict) and feature.get("kind") == "map" and "file" in feature:
            feature["file"] = absolute(feature["file"])
    estimator = plant.get("base_state") if isinstance(plant, dict) else None
    if isinstance(estimator, dict) and "map" in estimator:
        estimator["map"] = absolute(estimator["map"])


def estimator_map(data: dict) -> None:
    """An estimator on the map (``plant.base_state.ground: map``) reads the planner's map,
    ``task.map``, unless it names one: one map for both, as a robot has (and a map error, such
    as scripts/eval_terrain.py's ``--map-offset``, in both). Done once the overrides are in, so
    a ``--set task.map`` moves the estimator's map too."""
    task, plant = data.get("task"), data.get("plant")
    estimator = plant.get("base_state") if isinstance(plant, dict) else None
    if (isinstance(estimator, dict) and estimator.get("ground") == "map"
            and "map" not in estimator and isinstance(task, dict)
            and isinstance(task.get("map"), str)):
        estimator["map"] = task["map"]


def merge_sections(base: dict, over: dict) -> dict:
    """``over`` merged over ``base`` (see :func:`read_config_tree`); neither is modified."""
    out = dict(base)
    for key, value in over.items():
        old = out.get(key)
        if value is None:  # ``key: null`` drops an inherited key: its default applies
            out.pop(key, None)
            continue
        if isinstance(old, dict) and isinstance(value, dict) and not any(
                k in value and k in old and value[k] != old[k] for k in SELECTORS):
            out[key] = merge_sections(old, value)
        else:
            out[key] = value
    return out


def validate(data: dict, source: str) -> Config:
    """Check the whole tree and return a typed :class:`Config`."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping of sections at the top level")
    name, overlay = _validate_robot(data.get("robot"), source)
    data = {**data, "robot": name} if "robot" in data else data
    cfg = build_dataclass(Config, data, source, prefix="", skip={"source", "overlay"})
    cfg.source = source
    cfg.task = _validate_task(cfg, source)  # the robot's name first
    if overlay is not None:
        cfg.overlay = overlay
        try:
            cfg._overlay = robots.load_overlay(overlay, cfg.robot)
        except robots.OverlayError as e:
            raise ConfigError(f"{source}: robot.overlay: {e}") from None
    cfg.derivatives = _validate_derivatives(cfg, source)
    cfg.plant = _validate_plant(cfg, source)
    cfg.safety = _validate_safety(cfg, source)
    cfg.command.source = _validate_command(cfg, source)
    cfg.map_input.source = _validate_map_input(cfg, source)
    check_consistency(cfg)
    SAFETY.get("envelope")(cfg)  # a robot's safety-relevant values (hardware/safety/envelope.py)
    return cfg


# ----------------------------------------------------------------------------------------------
# Consistency: values each in range can still make a run impossible together.

#: Planner knots (horizon / timestep + 1) above which an iteration takes seconds on a 2-core
#: machine (an error: the robot would follow plans older than they are long) ...
MAX_KNOTS = 1000
#: ... and above which it is slower than the default's by an order of magnitude (a warning).
WARN_KNOTS = 100
#: Rollouts per line search or warm start above which an iteration is costly (a warning).
WARN_CANDIDATES = 32
#: Robots whose ``wasp`` tolerances must stay at or below a bound to control as well as ``fd``
#: (closed-loop comparison, scripts/compare_backends.py; docs/derivatives_wasp.md): robot ->
#: (bound, what was seen above it). Their shipped configs set it; a config above it warns.
WASP_MAX_TOLERANCE = {
    "h1": (0.05, "at 0.2 the H1 trot missed, in 1 of 3 runs, the goal fd reached"),
}


def check_consistency(cfg: Config) -> None:
    """Cross-key checks, in one place: ConfigError naming the key for combinations that make a
    run impossible or meaningless, one warning line each for costly but legal ones."""
    source, p, rt = cfg.source, cfg.planner, cfg.runtime

    def fail(key: str, expected: str, value) -> None:
        raise ConfigError(f"{source}: '{key}' must be {expected}, got {value}")

    if not p.timestep < p.horizon:
        fail("planner.timestep", f"< planner.horizon ({p.horizon})", p.timestep)
    if p.knots > MAX_KNOTS:
        fail("planner.horizon", f"<= {MAX_KNOTS} planner.timestep ({MAX_KNOTS * p.timestep:g} "
             f"s at that timestep; {p.knots} knots)", p.horizon)
    if not p.mu_min <= p.mu_init <= p.mu_max:
        fail("planner.mu_init", f"within planner.mu_min..planner.mu_max ({p.mu_min}..{p.mu_max})",
             p.mu_init)
    if rt.planning_rate > rt.feedback_rate:
        fail("runtime.planning_rate", f"<= runtime.feedback_rate ({rt.feedback_rate})",
             rt.planning_rate)
    if rt.policy_timeout <= 1.0 / rt.planning_rate:
        fail("runtime.policy_timeout", f"> the planning period 1/runtime.planning_rate "
             f"({1.0 / rt.planning_rate:g} s), or every plan would time out", rt.policy_timeout)
    if "command_timeout" in cfg.safety and cfg.safety["command_timeout"] <= 1 / rt.feedback_rate:
        fail("safety.command_timeout", f"> the feedback period 1/runtime.feedback_rate "
             f"({1.0 / rt.feedback_rate:g} s)", cfg.safety["command_timeout"])
    period, key, value = _plant_period(cfg)
    if period is not None:
        rate = 1.0 / period
        if period > p.timestep * (1 + 1e-9):
            fail(key, f"<= planner.timestep ({p.timestep} s)" if key == "plant.timestep"
                 else f">= 1/planner.timestep ({1.0 / p.timestep:g} Hz)", value)
        if rt.feedback_rate > rate * (1 + 1e-9):
            fail("runtime.feedback_rate", f"<= the plant's rate ({rate:g} Hz, from {key})",
                 rt.feedback_rate)
        if cfg.output.record_rate > rate * (1 + 1e-9):
            fail("output.record_rate", f"<= the plant's rate ({rate:g} Hz, from {key})",
                 cfg.output.record_rate)
        if rt.duration < period:
            fail("runtime.duration", f">= one plant step ({period:g} s)", rt.duration)
    if p.knots > WARN_KNOTS:
        log.warning("%s: planner.horizon / planner.timestep gives %d knots (the default 0.35 s "
                    "at 0.01 s gives 36): each iteration takes that much longer", source, p.knots)
    for name in ("linesearch_candidates", "warmstart_candidates"):
        if getattr(p, name) > WARN_CANDIDATES:
            log.warning("%s: planner.%s = %d: more rollouts per iteration than %d cost time "
                        "and rarely help", source, name, getattr(p, name), WARN_CANDIDATES)
    if cfg.derivatives.get("backend") == "wasp" and cfg.robot in WASP_MAX_TOLERANCE:
        bound, seen = WASP_MAX_TOLERANCE[cfg.robot]
        defaults = inspect.signature(BACKENDS.get("wasp")).parameters
        options = cfg.derivatives.get("wasp", {})
        for key in ("tol_x", "tol_u"):
            tol = options.get(key, defaults[key].default)
            if tol > bound:
                log.warning("%s: derivatives.wasp.%s = %g on the %s controls worse than fd (%s; "
                            "docs/derivatives_wasp.md): use <= %g, as the %s configs do", source,
                            key, tol, cfg.robot.upper(), seen, bound, cfg.robot.upper())
                break
    cores = os.cpu_count() or 1
    if p.threads > cores:
        log.warning("%s: planner.threads = %d is more than this machine's %d cores: the "
                    "threads will compete", source, p.threads, cores)


def _plant_period(cfg: Config) -> tuple[float | None, str, float | None]:
    """The plant's step (s), the key it comes from and that key's value: ``plant.timestep`` of
    a simulated plant, ``1 / plant.rate`` of a robot's link, None for plants with neither."""
    params = inspect.signature(PLANTS.get(cfg.plant["type"])).parameters
    for key, to_period in (("timestep", lambda v: v), ("rate", lambda v: 1.0 / v)):
        if key in params:
            value = cfg.plant.get(key, params[key].default)
            return to_period(value), f"plant.{key}", value
    return None, "", None


def _validate_robot(section, source: str) -> tuple[object, str | None]:
    """(the robot's name, the overlay's path or None) of a ``robot`` value: a name, or a
    mapping with ``name`` and ``overlay`` (a bare name is checked with the task)."""
    if not isinstance(section, dict):
        return section, None
    for key in section:
        if key not in ROBOT_KEYS:
            raise unknown_key(source, "robot.", str(key), ROBOT_KEYS)
    if "name" not in section:
        raise ConfigError(f"{source}: missing required key 'robot.name'")
    check_value(section["name"], str, source, "robot.name")
    try:
        robots.info(section["name"])
    except ValueError as e:
        raise ConfigError(f"{source}: robot.name: {e}") from None
    overlay = section.get("overlay")
    if overlay is not None:
        check_value(overlay, str, source, "robot.overlay")
    return section["name"], overlay or None


# Open sections: checked against the keyword arguments of the class that consumes them.
def _check_name(value, source: str, key: str) -> None:
    """A plug-in's name (looked up in a registry) is a string; anything else is named here
    rather than failing inside the lookup."""
    check_value(value, str, source, key)


def _plugin(registry, name, source: str, key: str, extra: bool = False) -> type:
    """The class that ``registry`` holds under ``name`` (the config's ``key``), or one line
    saying what is wrong and what is available; with ``extra``, a plug-in whose optional
    packages are missing names the package and the extra of the same name that installs it."""
    _check_name(name, source, key)
    try:
        return registry.get(name)
    except ValueError as e:
        raise ConfigError(f"{source}: {key}: {e}") from None
    except ImportError as e:
        if not extra:
            raise
        package = (e.name or "?").split(".")[0]
        raise ConfigError(f"{source}: {key} {name} needs the Python package {package!r}: "
                          f"pip install 'legged-mpc[{name}]'") from None


def _validate_task(cfg: Config, source: str) -> dict:
    try:
        info = robots.info(cfg.robot)
    except ValueError as e:
        raise ConfigError(f"{source}: robot: {e}") from None
    task = dict(cfg.task)
    name = task.pop("name", None)
    if name is None:
        raise ConfigError(f"{source}: missing required key 'task.name' "
                          f"(available: {', '.join(TASKS.available())})")
    cls = _plugin(TASKS, name, source, "task.name")
    params = check_kwargs(cls, task, source, "task.", exclude=("robot",))
    try:
        make_task(name, info, **params)
    except ValueError as e:
        raise ConfigError(f"{source}: task: {e}") from None
    return {"name": name, **params}


def _validate_derivatives(cfg: Config, source: str) -> dict:
    section = dict(cfg.derivatives)
    backend = section.get("backend", "fd")
    _check_name(backend, source, "derivatives.backend")
    valid = ["backend", "audit", *BACKENDS.available()]
    for key in section:
        if key not in valid:
            raise unknown_key(source, "derivatives.", str(key), valid)
    if backend not in BACKENDS:
        raise ConfigError(f"{source}: unknown derivative backend '{backend}'; available: "
                          f"{', '.join(BACKENDS.available())}")
    out = {"backend": backend}
    if section.get("audit"):
        audit = check_kwargs(AuditSettings, section["audit"], source, "derivatives.audit.")
        try:
            AuditSettings(**audit)
        except ValueError as e:
            raise ConfigError(f"{source}: {e}") from None
        out["audit"] = audit
    for name in BACKENDS.available():
        if name in section:
            out[name] = check_kwargs(BACKENDS.get(name), section[name] or {}, source,
                                     f"derivatives.{name}.", exclude=("model",))
    return out


def _validate_plant(cfg: Config, source: str) -> dict:
    section = dict(cfg.plant)
    kind = section.pop("type", "sim")
    cls = _plugin(PLANTS, kind, source, "plant.type")
    try:
        params = check_kwargs(cls, section, source, "plant.",
                              exclude=("robot", "seed", "safety", "overlay"))
    except ConfigError as e:
        if "type" in cfg.plant:
            raise
        # the options of a robot's plant, read as a simulation's: say why
        raise ConfigError(f"{e}; plant.type is not set, so it is {kind}") from None
    try:
        cls.check_options(cfg.robot, params)
    except (ValueError, OSError) as e:
        raise ConfigError(f"{source}: plant: {e}") from None
    return {"type": kind, **params}


def _validate_safety(cfg: Config, source: str) -> dict:
    safety_config = SAFETY.get("config")
    params = check_kwargs(safety_config, dict(cfg.safety), source, "safety.")
    try:
        safety_config(**params)
    except ValueError as e:
        raise ConfigError(f"{source}: {e}") from None
    return params


def _validate_command(cfg: Config, source: str) -> dict:
    """The command source's section; a velocity-mode task needs one, other tasks none."""
    section = dict(cfg.command.source)
    kind = section.pop("type", None)
    velocity = cfg.task.get("mode") == "velocity"
    if velocity and kind is None:
        raise ConfigError(f"{source}: task.mode velocity needs 'command.source.type' "
                          f"(available: {', '.join(COMMAND_SOURCES.available())})")
    if kind is None:
        if section:
            raise ConfigError(f"{source}: 'command.source' needs a 'type'")
        return {}
    if not velocity:
        raise ConfigError(f"{source}: 'command.source' is set but the task is not in velocity "
                          f"mode (set task.mode: velocity)")
    cls = _plugin(COMMAND_SOURCES, kind, source, "command.source.type", extra=True)
    params = check_kwargs(cls, section, source, "command.source.", exclude=("plant", "ros2"))
    try:
        cls.check_options(params)
        CommandFilter(cfg.command.max_speed, cfg.command.max_accel, cfg.command.timeout)
    except ValueError as e:
        raise ConfigError(f"{source}: {e}") from None
    return {"type": kind, **params}


def _validate_map_input(cfg: Config, source: str) -> dict:
    """The map source's section, and the window it plans on; the window needs a task on a
    map (``task.ground: map``)."""
    section = dict(cfg.map_input.source)
    kind = section.pop("type", None)
    if kind is None:
        if section:
            raise ConfigError(f"{source}: 'map_input.source' needs a 'type' (available: "
                              f"{', '.join(MAP_SOURCES.available())})")
        return {}
    if cfg.task.get("ground") != "map":
        raise ConfigError(f"{source}: 'map_input.source' is set but task.ground is "
                          f"{cfg.task.get('ground', 'level')!r} (set task.ground: map)")
    cls = _plugin(MAP_SOURCES, kind, source, "map_input.source.type", extra=True)
    params = check_kwargs(cls, section, source, "map_input.source.",
                          exclude=("plant", "ros2"))
    m = cfg.map_input
    for key, n in (("size", 2), ("heights", 2)):
        if len(getattr(m, key)) != n:
            raise ConfigError(f"{source}: 'map_input.{key}' must be a list of {n} numbers, "
                              f"got {getattr(m, key)}")
    try:
        cls.check_options(params)
        m.window()
    except (ValueError, MapError) as e:
        raise ConfigError(f"{source}: map_input: {e}") from None
    return {"type": kind, **params}


def shipped_configs() -> list[tuple[str, str]]:
    """(name, one-line description) of every shipped config."""
    out = []
    for path in sorted(SHIPPED_DIR.glob("*.yaml")):
        try:
            data = yamlfile.loads(path.read_text()) or {}
        except yaml.YAMLError:
            data = {}
        out.append((path.stem, str(data.get("description", "")).strip()))
    return out
