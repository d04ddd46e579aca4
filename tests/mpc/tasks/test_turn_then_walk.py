"""The worked example of docs/tasks.md: its listings are the files, and the Go2 does what the
page says (turns 90° in place, then walks 1 m left) in lockstep with no finite differences."""

from __future__ import annotations

import importlib
import inspect
import math
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

from mpc.app.run import run
from mpc.tasks.task_base import base_yaw, wrap_angle

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "tasks.md"
CONFIG = ROOT / "docs" / "examples" / "go2_turn_then_walk.yaml"
#: ``<!-- listing: path[:object] -->`` (the block is the file, or the object's source) or
#: ``<!-- excerpt: path -->`` (the block's lines are consecutive lines of the file), then a
#: fenced block.
MARKED = re.compile(r"<!-- (listing|excerpt): (\S+) -->\n```\w*\n(.*?)```", re.DOTALL)


def marked_blocks() -> list[tuple[str, str, str]]:
    return MARKED.findall(PAGE.read_text())


def test_the_page_marks_its_listings():
    kinds = [(kind, where) for kind, where, _ in marked_blocks()]
    assert ("listing", "mpc/tasks/examples/turn_then_walk.py") in kinds
    assert len(kinds) >= 4


@pytest.mark.parametrize("kind, where, block", marked_blocks(), ids=lambda v: str(v)[:50])
def test_each_listing_on_the_page_is_the_code(kind, where, block):
    path, _, name = where.partition(":")
    text = (ROOT / path).read_text()
    if name:  # an object of a module: its source as it stands in the file
        obj = importlib.import_module(path.removesuffix(".py").replace("/", "."))
        for part in name.split("."):
            obj = getattr(obj, part)
        text = inspect.getsource(obj)
    if kind == "listing":
        assert block == text
    else:
        lines = textwrap.dedent(block).splitlines()
        file_lines = [line.strip() for line in text.splitlines()]
        first = [i for i, line in enumerate(file_lines) if line == lines[0].strip()]
        assert any(file_lines[i : i + len(lines)] == [x.strip() for x in lines]
                   for i in first), f"not in {path}:\n{block}"


def test_the_go2_turns_in_place_then_walks_left(tmp_path):
    summary = run(str(CONFIG), ["runtime.mode=lockstep", "runtime.duration=4",
                                "derivatives.backend=analytic"], out=tmp_path / "run")
    assert not summary["fell"] and summary["failed_iterations"] == 0
    assert summary["fd_evaluations"] == 0
    assert abs(math.degrees(wrap_angle(summary["final_base_yaw"] - math.pi / 2))) < 3.0
    assert summary["goal_distance_end_m"] < 0.05
    assert summary["final_term_costs"]["heading"] < 0.01
    # in place: facing within 5 degrees of left while the base is still near the start
    z = np.load(tmp_path / "run" / "timeseries.npz")
    qpos = z["state_qpos"]
    yaw = np.array([base_yaw(q) for q in qpos])
    turned = np.flatnonzero(np.abs(wrap_angle(yaw - math.pi / 2)) < math.radians(5))[0]
    assert np.linalg.norm(qpos[: turned + 1, :2] - qpos[0, :2], axis=1).max() < 0.1
