"""The safety envelope: the values of safety-relevant keys a robot may be run with.

:data:`ENVELOPE` is the one table of them. Each row names a config key, the values that
disable or defeat its protection (**refused**: the config is rejected with one line naming the
key, and ``mpc-run`` exits with code 2), the values that still protect but less than
recommended (**warned**: one warning line naming the key), its default and why. Bounds are the
schema's kind (``min``/``max`` inclusive, ``gt``/``lt`` exclusive, see :mod:`mpc.app.schema`); a
bound may name another key, whose value is then the bound (``runtime.policy_timeout`` <=
``planner.horizon``), or give one bound per element of a list (``command.max_speed``).
:func:`check_envelope` applies the table during validation (:func:`mpc.app.config.validate`), and
:func:`markdown_table` renders it for docs/reliability.md, so the two cannot drift apart.

Which configs it applies to:

- a plant that may reach a real robot (``unitree_udp``, ``unitree_dds``, ``lcm``): refusals
  are errors;
- a fake robot, that is a hardware plant aimed at this machine (``plant.robot_ip`` a loopback
  address, ``plant.interface: lo``), and a simulation with ``safety.in_simulation`` (which
  rehearses the robot's protections): every refusal becomes a warning that says it would be
  refused on a robot (tests and loopback runs on a busy machine loosen watchdogs on purpose);
- any other simulation: nothing (the safety layer is off).

A row applies where its key does: a ``plant.*`` key to plants that have that option; a ``safety.*``
key to plants that apply it. Hardware bridges apply the whole ``safety`` section; a plant wrapped by
:class:`hardware.safety.safe_plant.SafePlant` (LCM, simulations) applies the wrapper's share and its
own (:attr:`mpc.app.plants.plant_base.Plant.SAFETY_APPLIED`). A ``safety`` key that the config sets
but its plant does not apply is refused like a defeated protection (LCM: the robot process owns the
stale-command watchdog, the e-stop, the stand-up ramp).
"""

from __future__ import annotations

import inspect
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from hardware.safety.layer import SafetyConfig
from hardware.safety.safe_plant import SafePlant
from mpc.app.plants import PLANTS
from mpc.app.schema import ConfigError

if TYPE_CHECKING:
    from mpc.app.config import Config

log = logging.getLogger(__name__)

#: A bound: a number, one number per list element, or the dotted key whose value it is.
Bound = float | tuple[float, ...] | str


@dataclass(frozen=True)
class Bounds:
    """``min``/``max`` (inclusive) and ``gt``/``lt`` (exclusive) bounds of a value or of every
    element of a list value; or (``nonempty``) that a list has an item."""

    min: Bound | None = None
    max: Bound | None = None
    gt: Bound | None = None
    lt: Bound | None = None
    nonempty: bool = False

    def violations(self, key: str, value: Any, resolve: Callable[[str], Any]
                   ) -> list[tuple[str, Any, str]]:
        """(key or element key, value, what it must be) for every part of ``value`` outside."""
        if self.nonempty:
            return [] if value else [(key, value, "a non-empty list")]
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        out = []
        for i, x in enumerate(values):
            at = f"{key}[{i}]" if isinstance(value, (list, tuple)) else key
            ends = {op: self._end(op, i, resolve) for op in ("gt", "min", "lt", "max")}
            ok = ((ends["min"] is None or x >= ends["min"][0])
                  and (ends["max"] is None or x <= ends["max"][0])
                  and (ends["gt"] is None or x > ends["gt"][0])
                  and (ends["lt"] is None or x < ends["lt"][0]))
            if not ok:
                out.append((at, x, self._describe(ends)))
        return out

    def _end(self, op: str, i: int, resolve) -> tuple[float, str] | None:
        end = getattr(self, op)
        if end is None:
            return None
        if isinstance(end, str):
            value = resolve(end)
            return float(value), f"{end} ({_show(value)})"
        if isinstance(end, tuple):
            return end[i], _show(end[i])
        return end, _show(end)

    @staticmethod
    def _describe(ends: dict) -> str:
        ops = {"gt": ">", "min": ">=", "lt": "<", "max": "<="}
        return " and ".join(f"{ops[op]} {ends[op][1]}" for op in ("gt", "min", "lt", "max")
                            if ends[op] is not None)


def _show(x) -> str:
    if isinstance(x, tuple):
        return "[" + ", ".join(_show(v) for v in x) + "]"
    if isinstance(x, float):
        return f"{x:g}"
    return str(x)


