"""Model overlays: applied to the model as stated, and bad ones refused with one line naming the
file and the key, by robots.load_overlay, mpc-run (robot.overlay) and mpc-fake-robot."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import robots
from robots.overlay import OverlayError
from tests.cli_checks import assert_one_line

REPO = Path(__file__).resolve().parents[2]

GOOD = """robot: go1
delay: 0.004
joints:
  FR_calf_joint: {armature: 0.02, damping: 2.5, frictionloss: 0.3, kp: 80.0}
trunk: {mass: 7.0, com: [0.03, 0.01, 0.0]}
"""


def test_an_overlay_is_applied_to_the_model(tmp_path):
    path = tmp_path / "o.yaml"
    path.write_text(GOOD)
    overlay = robots.load_overlay(path, "go1")
    m = robots.load_model("go1", overlay)
    nominal = robots.load_model("go1")
    dof = m.jnt_dofadr[m.joint("FR_calf_joint").id]
    assert m.dof_armature[dof] == 0.02 and m.dof_damping[dof] == 2.5
    assert m.dof_frictionloss[dof] == 0.3
    act = next(a for a in range(m.nu) if m.actuator_trnid[a, 0] == m.joint("FR_calf_joint").id)
    assert m.actuator_gainprm[act, 0] == 80.0 and m.actuator_biasprm[act, 1] == -80.0
    trunk = m.body(robots.info("go1").base_body)
    assert trunk.mass[0] == 7.0 and list(trunk.ipos) == [0.03, 0.01, 0.0]
    other = m.jnt_dofadr[m.joint("FL_calf_joint").id]
    assert m.dof_armature[other] == nominal.dof_armature[other]


@pytest.mark.parametrize("text,fragment", [
    ("robot: go1\njoints: {FR_knee: {armature: 0.01}}\n", "unknown joint 'FR_knee' of go1"),
    ("robot: go1\njoints: {FR_calf_joint: {armature: -0.01}}\n",
     "'joints.FR_calf_joint.armature' must be a physical value: >= 0"),
    ("robot: go1\ntrunk: {mass: -1.0}\n", "'trunk.mass' must be a physical value: > 0"),
    ("robot: go1\njoints: {FR_calf_joint: {stiffness: 3}}\n",
     "unknown key 'joints.FR_calf_joint.stiffness'"),
    ("robot: go1\ndelay: 0.5\n", "'delay' must be <= 0.1"),
    ("robot: go1\njoints: {FR_calf_joint: [\n", "invalid YAML at line 3, column 1"),
    ("robot: go1\ndelay: " + "9" * 5000 + "\n", "invalid value: Exceeds the limit"),
])
def test_a_bad_overlay_is_one_line_naming_it(tmp_path, text, fragment):
    path = tmp_path / "o.yaml"
    path.write_text(text)
    with pytest.raises(OverlayError, match=r"o\.yaml") as e:
        robots.load_overlay(path, "go1")
    assert fragment in str(e.value) and "\n" not in str(e.value)


def test_an_unreadable_overlay_is_one_line_naming_it(tmp_path):
    with pytest.raises(OverlayError, match=r"^cannot read overlay file .*nothing\.yaml: No such"):
        robots.load_overlay(tmp_path / "nothing.yaml", "go1")


def test_mpc_run_refuses_a_bad_overlay_in_one_line(tmp_path):
    path = tmp_path / "o.yaml"
    path.write_text("robot: go1\njoints: {FR_knee: {armature: 0.01}}\n")
    res = subprocess.run([sys.executable, "-m", "mpc.app.cli", "configs/go1_trot.yaml",
                          "--set", f"robot={{name: go1, overlay: {path}}}", "--mode",
                          "lockstep", "--duration", "0.1", "--out", str(tmp_path / "run")],
                         capture_output=True, text=True, cwd=REPO, timeout=300)
    assert_one_line(res, "unknown joint 'FR_knee' of go1")


def test_mpc_fake_robot_refuses_a_bad_overlay_in_one_line(tmp_path):
    path = tmp_path / "o.yaml"
    path.write_text("robot: go1\ntrunk: {mass: -2}\n")
    res = subprocess.run([sys.executable, "-m", "hardware.fake.cli", "--robot", "go1",
                          "--transport", "udp", "--port", "0", "--overlay", str(path)],
                         capture_output=True, text=True, cwd=REPO, timeout=120)
    assert_one_line(res, "'trunk.mass' must be a physical value: > 0")
