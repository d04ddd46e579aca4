"""Strict configuration: messages name the file, the key and what was expected."""

from pathlib import Path

import pytest

from mpc.app.config import load_config, shipped_configs
from mpc.app.schema import ConfigError

SHIPPED = Path(__file__).resolve().parents[3] / "configs"


def write(tmp_path, text: str) -> str:
    p = tmp_path / "c.yaml"
    p.write_text(text)
    return str(p)


BASE = """
robot: a1
task: {name: quadruped_flat, goal: [1.0, 0.0]}
"""


def test_minimal_config_gets_defaults(tmp_path):
    cfg = load_config(write(tmp_path, BASE))
    assert cfg.planner.horizon == 0.35
    assert cfg.derivatives["backend"] == "fd"
    assert cfg.plant["type"] == "sim"
    assert cfg.task["goal"] == [1.0, 0.0]


def test_unknown_key_names_file_key_and_closest_valid_key(tmp_path):
    path = write(tmp_path, BASE + "planner: {horizn: 0.3}\n")
    with pytest.raises(ConfigError) as e:
        load_config(path)
    msg = str(e.value)
    assert path in msg and "planner.horizn" in msg and "did you mean 'horizon'" in msg


def test_unknown_task_parameter_is_checked_against_the_task(tmp_path):
    with pytest.raises(ConfigError, match=r"unknown key 'task.gate'.*did you mean 'gait'"):
        load_config(write(tmp_path, BASE.replace("goal: [1.0, 0.0]", "gate: trot")))


def test_unknown_backend_option_is_checked_against_the_backend(tmp_path):
    with pytest.raises(ConfigError, match=r"derivatives.fd.centred.*did you mean 'centered'"):
        load_config(write(tmp_path, BASE + "derivatives: {backend: fd, fd: {centred: true}}\n"))


@pytest.mark.parametrize("text,expected", [
    ("planner: {horizon: fast}", r"'planner.horizon' must be a number, got 'fast'"),
    ("planner: {threads: 1.5}", r"'planner.threads' must be an integer"),
    ("planner: {horizon: -1}", r"'planner.horizon' must be > 0"),
    ("runtime: {mode: turbo}", r"'runtime.mode' must be one of lockstep, realtime"),
    ("derivatives: {backend: fd, fd: {centered: maybe}}", r"centered' must be true or false"),
    ("planner: 3", r"'planner' must be a mapping"),
])
def test_wrong_type_or_range_names_the_expected_one(tmp_path, text, expected):
    with pytest.raises(ConfigError, match=expected):
        load_config(write(tmp_path, BASE + text + "\n"))


def test_missing_file():
    with pytest.raises(ConfigError, match=r"config file not found: nowhere\.yaml"):
        load_config("nowhere.yaml")


def test_invalid_yaml_reports_the_line(tmp_path):
    with pytest.raises(ConfigError, match=r"invalid YAML at line 3"):
        load_config(write(tmp_path, "robot: a1\ntask:\n  name: x: y\n"))


def test_unknown_robot_and_backend(tmp_path):
    with pytest.raises(ConfigError, match="unknown robot 'b2'"):
        load_config(write(tmp_path, BASE.replace("a1", "b2")))
    with pytest.raises(ConfigError, match="unknown derivative backend 'magic'"):
        load_config(write(tmp_path, BASE), ["derivatives.backend=magic"])


def test_overrides_reach_any_key(tmp_path):
    cfg = load_config(write(tmp_path, BASE), ["task.gait=stand", "planner.horizon=0.5",
                                              "runtime.seed=7", "task.goal=[[1, 1], [2, 0]]"])
    assert cfg.task["gait"] == "stand"
    assert cfg.planner.horizon == 0.5
    assert cfg.runtime.seed == 7
    assert cfg.task["goal"] == [[1, 1], [2, 0]]
    with pytest.raises(ConfigError, match="did you mean 'horizon'"):
        load_config(write(tmp_path, BASE), ["planner.horizonn=1"])


def test_every_shipped_config_is_valid_and_described():
    names = [n for n, _ in shipped_configs()]
    assert "a1_trot" in names
    for name, desc in shipped_configs():
        assert desc, f"{name} has no description"
        load_config(str(SHIPPED / f"{name}.yaml"))


def test_shipped_config_found_by_name():
    assert load_config("a1_trot").robot == "a1"
