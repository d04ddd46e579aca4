"""Gait schedule: swing fractions, phase offsets, continuity of the phase clock."""

import numpy as np
import pytest

from mpc.tasks.gait import QUADRUPED_GAITS, GaitClock, step_height


@pytest.mark.parametrize("name", ["walk", "trot", "canter", "gallop"])
def test_each_foot_swings_for_one_minus_duty_of_the_cycle(name):
    g = QUADRUPED_GAITS[name]
    phase = np.linspace(0, 2 * np.pi, 20001)[:-1]
    lift = step_height(phase, np.array(g.offsets), g.duty, g.amplitude)
    swing = (lift > 0).mean(axis=0)
    np.testing.assert_allclose(swing, 1 - g.duty, atol=2e-3)
    assert lift.max() == pytest.approx(g.amplitude, rel=1e-6)


def test_trot_lifts_diagonal_pairs_together():
    g = QUADRUPED_GAITS["trot"]  # feet (FL, RL, FR, RR)
    phase = np.linspace(0, 4 * np.pi, 999)
    lift = step_height(phase, np.array(g.offsets), g.duty, g.amplitude)
    np.testing.assert_allclose(lift[:, 0], lift[:, 3])  # FL with RR
    np.testing.assert_allclose(lift[:, 1], lift[:, 2])  # RL with FR
    # the second pair repeats the first half a cycle later
    shifted = step_height(phase + np.pi, np.array(g.offsets), g.duty, g.amplitude)
    np.testing.assert_allclose(shifted[:, 1], lift[:, 0], atol=1e-12)


def test_stand_never_lifts():
    g = QUADRUPED_GAITS["stand"]
    assert not step_height(np.linspace(0, 10, 50), np.array(g.offsets), g.duty,
                           g.amplitude).any()


def test_clock_phase_is_continuous_when_cadence_changes():
    clock = GaitClock(cadence=2.0)
    before = clock.phase(1.3)
    clock.set_cadence(3.0, 1.3)
    assert clock.phase(1.3) == pytest.approx(before)
    assert clock.phase(2.3) == pytest.approx(before + 2 * np.pi * 3.0)
