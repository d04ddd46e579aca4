"""mpc-sysid on a real gantry run of a perturbed fake robot (lockstep: the fake robot's motors
obeying the bridge's commands, its sensors, its link log), and its one-line errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

import robots
from hardware.fake.motor_plant import FakeMotorPlant
from mpc.app.config import load_config
from mpc.app.run import run
from mpc.app.sysid.identify import SENSOR_LATENCY
from robots.overlay import Overlay, nominal
from tests.cli_checks import assert_one_line

REPO = Path(__file__).resolve().parents[4]
DELAY = 0.006


def truth() -> Overlay:
    """Go1 with every joint off its nominal figures by a known amount."""
    base = nominal(robots.info("go1"), robots.load_model("go1"))
    out = Overlay("go1", {}, delay=DELAY)
    for i, (joint, p) in enumerate(base.joints.items()):
        s = 1.0 + 0.3 * np.sin(i + 1.0)  # 0.7 .. 1.3, different for each joint
        out = out.with_joint(joint, armature=p.armature / s, damping=p.damping * s,
                             frictionloss=0.1 + 0.02 * i, kp=p.kp * (2.0 - s) ** 0.5)
    return out


def sysid(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mpc.app.sysid.cli", *args],
                          capture_output=True, text=True, cwd=REPO, timeout=600)


@pytest.fixture(scope="module")
def gantry_run(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("gantry")
    cfg = load_config("configs/go1_sysid_gantry.yaml", [
        "runtime.mode=lockstep", "task.duration=14", "task.start=1", "task.sweep=7",
        "runtime.duration=16"])
    plant = FakeMotorPlant(robots.info("go1"), overlay=truth(), gantry=True, gantry_lift=0.3,
                           log_file=str(folder / "link.npz"))
    summary = run(cfg, out=folder, plant=plant)
    assert summary["damping_reason"] is None and not summary["fell"]
    return folder


def test_the_gantry_run_identifies_the_perturbed_actuators(gantry_run, tmp_path):
    out = tmp_path / "overlay.yaml"
    res = sysid(str(gantry_run), "--out", str(out), "--report", str(tmp_path / "report"))
    assert res.returncode == 0, res.stderr
    found = robots.load_overlay(out, "go1")
    for joint, p in truth().joints.items():
        f = found.joints[joint]
        assert f.kp == pytest.approx(p.kp, rel=0.1), joint
        assert f.damping == pytest.approx(p.damping, rel=0.1), joint
        assert f.armature == pytest.approx(p.armature, rel=0.1), joint
        assert f.frictionloss == pytest.approx(p.frictionloss, abs=0.05), joint
    assert found.delay == pytest.approx(DELAY, abs=0.002)
    report = (tmp_path / "report" / "report.md").read_text()
    assert "FR_calf_joint" in report and "sensor latency" in report
    assert (tmp_path / "report" / "sysid.json").is_file()


def test_the_loop_delay_less_the_sensor_latency_is_the_overlay_delay(gantry_run, tmp_path):
    """Without taking the sensors' latency out, the delay stated is the whole loop's."""
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    assert sysid(str(gantry_run), "--out", str(a)).returncode == 0
    assert sysid(str(gantry_run), "--out", str(b), "--sensor-latency", "0").returncode == 0
    da, db = (yaml.safe_load(p.read_text())["delay"] for p in (a, b))
    assert db - da == pytest.approx(SENSOR_LATENCY, abs=1e-9)
    assert abs(da - DELAY) < abs(db - DELAY)


def test_a_missing_directory_is_one_line(tmp_path):
    assert_one_line(sysid(str(tmp_path / "nope"), "--out", str(tmp_path / "o.yaml")),
                    "no such run directory")


def test_a_directory_that_is_not_a_run_is_one_line(tmp_path):
    assert_one_line(sysid(str(tmp_path), "--out", str(tmp_path / "o.yaml")),
                    "not a run directory (no config.yaml)")


def test_a_run_without_a_link_log_is_one_line(tmp_path):
    (tmp_path / "config.yaml").write_text("robot: go1\ntask: {name: joint_excitation}\n")
    assert_one_line(sysid(str(tmp_path), "--out", str(tmp_path / "o.yaml")),
                    "no robot link log (the run did not set plant.log_file")
    (tmp_path / "config.yaml").write_text("robot: go1\ntask: {name: joint_excitation}\n"
                                          "plant: {log_file: link.npz}\n")
    assert_one_line(sysid(str(tmp_path), "--out", str(tmp_path / "o.yaml")),
                    "link.npz: no such link log")
    (tmp_path / "link.npz").write_bytes(b"not a zip")
    assert_one_line(sysid(str(tmp_path), "--out", str(tmp_path / "o.yaml")),
                    "link.npz: unreadable link log")


def test_without_a_gantry_run_it_is_one_line(gantry_run, tmp_path):
    other = tmp_path / "run"
    other.mkdir()
    config = yaml.safe_load((gantry_run / "config.yaml").read_text())
    config["task"] = {"name": "quadruped_flat"}
    config["plant"]["log_file"] = str(gantry_run / "link.npz")
    (other / "config.yaml").write_text(yaml.safe_dump(config))
    assert_one_line(sysid(str(other), "--out", str(tmp_path / "o.yaml")), "no gantry run")


def test_runs_of_two_robots_are_one_line(gantry_run, tmp_path):
    other = tmp_path / "run"
    other.mkdir()
    config = yaml.safe_load((gantry_run / "config.yaml").read_text())
    config["robot"] = "a1"
    config["plant"]["log_file"] = str(gantry_run / "link.npz")
    (other / "config.yaml").write_text(yaml.safe_dump(config))
    assert_one_line(sysid(str(gantry_run), str(other), "--out", str(tmp_path / "o.yaml")),
                    "several robots")


PAYLOAD, AT = 2.0, np.array([0.08, -0.03, 0.02])


@pytest.fixture(scope="module")
def standing_run(tmp_path_factory) -> Path:
    """The trotting config's first 7 s (4 s standing, then trotting forward) on the same robot
    carrying a payload."""
    folder = tmp_path_factory.mktemp("standing")
    base = nominal(robots.info("go1"), robots.load_model("go1"))
    mass = base.trunk_mass + PAYLOAD
    com = (base.trunk_mass * np.array(base.trunk_com) + PAYLOAD * AT) / mass
    t = truth()
    loaded = Overlay("go1", t.joints, t.delay, mass, tuple(com.tolist()))
    cfg = load_config("configs/go1_sysid_trot.yaml", ["runtime.mode=lockstep",
                                                      "runtime.duration=7"])
    plant = FakeMotorPlant(robots.info("go1"), base_state=cfg.plant.get("base_state"),
                           overlay=loaded, log_file=str(folder / "link.npz"))
    summary = run(cfg, out=folder, plant=plant)
    assert summary["damping_reason"] is None and not summary["fell"]
    return folder


def test_a_standing_and_trotting_run_identifies_the_payload(gantry_run, standing_run, tmp_path):
    out = tmp_path / "overlay.yaml"
    res = sysid(str(gantry_run), str(standing_run), "--out", str(out))
    assert res.returncode == 0, res.stderr
    found = robots.load_overlay(out, "go1")
    base = nominal(robots.info("go1"), robots.load_model("go1"))
    assert found.trunk_mass == pytest.approx(base.trunk_mass + PAYLOAD, abs=0.2)
    com = (base.trunk_mass * np.array(base.trunk_com) + PAYLOAD * AT) / found.trunk_mass
    assert np.allclose(found.trunk_com[:2], com[:2], atol=0.01), (found.trunk_com, com)
