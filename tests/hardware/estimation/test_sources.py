"""Base-state sources by name: the shipped ones resolve, an unknown name lists the choices."""

import pytest

from hardware.estimation.leg_odometry import LegOdometry
from hardware.estimation.sources import SOURCES, check_spec
from hardware.fake.sim_truth import SimTruth


def test_shipped_sources_resolve():
    assert SOURCES.get("leg_odometry") is LegOdometry
    assert SOURCES.get("sim_truth") is SimTruth  # scripts/hw_loopback.py --base-state truth
    check_spec({"type": "sim_truth", "port": 1})
    check_spec(None)


def test_unknown_source_lists_the_available_ones():
    with pytest.raises(ValueError, match="unknown base-state source 'gps'; available: "
                                         "kalman, leg_odometry, sim_truth"):
        check_spec({"type": "gps"})
