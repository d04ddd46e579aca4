"""Terrain maps in the fake robots (``mpc-fake-robot --terrain "{kind: map, file: F}"``): the
robot stands on the map; a bad map gets one line and exit code 2."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from unitree_helpers import free_udp_port

from hardware.fake import cli as fake_cli
from mpc.tasks.terrain_map import HeightMap


def bad_map(tmp_path, what: str):
    """A map file with a negative resolution, or none at all."""
    if what == "missing":
        return tmp_path / "none.yaml"
    np.save(tmp_path / "h.npy", np.zeros((5, 5)))
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump({"heights": "h.npy", "resolution": -0.05}))
    return path


@pytest.mark.parametrize("what", ["missing", "resolution"])
def test_the_fake_robot_exits_2_with_one_line_for_a_bad_map(what, tmp_path, capsys):
    path = bad_map(tmp_path, what)
    code = fake_cli.main(["--robot", "go1", "--transport", "udp", "--port",
                          str(free_udp_port()), "--terrain", f"{{kind: map, file: {path}}}"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "'terrain.file'" in err and len(err.splitlines()) == 1, err


def test_a_robot_stands_on_the_map_in_the_simulation_and_the_fake_robot(tmp_path, capsys):
    """A raised plateau under the start: the fake robot's base starts and stays over it."""
    HeightMap(np.full((21, 21), 0.1), 0.1, (-1.0, -1.0)).save(tmp_path / "plateau.yaml")
    code = fake_cli.main(["--robot", "go1", "--transport", "udp", "--port",
                          str(free_udp_port()), "--start", "standing", "--duration", "0.3",
                          "--quiet", "--terrain",
                          f"{{kind: map, file: {tmp_path / 'plateau.yaml'}}}"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    flat = fake_cli.main(["--robot", "go1", "--transport", "udp", "--port",
                          str(free_udp_port()), "--start", "standing", "--duration", "0.3",
                          "--quiet"])
    assert flat == 0
    level = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["base_xyz"][2] - level["base_xyz"][2] == pytest.approx(0.1, abs=0.01)
