"""A lockstep run of the Go2 stairs config whose map arrives over LCM from another process
plans exactly as the same run with the map from its file held in the same window (a map given
whole has the floor plane under it, a window not): a window of the map's grid
(``map_input.size`` 6.6 m x 2 m at 0.05 m, centred on the map) holds the same samples, the
same height field and the same targets (tests/mpc/tasks/test_map_window.py). With a smaller
window the plans differ where the window ends (docs/terrain.md, "Maps while running")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from mpc.app.config import load_config
from mpc.app.runtime.lockstep import lockstep_steps
from mpc.app.runtime.session import Session

ROOT = Path(__file__).resolve().parents[3]
STAIRS = ROOT / "configs" / "maps" / "stairs_12cm.yaml"
#: Publishes the stairs map every 20 ms until killed: a mapping process.
PUBLISHER = """
import sys, time
import lcm
from hardware.lcm.map_input import encode
from mpc.tasks.terrain_map import load
link, data = lcm.LCM(sys.argv[1]), encode(load(sys.argv[3]))
while True:
    link.publish(sys.argv[2], data)
    time.sleep(0.02)
"""


def plans(overrides: list[str], run_dir: Path, duration: float = 0.2) -> tuple[list, dict]:
    """The nominal controls of every plan of a lockstep run, and its map input's counts."""
    cfg = load_config("configs/go2_hw_stairs.yaml", [
        "runtime.mode=lockstep", "output.mcap=false",
        f"plant={{type: sim, terrain: {{kind: map, file: {STAIRS}}}}}", *overrides])
    session = Session(cfg, run_dir)
    out = []
    try:
        done = 0
        for _ in lockstep_steps(session, duration):
            if session.counters.iterations + 1 > done and session.planner.nominal is not None:
                done = session.counters.iterations + 1
                out.append(session.planner.nominal.ctrl.copy())
    finally:
        summary = session.close("lockstep")
    return out, summary.get("map_input") or {}


def test_a_map_over_lcm_plans_as_the_same_map_from_its_file(udpm_url, tmp_path):
    channel = "MAP_LOCKSTEP"
    publisher = subprocess.Popen([sys.executable, "-c", PUBLISHER, udpm_url, channel,
                                  str(STAIRS)], cwd=ROOT)
    try:
        over_lcm, counts = plans([
            "task.map=null", f"map_input.source={{type: lcm, lcm_url: '{udpm_url}', "
            f"channel: {channel}}}", "map_input.size=[6.6, 2.0]", "map_input.ahead=2.3",
            "map_input.recentre=100", "map_input.heights=[0.0, 0.6]", "map_input.wait=20"],
            tmp_path / "lcm")
    finally:
        publisher.kill()
        publisher.wait()
    # the file's map in the same window (a map given whole has a floor plane under it)
    from_file, _ = plans([
        f"map_input.source={{type: lcm, lcm_url: '{udpm_url}', channel: {channel}_NONE}}",
        "map_input.size=[6.6, 2.0]", "map_input.ahead=2.3", "map_input.recentre=100",
        "map_input.heights=[0.0, 0.6]"], tmp_path / "file")
    assert counts["applied"] >= 1 and counts["refused"] == {}
    assert len(over_lcm) == len(from_file) >= 8
    for k, (a, b) in enumerate(zip(over_lcm, from_file, strict=True)):
        assert np.array_equal(a, b), f"plan {k}: max difference {np.abs(a - b).max()}"


def test_the_derivative_audit_checks_on_the_map_that_arrived(udpm_url, tmp_path):
    """The audit checks each knot on a copy of the planning model: it follows the terrain the
    knot was planned on (a window filled over LCM from the floor, 0.3 m below the ground the
    robot stands on), so the analytic derivatives agree with it to 1e-4 (relative; a knot
    checked on the terrain the audit's model was copied with is 1.8-2.0 off, and with the
    oracle before its solves converged to rounding the agreement was 2e-4 to 2.5e-3)."""
    import time

    channel = "MAP_AUDIT"
    publisher = subprocess.Popen([sys.executable, "-c", PUBLISHER, udpm_url, channel,
                                  str(STAIRS)], cwd=ROOT)
    try:
        cfg = load_config("configs/go2_hw_stairs.yaml", [
            "runtime.mode=lockstep", "output.mcap=false",
            f"plant={{type: sim, terrain: {{kind: map, file: {STAIRS}}}}}", "task.map=null",
            f"map_input.source={{type: lcm, lcm_url: '{udpm_url}', channel: {channel}}}",
            "map_input.wait=20", "map_input.floor=-0.3", "derivatives.audit.every=1",
            "derivatives.audit.threshold=1.0e-4"])
        session = Session(cfg, tmp_path)
        try:
            for _ in lockstep_steps(session, 0.1):
                pass
            deadline = time.monotonic() + 120  # the worker runs at the lowest priority
            while (session.audit.latest() or (0,))[0] < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            summary = session.close("lockstep")
    finally:
        publisher.kill()
        publisher.wait()
    audit = summary["derivative_audit"]
    assert audit["checks"] >= 2 and audit["disagreements"] == 0, audit


def test_a_map_arriving_during_a_run_is_applied_between_plans(udpm_url, tmp_path):
    """No map at the start (``map_input.wait: 0``: the window is the floor); a map published
    while the run steps reaches the planning model's field at the next plan."""
    import time

    import lcm

    from hardware.lcm.map_input import encode
    from mpc.tasks.terrain_map import load

    channel = "MAP_DURING"
    cfg = load_config("configs/go2_hw_stairs.yaml", [
        "runtime.mode=lockstep", "output.mcap=false",
        f"plant={{type: sim, terrain: {{kind: map, file: {STAIRS}}}}}", "task.map=null",
        f"map_input.source={{type: lcm, lcm_url: '{udpm_url}', channel: {channel}}}"])
    session = Session(cfg, tmp_path)
    model = session.planner.model
    floor = model.hfield_data.copy()
    try:
        steps = lockstep_steps(session, 5.0)
        for _ in range(10):
            next(steps)
        assert session.map_updates.applied == 0 and np.array_equal(model.hfield_data, floor)
        sent = time.monotonic()
        lcm.LCM(udpm_url).publish(channel, encode(load(STAIRS)))
        while session.map_updates.applied == 0 and time.monotonic() - sent < 5.0:
            next(steps)
        took = time.monotonic() - sent
    finally:
        summary = session.close("lockstep")
    assert summary["map_input"]["applied"] == 1, summary["map_input"]
    assert not np.array_equal(model.hfield_data, floor)
    window = session.task.map_ground.window
    assert window.heights.max() == 0.6  # the flight's top, from the map
    print(f"applied {took * 1e3:.0f} ms after publishing (lockstep plans take wall time)")


def test_no_map_within_the_wait_is_one_line_and_exit_2(udpm_url, tmp_path, capsys):
    from mpc.app import cli

    code = cli.main([
        "configs/go2_hw_stairs.yaml", "--mode", "lockstep", "--duration", "0.1", "--out",
        str(tmp_path / "run"), "--set", f"plant={{type: sim, terrain: {{kind: map, file: "
        f"{STAIRS}}}}}", "--set", "task.map=null", "--set",
        f"map_input.source={{type: lcm, lcm_url: '{udpm_url}', channel: MAP_SILENT}}",
        "--set", "map_input.wait=0.3"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.splitlines() == ["mpc-run: error: map_input: no valid map within map_input.wait"
                                " = 0.3 s on LCM channel MAP_SILENT"], err