@dataclass(frozen=True)
class Rule:
    """One row of the envelope: ``allowed`` bounds the values that keep the protection (else
    refused), ``recommended`` the values without a warning (None: no such bound)."""

    key: str
    unit: str
    allowed: Bounds | None
    recommended: Bounds | None
    default: str
    why: str

    def refused_text(self) -> str:
        if self.allowed is None:
            return "-"
        return _complement(self.allowed)

    def warned_text(self) -> str:
        if self.recommended is None:
            return "-"
        return _complement(self.recommended)


def _complement(bounds: Bounds) -> str:
    """The values outside ``bounds``, as the table shows them: ``> 0.5``, ``< 0.5``."""
    if bounds.nonempty:
        return "[] (none)"
    flip = {"gt": "<=", "min": "<", "lt": ">=", "max": ">"}
    parts = [f"{flip[op]} {_show(getattr(bounds, op))}" for op in ("gt", "min", "lt", "max")
             if getattr(bounds, op) is not None]
    return " or ".join(parts)


HALF_PI = math.pi / 2

#: The envelope (see the module docstring). Defaults are the schema's; the hardware configs
#: set ``runtime.policy_timeout`` to their horizon.
ENVELOPE: tuple[Rule, ...] = (
    Rule("safety.estop_buttons", "", Bounds(nonempty=True), None, "[L2, B]",
         "the remote's e-stop; an empty list switches it off"),
    Rule("safety.ramp_time", "s", Bounds(min=0.5), Bounds(min=2.0), "3.0",
         "the stand-up from the measured pose to the home pose at the hold gains: at 0 the "
         "first command jumps there, below 0.5 s a 2 rad move peaks above 6 rad/s"),
    Rule("safety.max_tilt", "rad", Bounds(lt=HALF_PI), Bounds(min=0.3, max=1.0), "0.8",
         "pitch (ZYX) never exceeds pi/2, so from there on the tilt trip cannot fire on it; "
         "beyond 1 rad (57 deg; the robots count as fallen at 60) it fires after the fall; "
         "below 0.3 rad a brisk gait may trip it"),
    Rule("safety.state_timeout", "s", Bounds(max=0.25), Bounds(min=0.01, max=0.05), "0.03",
         "the robot link's watchdog: for this long the controller runs blind on the last "
         "state (deployed bridges' watchdogs use 20-50 ms)"),
    Rule("safety.command_timeout", "s", Bounds(max=0.5), Bounds(min=0.02, max=0.2), "0.1",
         "a dead or stalled controller goes unnoticed this long while the motors hold its "
         "last targets"),
    Rule("safety.max_joint_speed", "rad/s", Bounds(max=60.0), Bounds(max=40.0), "40",
         "the joint-speed trip; Unitree's URDF descriptions of the A1, Go1 and Go2 rate these "
         "joints at 20-30 rad/s, so a trip far above that cannot fire"),
    Rule("safety.max_target_speed", "rad/s", Bounds(max="safety.max_joint_speed"),
         Bounds(max=20.0), "20", "the clamp of velocity targets; one above the joint-speed "
                                 "trip asks for a trip"),
    Rule("safety.max_kp", "N m/rad", None, Bounds(max=250.0), "250",
         "the clamp of every Kp sent; the robots' own gains are 60-200"),
    Rule("safety.max_kd", "N m s/rad", None, Bounds(max=10.0), "10",
         "the clamp of every Kd sent; the robots' own gains are 1.5-5"),
    Rule("safety.damping_kd", "N m s/rad", Bounds(gt=0.0, max="safety.max_kd"),
         Bounds(min=1.0, max=5.0), "3", "the safe state's only gain: at 0 damping is a limp "
                                        "robot; above safety.max_kd the clamp cuts it"),
    Rule("runtime.policy_timeout", "s", Bounds(max="planner.horizon"), None,
         "0.5 (hardware configs: their horizon, 0.35)",
         "past the horizon the feedback would follow a plan beyond its last knot"),
    Rule("runtime.sensor_latency", "s", None, Bounds(max=0.02), "0.002",
         "with an overlay the feedback sends the plan's command this much (plus the overlay's "
         "delay) ahead of the state read; the Unitree robots' encoders report 1-2 ms, so tens "
         "of ms lead the motors toward a state the robot is not in yet"),
    Rule("command.timeout", "s", Bounds(max=1.0), Bounds(max=0.5), "0.5",
         "the dead man: after the command source goes silent the robot keeps walking on its "
         "last command this long"),
    Rule("command.max_speed", "m/s, m/s, rad/s", Bounds(max=(2.0, 1.0, 2.0)),
         Bounds(max=(1.0, 0.5, 1.0)), "[1.0, 0.5, 1.0]",
         "the speed limit (vx, vy, yaw rate) of every command source; 2 m/s is the fastest the "
         "planner was asked to track (A1, simulation): above that the limit limits nothing"),
    Rule("command.max_accel", "per s", None, Bounds(max=(2.0, 2.0, 4.0)), "[1.0, 1.0, 2.0]",
         "how fast a step on the remote becomes a ramp"),
    Rule("plant.kp", "N m/rad", Bounds(max="safety.max_kp"), None, "the model's gains",
         "gains above safety.max_kp would be clamped on every command"),
    Rule("plant.kd", "N m s/rad", Bounds(max="safety.max_kd"), None, "the model's gains",
         "gains above safety.max_kd would be clamped on every command"),
    Rule("plant.state_timeout", "s", Bounds(max=0.25), Bounds(min=0.02, max=0.1), "0.1 (lcm)",
         "the LCM plant's watchdog on the robot process: for this long the controller plans "
         "on a frozen state"),
    Rule("plant.max_pose_age", "s", Bounds(max=0.5), Bounds(max=0.25), "0.25 (lcm)",
         "mocap silent this long: the base estimate runs on the IMU alone"),
)


