"""Without their optional packages: a source that needs one is a one-line config error naming
the extra, and a run without ``mcap`` says in its events that run.mcap is not written."""

from __future__ import annotations

import sys

import pytest

from mpc.app.cli import main
from mpc.app.record.reader import load_run
from mpc.app.run import run


def hide(monkeypatch, package: str, *modules: str) -> None:
    """Make ``import package`` fail as if it were not installed (and forget the modules that
    imported it)."""
    monkeypatch.setitem(sys.modules, package, None)
    for name in modules:
        monkeypatch.delitem(sys.modules, name, raising=False)


@pytest.mark.parametrize(("kind", "package", "modules"), [
    ("gamepad", "evdev", ["hardware.gamepad.source", "hardware.gamepad.pad"]),
    ("ros2", "cyclonedds", ["hardware.ros2.command", "hardware.ros2.dds",
                            "hardware.ros2.messages", "hardware.ros2.cdr"])])
def test_a_source_without_its_extra_is_a_one_line_error(monkeypatch, capsys, kind, package,
                                                       modules):
    hide(monkeypatch, package, *modules)
    code = main(["a1_velocity", "--quiet", "--set", f"command.source={{type: {kind}}}"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert f"needs the Python package '{package}'" in err[0]
    assert f"pip install 'legged-mpc[{kind}]'" in err[0]


def test_a_map_source_without_its_extra_is_a_one_line_error(monkeypatch, capsys):
    hide(monkeypatch, "cyclonedds", "hardware.ros2.map_input", "hardware.ros2.dds",
         "hardware.ros2.messages", "hardware.ros2.cdr")
    code = main(["go2_hw_stairs", "--quiet", "--set", "plant={type: sim}", "--set",
                 "map_input.source={type: ros2}"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert "map_input.source.type ros2 needs the Python package 'cyclonedds'" in err[0]
    assert "pip install 'legged-mpc[ros2]'" in err[0]


def test_a_run_without_mcap_says_so_in_its_events(monkeypatch, tmp_path):
    hide(monkeypatch, "mcap", "hardware.ros2.mcap_log", "mcap.writer")
    out = tmp_path / "run"
    run("a1_trot", ["runtime.mode=lockstep", "runtime.duration=0.05"], out=out)
    assert not (out / "run.mcap").exists()
    messages = [e.message for e in load_run(out).events]
    assert any("run.mcap is not written" in m and "legged-mpc[ros2]" in m for m in messages)


def test_the_interface_without_its_extra_is_a_one_line_error(monkeypatch, capsys, tmp_path):
    hide(monkeypatch, "cyclonedds", "hardware.ros2.interface", "hardware.ros2.dds",
         "hardware.ros2.messages", "hardware.ros2.cdr", "hardware.ros2.convert")
    code = main(["a1_trot", "--quiet", "--mode", "lockstep", "--duration", "0.05",
                 "--set", "ros2.enabled=true", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith("mpc-run: error: ros2: needs the Python package")
