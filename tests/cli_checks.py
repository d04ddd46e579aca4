"""Checks of a command's bad-input contract, shared by the tests of the console scripts."""

from __future__ import annotations

import subprocess


def assert_one_line(res: subprocess.CompletedProcess, fragment: str) -> None:
    """``res`` refused its input as the project's commands must: exit code 2, no traceback, one
    line on stderr, naming ``fragment``."""
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr + res.stdout
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, res.stderr
    assert fragment in lines[0], lines[0]