def markdown_table() -> str:
    """:data:`ENVELOPE` as a Markdown table (docs/reliability.md's)."""
    rows = ["| key | unit | refused | warned | default | why |", "|---|---|---|---|---|---|"]
    rows += [f"| `{r.key}` | {r.unit} | {r.refused_text()} | {r.warned_text()} | {r.default} "
             f"| {r.why} |" for r in ENVELOPE]
    return "\n".join(rows)


@dataclass(frozen=True)
class Finding:
    """One value outside the envelope: its message, and whether it defeats a protection."""

    message: str
    refused: bool


def findings(cfg: Config) -> list[Finding]:
    """Every value of ``cfg`` (a validated config) outside the envelope, regardless of the
    plant (see :func:`check_envelope` for who is held to it)."""
    kind = cfg.plant["type"]
    cls = PLANTS.get(kind)
    plant_options = {k: v for k, v in cfg.plant.items() if k != "type"}
    params = inspect.signature(cls.__init__).parameters
    safety = SafetyConfig(**cfg.safety)
    applied = ({f.name for f in fields(SafetyConfig)} if "safety" in params
               else set(SafePlant.APPLIES | cls.SAFETY_APPLIED))

    def resolve(key: str) -> Any:
        section, _, name = key.partition(".")
        if section == "safety":
            return getattr(safety, name)
        if section == "plant":
            if name in plant_options:
                return plant_options[name]
            return params[name].default
        return getattr(getattr(cfg, section), name)

    out = []
    for name in cfg.safety:
        if name not in applied:
            where = cls.SAFETY_ELSEWHERE.get(name, "the safety wrapper does not apply it")
            out.append(Finding(f"{cfg.source}: 'safety.{name}' is not applied with plant type "
                               f"{kind} ({where}); remove it", True))
    for rule in ENVELOPE:
        section, _, name = rule.key.partition(".")
        if (section == "safety" and name not in applied) or (
                section == "plant" and name not in params):
            continue
        value = resolve(rule.key)
        if value is None:  # unset optional (plant.kp: the model's gains)
            continue
        bad = rule.allowed.violations(rule.key, value, resolve) if rule.allowed else []
        for at, x, expected in bad:
            out.append(Finding(f"{cfg.source}: '{at}' must be {expected} on a robot, got "
                               f"{_show(x)}: {rule.why}", True))
        if bad or rule.recommended is None:
            continue
        for at, x, expected in rule.recommended.violations(rule.key, value, resolve):
            out.append(Finding(f"{cfg.source}: '{at}' = {_show(x)} is outside the recommended "
                               f"{expected}: {rule.why}", False))
    return out


def check_envelope(cfg: Config) -> None:
    """Hold ``cfg`` to the envelope: on a plant that may reach a real robot the first refused
    value raises :class:`ConfigError` (one line naming the key); on a fake robot or a
    simulation with ``safety.in_simulation`` refused values are warnings; other simulations
    are not checked. Values outside the recommended ranges are one warning line each."""
    cls = PLANTS.get(cfg.plant["type"])
    if not (cls.realtime_only or cfg.safety.get("in_simulation", False)):
        return
    simulated = cls.simulated_robot({k: v for k, v in cfg.plant.items() if k != "type"})
    found = findings(cfg)
    if simulated is None:
        refused = [f for f in found if f.refused]
        if refused:
            raise ConfigError(refused[0].message)
    for f in found:
        if f.refused:
            log.warning("%s (refused on a robot; here %s)", f.message, simulated)
        else:
            log.warning("%s", f.message)


def main(argv: list[str] | None = None) -> int:
    """``python -m hardware.safety.envelope``: print the envelope as a Markdown table."""
    import argparse

    argparse.ArgumentParser(prog="python -m hardware.safety.envelope",
                            description="The safety envelope as a Markdown table.").parse_args(argv)
    print(markdown_table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
