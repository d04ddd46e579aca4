"""Run configuration: YAML files validated strictly against a schema.

The schema is a tree of sections. Fixed sections are dataclasses below; open sections (the
task's parameters, a derivative backend's options, a plant's options) are checked against the
keyword arguments of the class that consumes them, so a new task or backend is configurable
without touching this file. Every error names the file, the key and what was expected; an
unknown key also names the closest valid one.
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from mpc.errors import UserError


def _shipped_dir() -> Path:
    """Shipped configs: installed as ``mpc/configs``; in a source tree, ``configs/``."""
    here = Path(__file__).resolve().parent
    installed = here / "configs"
    return installed if installed.is_dir() else here.parent / "configs"


SHIPPED_DIR = _shipped_dir()


class ConfigError(UserError):
    """An invalid configuration."""


# ----------------------------------------------------------------------------------------------
# Fixed sections. Field metadata: "min"/"max" bounds (inclusive), "gt" (exclusive lower bound),
# "choices", "help".


def _f(default, **meta):
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata=meta)
    return field(default=default, metadata=meta)


@dataclass
class PlannerConfig:
    horizon: float = _f(0.35, gt=0.0, help="planning horizon (s)")
    timestep: float = _f(0.01, gt=0.0, help="planning model timestep (s)")
    linesearch_candidates: int = _f(10, min=2, help="rollouts per line search")
    linesearch: str = _f("parallel", choices=("parallel", "batched"),
                         help="all candidates at once (MJPC) or thread-sized batches")
    warmstart_candidates: int = _f(6, min=1, help="feedback scalings tried for the nominal")
    min_step: float = _f(1e-3, gt=0.0, max=1.0, help="smallest line-search step")
    derivative_skip: int = _f(1, min=1, max=10, help="derivatives every k-th knot")
    mu_init: float = _f(1.0, gt=0.0)
    mu_min: float = _f(1e-6, gt=0.0)
    mu_max: float = _f(1e6, gt=0.0)
    mu_factor: float = _f(2.0, gt=1.0)
    backward_retries: int = _f(5, min=0)
    threads: int = _f(2, min=1, max=64, help="rollout threads")
    max_speed: float = _f(100.0, gt=0.0, help="rollouts faster than this diverged (m/s, rad/s)")
    self_collision: bool = _f(False, help="plan contacts between the robot's own bodies "
                              "(off: ground contacts only, what the analytic backend covers)")


@dataclass
class RuntimeConfig:
    mode: str = _f("realtime", choices=("lockstep", "realtime"))
    duration: float = _f(10.0, gt=0.0, help="run length (s of plant time)")
    planning_rate: float = _f(50.0, gt=0.0, help="planner target rate (Hz)")
    feedback_rate: float = _f(300.0, gt=0.0, help="TV-LQR feedback rate (Hz)")
    feedback_gain: float = _f(1.0, min=0.0, max=1.0,
                              help="scale of the TV-LQR gains K (below 1 tolerates a slower "
                                   "command path; see README, Running on a robot)")
    seed: int = _f(0, min=0)
    plan_ahead: bool = _f(False, help="realtime: plan from the state predicted one planner "
                                      "iteration ahead (see mpc/runtime/predict.py)")
    policy_timeout: float = _f(0.5, gt=0.0, help="feedback damps after the policy is this old (s)")
    stop_at_goal: bool = _f(False, help="stop when the goal is reached and the robot is still")


@dataclass
class OutputConfig:
    dir: str = _f("runs", help="parent folder of run directories")
    record_rate: float = _f(100.0, gt=0.0, help="time series sample rate (Hz)")


@dataclass
class TelemetryConfig:
    lcm_url: str = _f("", help="LCM URL of planner telemetry ('' = off), "
                             "e.g. udpm://239.255.76.67:7667?ttl=0")
    channel: str = _f("MPC_TELEMETRY", help="LCM channel of planner_telemetry_t messages")


@dataclass
class Config:
    robot: str
    description: str = ""
    task: dict = _f({})
    planner: PlannerConfig = field(default_factory=PlannerConfig)
    derivatives: dict = _f({"backend": "fd"})
    runtime: RuntimeConfig = field(default_factory=RuntimeConfig)
    plant: dict = _f({"type": "sim"})
    safety: dict = _f({})
    output: OutputConfig = field(default_factory=OutputConfig)
    telemetry: TelemetryConfig = field(default_factory=TelemetryConfig)
    #: Where it came from, for messages.
    source: str = "<config>"

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d.pop("source")
        return d


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
    try:
        text = path.read_text()
    except OSError as e:
        raise ConfigError(f"cannot read config file {path}: {e.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ConfigError(f"{path}: invalid YAML{where}: {problem}") from None
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
            value = yaml.safe_load(text) if text != "" else ""
        except yaml.YAMLError:
            value = text
        node = data
        parts = key.strip().split(".")
        for part in parts[:-1]:
            if not isinstance(node.get(part, {}), dict):
                raise ConfigError(f"--set {key}: {part} is not a section")
            node = node.setdefault(part, {})
        node[parts[-1]] = value


def load_config(name: str, overrides: list[str] | None = None) -> Config:
    """Read, override and validate a configuration file."""
    path = resolve_path(name)
    data = read_yaml(path)
    apply_overrides(data, overrides or [], str(path))
    return validate(data, str(path))


def validate(data: dict, source: str) -> Config:
    """Check the whole tree and return a typed :class:`Config`."""
    cfg = _build_dataclass(Config, data, source, prefix="", skip={"source"})
    cfg.source = source
    from mpc import assembly  # the consumers of the open sections

    cfg.task = assembly.validate_task(cfg, source)
    cfg.derivatives = assembly.validate_derivatives(cfg, source)
    cfg.plant = assembly.validate_plant(cfg, source)
    cfg.safety = assembly.validate_safety(cfg, source)
    return cfg


# ----------------------------------------------------------------------------------------------
# Checking


def unknown_key(source: str, where: str, key: str, valid) -> ConfigError:
    valid = sorted(valid)
    close = difflib.get_close_matches(key, valid, n=1, cutoff=0.5)
    hint = f" (did you mean '{close[0]}'?)" if close else f" (valid keys: {', '.join(valid)})"
    return ConfigError(f"{source}: unknown key '{where}{key}'{hint}")


def _build_dataclass(cls, data, source: str, prefix: str, skip=frozenset()):
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: '{prefix.rstrip('.') or 'top level'}' must be a mapping, "
                          f"got {_describe(data)}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.name not in skip}
    for key in data:
        if key not in fields:
            raise unknown_key(source, prefix, str(key), fields)
    kwargs = {}
    for name, f in fields.items():
        where = f"{prefix}{name}"
        if name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ConfigError(f"{source}: missing required key '{where}'")
            continue
        typ = hints[name]
        if dataclasses.is_dataclass(typ):
            kwargs[name] = _build_dataclass(typ, data[name], source, where + ".")
        else:
            kwargs[name] = check_value(data[name], typ, source, where, f.metadata)
    return cls(**kwargs)


def check_value(value: Any, typ, source: str, where: str, meta=None) -> Any:
    """Check ``value`` against a simple type (bool, int, float, str, list, dict, tuple) and
    the bounds in ``meta``; returns it converted (int -> float where a float is expected)."""
    meta = meta or {}
    origin = typing.get_origin(typ) or typ
    if typ is Any or typ is inspect.Parameter.empty:
        return value
    if origin is typing.Union:
        args = [a for a in typing.get_args(typ) if a is not type(None)]
        if value is None:
            return None
        errors = []
        for a in args:
            try:
                return check_value(value, a, source, where, meta)
            except ConfigError as e:
                errors.append(e)
        raise errors[-1]
    if origin is bool:
        if not isinstance(value, bool):
            raise _type_error(source, where, "true or false", value)
    elif origin is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _type_error(source, where, "an integer", value)
    elif origin is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _type_error(source, where, "a number", value)
        value = float(value)
    elif origin is str:
        if not isinstance(value, str):
            raise _type_error(source, where, "a string", value)
    elif origin in (list, tuple):
        if not isinstance(value, (list, tuple)):
            raise _type_error(source, where, "a list", value)
        args = typing.get_args(typ)
        if (args and args[-1] is not Ellipsis) or args:
            value = [check_value(v, args[0], source, f"{where}[{i}]") for i, v in
                     enumerate(value)]
        value = list(value)
    elif origin is dict and not isinstance(value, dict):
        raise _type_error(source, where, "a mapping", value)
    if "choices" in meta and value not in meta["choices"]:
        raise ConfigError(f"{source}: '{where}' must be one of {', '.join(meta['choices'])}, "
                          f"got {value!r}")
    if "min" in meta and value < meta["min"]:
        raise ConfigError(f"{source}: '{where}' must be >= {meta['min']}, got {value}")
    if "max" in meta and value > meta["max"]:
        raise ConfigError(f"{source}: '{where}' must be <= {meta['max']}, got {value}")
    if "gt" in meta and not value > meta["gt"]:
        raise ConfigError(f"{source}: '{where}' must be > {meta['gt']}, got {value}")
    return value


def check_kwargs(func, options: dict, source: str, prefix: str, exclude=()) -> dict:
    """Check an open section against the keyword parameters of ``func`` (a class or function)."""
    target = func.__init__ if inspect.isclass(func) else func
    sig = inspect.signature(target)
    try:
        hints = typing.get_type_hints(target)
    except Exception:  # unresolvable annotations: check names only
        hints = {}
    params = {n: p for n, p in sig.parameters.items()
              if n not in ("self", *exclude) and p.kind in (p.KEYWORD_ONLY,
                                                             p.POSITIONAL_OR_KEYWORD)}
    if not isinstance(options, dict):
        raise ConfigError(f"{source}: '{prefix.rstrip('.')}' must be a mapping, "
                          f"got {_describe(options)}")
    out = {}
    for key, value in options.items():
        if key not in params:
            raise unknown_key(source, prefix, str(key), params)
        out[key] = check_value(value, hints.get(key, Any), source, f"{prefix}{key}")
    for name, p in params.items():
        if p.default is inspect.Parameter.empty and name not in out:
            raise ConfigError(f"{source}: missing required key '{prefix}{name}'")
    return out


def _type_error(source: str, where: str, expected: str, value) -> ConfigError:
    return ConfigError(f"{source}: '{where}' must be {expected}, got {_describe(value)}")


def _describe(value) -> str:
    if isinstance(value, bool):
        return f"{value!r} (a boolean)"
    if isinstance(value, str):
        return f"'{value}' (a string)"
    if isinstance(value, (int, float)):
        return f"{value!r} (a number)"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return repr(value)


def shipped_configs() -> list[tuple[str, str]]:
    """(name, one-line description) of every shipped config."""
    out = []
    for path in sorted(SHIPPED_DIR.glob("*.yaml")):
        try:
            data = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError:
            data = {}
        out.append((path.stem, str(data.get("description", "")).strip()))
    return out
