"""Shared fixtures: small models built in code and the A1 planning setup."""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import time

import mujoco
import numpy as np
import pytest

import robots
from mpc.tasks import make_task

# Started as a shell's background job, pytest gets SIGINT ignored, and so would every process a
# test starts (an ignored signal stays ignored across exec, and mpc-run keeps it so, as a user's
# background job wants): the tests that send SIGINT would see nothing happen. Handled here, it
# is back to its default in each child.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

@pytest.fixture(scope="session")
def a1_task():
    """The A1 quadruped task and its planning model (10 ms step)."""
    task = make_task("quadruped_flat", robots.info("a1"), goal=[2.0, 0.0])
    model = task.planning_model(0.01)
    return task, model


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def trotting_data(model, rng):
    """An A1 state with feet on the ground, moving, controls inside their ranges."""
    d = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, d, 0)
    d.ctrl[:] = model.key_ctrl[0] + 0.1 * rng.standard_normal(model.nu)
    for _ in range(20):
        mujoco.mj_step(model, d)
    d.qvel[:] += 0.2 * rng.standard_normal(model.nv)
    return d


def floating_box_model() -> mujoco.MjModel:
    """A free body with a hinge child and one position actuator: all joint types the
    tangent-space code distinguishes except ball, which gets its own body."""
    return mujoco.MjModel.from_xml_string("""
<mujoco>
  <worldbody>
    <geom type="plane" size="5 5 .1"/>
    <body pos="0 0 .5">
      <freejoint/>
      <geom type="box" size=".1 .1 .1" mass="1"/>
      <body pos=".2 0 0">
        <joint name="hinge" axis="0 1 0" range="-1 1"/>
        <geom type="capsule" size=".02" fromto="0 0 0 .2 0 0" mass=".2"/>
        <body pos=".2 0 0">
          <joint type="ball"/>
          <geom type="sphere" size=".03" mass=".1"/>
        </body>
      </body>
      <body pos="-.2 0 0">
        <joint name="slide" type="slide" axis="1 0 0" range="-.1 .1"/>
        <geom type="sphere" size=".03" mass=".1"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <position joint="hinge" kp="10" ctrlrange="-1 1"/>
    <motor joint="slide" ctrlrange="-2 2"/>
  </actuator>
</mujoco>""")


@pytest.fixture
def floating_model() -> mujoco.MjModel:
    return floating_box_model()


@pytest.fixture(scope="session")
def display():
    """A private virtual X display (Xvfb, installed by ``make test`` where it is missing), for
    the viewer and replay tests."""
    xvfb = shutil.which("Xvfb")
    assert xvfb, "Xvfb is required for the viewer tests: run `make test`, which installs it"
    number = 90 + os.getpid() % 100
    proc = subprocess.Popen([xvfb, f":{number}", "-screen", "0", "800x600x24", "-nolisten",
                             "tcp"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Stopped at exit, after GLFW (imported later, so its exit handler runs first) let go.
    atexit.register(proc.terminate)
    time.sleep(1.0)
    old = os.environ.get("DISPLAY")
    os.environ["DISPLAY"] = f":{number}"
    yield f":{number}"
    if old is None:
        os.environ.pop("DISPLAY")
    else:
        os.environ["DISPLAY"] = old
