"""Terrain maps in a config: ``task.map`` (with ``task.ground: map``) and ``plant.terrain: {kind:
map}``, relative to the config that names them; bad maps get one line naming the key and exit
code 2 from ``mpc-run`` (the fake robots: tests/hardware/fake/test_fake_map.py)."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from mpc.app import cli
from mpc.app.config import load_config
from mpc.tasks.terrain_map import HeightMap


def bad_map(tmp_path, what: str):
    """A map file whose ``what`` is wrong."""
    heights = np.zeros((5, 5))
    meta = {"heights": "h.npy", "resolution": 0.05, "origin": [-0.1, -0.1]}
    if what == "resolution":
        meta["resolution"] = -0.05
    elif what == "shape":
        heights = np.zeros(5)
    elif what == "nan":
        heights[2, 2] = np.nan
    np.save(tmp_path / "h.npy", heights)
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump(meta))
    return path


@pytest.mark.parametrize("what, message", [
    ("missing", "no such file"), ("resolution", "resolution must be > 0"),
    ("shape", "2-D grid"), ("nan", "must be finite")])
def test_mpc_run_exits_2_with_one_line_naming_the_key(what, message, tmp_path, capsys):
    path = tmp_path / "none.yaml" if what == "missing" else bad_map(tmp_path, what)
    code = cli.main(["a1_trot", "--mode", "lockstep", "--duration", "0.01", "--out",
                     str(tmp_path / "run"), "--set", "task.ground=map", "--set",
                     f"task.map={path}"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert "task: map:" in err and message in err and len(err.splitlines()) == 1, err
    code = cli.main(["a1_trot", "--mode", "lockstep", "--duration", "0.01", "--out",
                     str(tmp_path / "run"), "--set", f"plant.terrain={{kind: map, file: {path}}}"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert "'terrain.file'" in err and message in err and len(err.splitlines()) == 1, err


def test_map_files_are_relative_to_the_config_that_names_them(tmp_path, monkeypatch):
    (tmp_path / "maps").mkdir()
    HeightMap(np.zeros((3, 3)), 0.1).save(tmp_path / "maps" / "flat.yaml")
    (tmp_path / "c.yaml").write_text(
        "extends: a1_trot\ntask: {ground: map, map: maps/flat.yaml}\n"
        "plant: {terrain: {kind: map, file: maps/flat.yaml}}\n")
    monkeypatch.chdir("/")
    cfg = load_config(str(tmp_path / "c.yaml"))
    assert cfg.task["map"] == str(tmp_path / "maps" / "flat.yaml")
    assert cfg.plant["terrain"]["file"] == str(tmp_path / "maps" / "flat.yaml")
