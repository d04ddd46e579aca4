"""Which samples enter the actuator fit: away from reversals, yet most of a fast sweep."""

from __future__ import annotations

import numpy as np

from mpc.app.sysid.actuators import MIN_SPEED, speed_floor
from mpc.app.sysid.data import CUTOFF


def test_the_fastest_sweep_keeps_a_third_of_its_samples_and_no_reversal():
    """At the excitation's top frequency (8 Hz, 4 rad/s) a reversal comes every 62 ms; the
    samples near them are left out (stiction), but not the whole sweep: its accelerations are
    what make the armature observable."""
    dt = 0.002
    t = np.arange(0.0, 2.0, dt)
    dq = (4.0 * np.cos(2 * np.pi * 8.0 * t))[:, None]
    used = speed_floor(dq, dt, CUTOFF)[:, 0] > MIN_SPEED
    assert used.mean() > 0.3
    reversal = np.abs(dq[:, 0]) < 1.0  # within 10 ms of a reversal
    assert not np.any(used & reversal)
