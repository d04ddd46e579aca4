"""Configs that extend each other: what merges, what replaces, and the errors."""

from __future__ import annotations

import textwrap

import pytest

from mpc.app.config import load_config, merge_sections, read_config_tree
from mpc.app.schema import ConfigError


def write(folder, name: str, text: str):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def test_a_child_states_only_what_differs(tmp_path):
    write(tmp_path, "bases/sim.yaml", """\
        description: the base
        robot: a1
        task: {name: quadruped_flat, gait: trot, goal: [2.0, 0.0], height: 0.25}
        planner: {horizon: 0.35, linesearch_candidates: 10}
        runtime: {mode: lockstep, duration: 1.0}
        """)
    child = write(tmp_path, "child.yaml", """\
        extends: bases/sim.yaml
        description: the child
        task: {goal: [1.0, 0.5]}
        planner: {linesearch_candidates: 4}
        """)
    cfg = load_config(str(child))
    assert cfg.description == "the child"
    assert cfg.task["goal"] == [1.0, 0.5] and cfg.task["height"] == 0.25
    assert cfg.task["gait"] == "trot"
    assert cfg.planner.linesearch_candidates == 4 and cfg.planner.horizon == 0.35
    assert cfg.runtime.mode == "lockstep"
    # the resolved config, as written to the run directory, holds the merged values
    assert cfg.to_dict()["task"]["goal"] == [1.0, 0.5]


def test_chains_merge_in_order_and_overrides_apply_last(tmp_path):
    write(tmp_path, "a.yaml", "robot: a1\ntask: {name: quadruped_flat, height: 0.25}\n"
          "runtime: {mode: lockstep, duration: 1.0, seed: 1}\n")
    write(tmp_path, "b.yaml", "extends: a.yaml\nruntime: {seed: 2}\n")
    c = write(tmp_path, "c.yaml", "extends: b.yaml\nruntime: {duration: 2.0}\n")
    cfg = load_config(str(c), ["runtime.seed=3"])
    assert (cfg.runtime.duration, cfg.runtime.seed) == (2.0, 3)
    assert load_config(str(c)).runtime.seed == 2


def test_a_section_that_selects_another_class_replaces_the_inherited_one():
    base = {"plant": {"type": "unitree_udp", "robot_ip": "192.168.123.10", "rate": 500.0},
            "task": {"name": "quadruped_flat", "gait": "trot"}}
    over = {"plant": {"type": "lcm", "lcm_url": "memq://"}, "task": {"gait": "walk"}}
    merged = merge_sections(base, over)
    assert merged["plant"] == {"type": "lcm", "lcm_url": "memq://"}
    assert merged["task"] == {"name": "quadruped_flat", "gait": "walk"}
    assert base["task"]["gait"] == "trot"  # the inputs are left alone


def test_null_drops_an_inherited_key_and_lists_replace():
    merged = merge_sections({"task": {"goal": [2.0, 0.0], "gait": "trot"}, "x": [1, 2, 3]},
                            {"task": {"goal": None, "mode": "velocity"}, "x": [4]})
    assert merged == {"task": {"gait": "trot", "mode": "velocity"}, "x": [4]}


def test_a_shipped_config_can_be_extended_by_name(tmp_path):
    child = write(tmp_path, "mine.yaml", "extends: a1_trot\ndescription: mine\n"
                  "runtime: {duration: 1.5}\n")
    cfg = load_config(str(child))
    assert cfg.robot == "a1" and cfg.runtime.duration == 1.5


@pytest.mark.parametrize(("text", "message"), [
    ("extends: nowhere.yaml\n", "extends: config file not found: nowhere.yaml"),
    ("extends: [a, b]\n", "'extends' must name a config file"),
    ("extends: loop.yaml\n", "extends: a loop (loop.yaml -> loop.yaml)"),
])
def test_a_bad_extends_is_one_line_naming_it(tmp_path, text, message):
    path = write(tmp_path, "loop.yaml", text)
    with pytest.raises(ConfigError, match="^" + f"{path}: {message}".replace("(", r"\(")
                       .replace(")", r"\)").replace("[", r"\[")):
        read_config_tree(path)


def _leaves(node: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in node.items():
        if isinstance(value, dict) and value:
            out.update(_leaves(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _without(node: dict, dotted: str) -> dict:
    """``node`` with the leaf at ``dotted`` removed (an emptied section stays, empty)."""
    head, _, rest = dotted.partition(".")
    out = dict(node)
    if rest:
        out[head] = _without(out[head], rest)
    else:
        del out[head]
    return out


def repeated_keys(path) -> list[str]:
    """Keys of a config file without which it would resolve to the same configuration.

    A key is repeated when the file resolves the same without it: it sets what the config it
    extends already gives. A key inside a section that selects another class (``plant.type``)
    is not, since that section replaces the inherited one whole.
    """
    from mpc.app.config import merge_sections, read_yaml

    own = read_yaml(path)
    parent = own.pop("extends", None)
    if parent is None:
        return []
    base = read_config_tree(path.parent / parent)
    base.pop("description", None)
    resolved = merge_sections(base, own)
    return sorted(k for k in _leaves(own) if k != "description"
                  and merge_sections(base, _without(own, k)) == resolved)


def test_no_shipped_config_repeats_what_it_extends():
    from mpc.app.config import SHIPPED_DIR

    paths = sorted(SHIPPED_DIR.rglob("*.yaml"))
    assert len(paths) > 10
    repeated = {p.name: keys for p in paths if (keys := repeated_keys(p))}
    assert repeated == {}


def test_every_shipped_config_says_what_it_is():
    from mpc.app.config import SHIPPED_DIR, read_yaml

    assert [p.name for p in SHIPPED_DIR.glob("*.yaml")
            if not str(read_yaml(p).get("description", "")).strip()] == []


def test_the_repeat_check_finds_a_repeated_key(tmp_path):
    write(tmp_path, "a.yaml", "robot: a1\nplanner: {horizon: 0.35, timestep: 0.01}\n")
    child = write(tmp_path, "b.yaml", "extends: a.yaml\nplanner: {horizon: 0.35, "
                  "timestep: 0.02}\n")
    assert repeated_keys(child) == ["planner.horizon"]
