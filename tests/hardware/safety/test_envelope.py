"""The safety envelope (hardware/safety/envelope.py): a robot's config may not switch a
protection off without a word. Every row is checked through the validation function, a few
through ``mpc-run``; the shipped hardware configs pass without a warning; the README shows the
table as the code holds it."""

from __future__ import annotations

import logging
import math
import subprocess
import sys
from pathlib import Path

import pytest

from hardware.lcm.plant import LcmPlant
from hardware.safety.envelope import ENVELOPE, Bounds, Rule, markdown_table
from hardware.safety.layer import SafetyConfig
from mpc.app.config import load_config, read_config_tree, shipped_configs
from mpc.app.schema import ConfigError

ROOT = Path(__file__).resolve().parents[3]
HARDWARE = [name for name, _ in shipped_configs()  # as they resolve: a plant may be inherited
            if read_config_tree(ROOT / "configs" / f"{name}.yaml")
            .get("plant", {}).get("type", "sim") != "sim"]
#: The config each row is tried on: one whose plant has the key and applies it.
CONFIG_OF = {"plant.state_timeout": "a1_lcm_mocap", "plant.max_pose_age": "a1_lcm_mocap",
             "plant.kp": "go1_hw", "plant.kd": "go2_hw"}
DEFAULT_CONFIG = "go1_hw_velocity"

#: The issue's examples of values that switched a protection off without a word.
ISSUE = [
    ("safety.estop_buttons=[]", "'safety.estop_buttons' must be a non-empty list"),
    ("safety.ramp_time=0", "'safety.ramp_time' must be >= 0.5"),
    (f"safety.max_tilt={math.pi}", "'safety.max_tilt' must be < 1.5708"),
    ("safety.max_tilt=1.6", "'safety.max_tilt' must be < 1.5708"),
    ("safety.command_timeout=3.0", "'safety.command_timeout' must be <= 0.5"),
    ("runtime.policy_timeout=1.0", "'runtime.policy_timeout' must be <= planner.horizon (0.35)"),
    ("command.timeout=60.0", "'command.timeout' must be <= 1"),
    ("command.timeout=1000000000.0", "'command.timeout' must be > 0.0 and <= 60.0"),  # the schema's
    ("command.max_speed=[3.0, 0.3, 0.6]", "'command.max_speed[0]' must be <= 2"),
    ("command.max_speed=[50.0, 0.3, 0.6]", "'command.max_speed[0]' must be >= 0.0 and <= 10.0"),
]


def _resolve(config: str, overrides: list[str]):
    """A key's value in a validated config (the rows' references)."""
    cfg = load_config(config, overrides)
    safety = SafetyConfig(**cfg.safety)

    def resolve(key: str):
        section, _, name = key.partition(".")
        if section == "safety":
            return getattr(safety, name)
        return getattr(getattr(cfg, section), name)
    return resolve


def _beyond(bounds: Bounds, resolve, inside: Bounds | None = None):
    """A value outside ``bounds`` (and, given ``inside``, within it)."""
    if bounds.nonempty:
        return []
    for op in ("max", "lt", "min", "gt"):
        end = getattr(bounds, op)
        if end is None:
            continue
        end = resolve(end) if isinstance(end, str) else end
        if isinstance(end, tuple):  # the first element beyond, the others at their bound
            return [_step(op, end[0]), *end[1:]]
        value = _step(op, end)
        if inside is None or not inside.violations("k", value, resolve):
            return value
    raise AssertionError(f"no value outside {bounds} within {inside}")


def _step(op: str, end: float) -> float:
    """Just outside ``end`` of a bound ``op``."""
    return {"max": end * 1.1 + 0.01, "lt": end, "min": end * 0.9 - 0.01 if end > 0 else end - 1,
            "gt": end}[op]


def _override(rule: Rule, value) -> str:
    if rule.key == "plant.kp" or rule.key == "plant.kd":
        value = [value]
    return f"{rule.key}={value!r}".replace("'", "")


@pytest.mark.parametrize("name", HARDWARE)
def test_every_shipped_hardware_config_passes_without_a_warning(name, caplog):
    with caplog.at_level(logging.WARNING):
        load_config(name)
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.parametrize("rule", [r for r in ENVELOPE if r.allowed is not None],
                         ids=lambda r: r.key)
