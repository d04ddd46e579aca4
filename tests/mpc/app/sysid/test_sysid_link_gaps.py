"""Identification over a link with gaps: the stretches where the log shows the link's timing
broken are left out (:mod:`mpc.app.sysid.data`), and what is left identifies the actuators.

The gantry run is lockstep on the perturbed fake robot's motors, behind a link whose sending
process is held off now and then, as a loaded machine held it off over loopback: the command
stamped as a stall begins leaves only as it ends, none leaves meanwhile, and after 100 ms
without a command the robot's own watchdog puts its motors in damping. The link log says
only when each command was stamped."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import robots
from hardware.fake.motor_plant import FakeMotorPlant
from mpc.app.config import load_config
from mpc.app.run import run
from mpc.app.sysid import data as sysid_data
from mpc.app.sysid.identify import SENSOR_LATENCY, identify
from robots.overlay import Overlay, nominal

DELAY = 0.006
#: Stalls of the sending process: one every 0.6 s from 1 s on, of these lengths (s) in turn;
#: the 120 and 150 ms ones outlast the robot's 100 ms watchdog.
EVERY, LENGTHS = 0.6, (0.02, 0.05, 0.08, 0.12, 0.15, 0.04, 0.06)


def truth() -> Overlay:
    """Go1 with every joint off its nominal figures by a known amount."""
    base = nominal(robots.info("go1"), robots.load_model("go1"))
    out = Overlay("go1", {}, delay=DELAY)
    for i, (joint, p) in enumerate(base.joints.items()):
        s = 1.0 + 0.3 * np.sin(i + 2.0)
        out = out.with_joint(joint, armature=p.armature * s, damping=p.damping / s,
                             frictionloss=0.05 + 0.03 * i, kp=p.kp * (2.0 - s) ** 0.5)
    return out


class StallingLink(FakeMotorPlant):
    """The fake robot's motors behind a sender held off at ``stalls`` ((first step, steps)
    of the simulation): the command stamped at a stall's first step reaches the robot at its
    end, none is sent in between; the robot damps after ``command_timeout`` without one."""

    def __init__(self, *args, stalls: list[tuple[int, int]], **kwargs):
        super().__init__(*args, **kwargs)
        self.sim.command_timeout = 0.1
        self.stalls = {first: steps for first, steps in stalls}
        self.k = 0
        self.held_until = -1
        self.late = None

    def step(self) -> None:
        k, t = self.k, float(self.sim.data.time)
        self.k += 1
        if k in self.stalls:  # stamped and logged now, on the wire only when the stall ends
            self.log.command(t, self.pending, -1, "run")
            self.late, self.held_until = self.pending, k + self.stalls[k]
        elif k == self.held_until:
            self.sim.command(self.late, t)
        elif k > self.held_until:
            self.log.command(t, self.pending, -1, "run")
            self.sim.command(self.pending, t)
        self.sim.step(t)
        self.log.state(float(self.sim.data.time), self.sim.state())


def stalls(dt: float, seconds: float) -> list[tuple[int, int]]:
    starts = np.arange(1.0, seconds, EVERY)
    return [(round(s / dt), round(LENGTHS[i % len(LENGTHS)] / dt))
            for i, s in enumerate(starts)]


@pytest.fixture(scope="module")
def jittery_gantry_run(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("gantry_gaps")
    cfg = load_config("configs/go1_sysid_gantry.yaml", [
        "runtime.mode=lockstep", "task.duration=14", "task.start=1", "task.sweep=7",
        "runtime.duration=16"])
    info = robots.info("go1")
    dt = float(robots.load_model("go1").opt.timestep)
    plant = StallingLink(info, overlay=truth(), gantry=True, gantry_lift=0.3,
                         log_file=str(folder / "link.npz"), stalls=stalls(dt, 16.0))
    summary = run(cfg, out=folder, plant=plant)
    assert summary["damping_reason"] is None and not summary["fell"]
    assert plant.sim.damping_events >= 4  # the long stalls did put the motors in damping
    return folder


def test_the_gaps_in_the_command_stream_are_found(jittery_gantry_run):
    data = sysid_data.load(jittery_gantry_run)
    dt = data.dt
    found = data.suspect
    for first, steps in stalls(dt, 16.0):
        t0 = first * dt
        if data.t[0] < t0 < data.t[-1]:  # a stall inside the run: from the command stamped
            # as it began to the next stamped, one step after the late one left
            assert np.any(np.isclose(found[:, 0], t0)
                          & np.isclose(found[:, 1], t0 + (steps + 1) * dt)), t0
    assert len(found) == sum(data.t[0] < s * dt < data.t[-1] for s, _ in stalls(dt, 16.0))


def test_a_link_with_gaps_identifies_the_actuators(jittery_gantry_run):
    """Every figure within the issue's tolerance: 10 %, friction 0.05 N m, delay 2 ms."""
    fit = identify([jittery_gantry_run])
    found = fit.overlay()
    wrong = []
    for joint, p in truth().joints.items():
        f = found.joints[joint]
        for key in ("kp", "damping", "armature"):
            if abs(getattr(f, key) / getattr(p, key) - 1) > 0.1:
                wrong.append(f"{joint}.{key} {getattr(f, key):.4g} vs {getattr(p, key):.4g}")
        if abs(f.frictionloss - p.frictionloss) > 0.05:
            wrong.append(f"{joint}.frictionloss {f.frictionloss:.3f} vs {p.frictionloss:.3f}")
    assert not wrong, wrong
    assert fit.actuators.delay - SENSOR_LATENCY == pytest.approx(DELAY, abs=0.002)


def test_late_and_missing_states_are_suspect_and_the_samples_near_them_are_left_out():
    """A robot that stalled and caught up (its states arrive late, later ones less so) and
    states lost on the wire, beside a regular command stream."""
    period = 0.002
    t = np.arange(0.0, 1.0, period)
    lag = np.zeros(len(t))
    lag[200:205] = [0.010, 0.008, 0.006, 0.004, 0.0025]
    kept = np.ones(len(t), bool)
    kept[300:305] = False
    spans = sysid_data.suspect_spans(t, t[kept], (t + lag)[kept], period)
    np.testing.assert_allclose(spans, [[t[199], t[204]], [t[299], t[305]]])
    clear = sysid_data.clear_of(np.array([t[199] - 0.011, t[199] - 0.009, t[204] + 0.029,
                                          t[204] + 0.031, t[305] + 0.029]),
                                spans, before=0.01, after=0.03)
    assert clear.tolist() == [True, False, False, True, False]