def test_every_refused_value_is_one_line_naming_the_key(rule):
    config = CONFIG_OF.get(rule.key, DEFAULT_CONFIG)
    value = _beyond(rule.allowed, _resolve(config, []))
    with pytest.raises(ConfigError) as e:
        load_config(config, [_override(rule, value)])
    message = str(e.value)
    assert f"'{rule.key}" in message and "on a robot" in message and "\n" not in message


@pytest.mark.parametrize("rule", [r for r in ENVELOPE if r.recommended is not None],
                         ids=lambda r: r.key)
def test_every_value_outside_the_recommended_range_warns_once(rule, caplog):
    config = CONFIG_OF.get(rule.key, DEFAULT_CONFIG)
    value = _beyond(rule.recommended, _resolve(config, []), inside=rule.allowed)
    with caplog.at_level(logging.WARNING):
        load_config(config, [_override(rule, value)])
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and f"'{rule.key}" in warnings[0] and "\n" not in warnings[0]


@pytest.mark.parametrize("override, expected", ISSUE)
def test_the_issues_examples_are_refused(override, expected):
    with pytest.raises(ConfigError, match=r"^configs/go1_hw_velocity\.yaml: ") as e:
        load_config("configs/go1_hw_velocity.yaml", [override])
    assert expected in str(e.value)


@pytest.mark.parametrize("key", sorted(LcmPlant.SAFETY_ELSEWHERE))
def test_safety_options_the_lcm_plant_does_not_apply_are_refused(key):
    value = {"estop_buttons": "[L2, B]"}.get(key, getattr(SafetyConfig(), key))
    with pytest.raises(ConfigError, match=f"'safety.{key}' is not applied with plant type lcm"):
        load_config("a1_lcm_mocap", [f"safety.{key}={value}"])


def test_the_options_the_lcm_plant_applies_are_taken():
    load_config("a1_lcm_mocap", ["safety.max_tilt=0.6", "safety.max_joint_speed=30",
                                 "safety.max_kp=150", "safety.max_kd=5", "safety.dry_run=true"])


def test_a_fake_robot_on_loopback_warns_instead(caplog):
    """A robot at 127.0.0.1 (UDP) or on lo (DDS) can only be a fake: the tests' tolerant
    watchdogs run, each value said to be refused on a robot."""
    for config, where in (("go1_hw", "plant.robot_ip=127.0.0.1"), ("go2_hw", "plant.interface=lo")):
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            load_config(config, [where, "safety.command_timeout=2.0", "safety.ramp_time=0"])
        lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(lines) == 2 and all("refused on a robot; here plant." in w for w in lines)


def test_simulation_is_held_to_the_envelope_only_with_in_simulation(caplog):
    with caplog.at_level(logging.WARNING):
        load_config("a1_trot", ["safety.max_tilt=3.0"])
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    with caplog.at_level(logging.WARNING):
        load_config("a1_trot", ["safety.in_simulation=true", "safety.max_tilt=3.0",
                                "runtime.policy_timeout=0.35"])
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1 and "'safety.max_tilt'" in lines[0] and "a simulated plant" in lines[0]


@pytest.mark.parametrize("override, key", [
    ("safety.estop_buttons=[]", "safety.estop_buttons"),
    ("safety.ramp_time=0", "safety.ramp_time"),
    ("safety.max_tilt=3.14", "safety.max_tilt"),
    ("command.timeout=1000000000.0", "command.timeout"),
    ("command.max_speed=[50, 0.3, 0.6]", "command.max_speed[0]"),
])
def test_mpc_run_refuses_with_one_line_and_exit_code_2(override, key):
    run = subprocess.run([sys.executable, "-m", "mpc.app.cli", "configs/go1_hw_velocity.yaml",
                          "--quiet", "--set", override], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2, run.stderr
    assert len(lines) == 1 and lines[0].startswith("mpc-run: error: ") and f"'{key}" in lines[0]


def test_the_readme_shows_the_table_the_code_holds():
    assert markdown_table() in (ROOT / "docs" / "reliability.md").read_text()
