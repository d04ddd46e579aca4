"""scripts/hw_loopback.py: where a loopback run is judged."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import hw_loopback


def test_a_run_is_judged_at_the_configs_own_goal():
    """The config's goal, its last waypoint for the stairs (up the flight, then down to 4.6
    m), as overridden; the robot's default where the config has none (the humanoid stands)."""
    assert hw_loopback.true_goal("go2_hw", "go2", []) == (2.0, 0.0)
    assert hw_loopback.true_goal("go2_hw_stairs", "go2", []) == (4.6, 0.0)
    assert hw_loopback.true_goal("go2_hw", "go2", ["task.goal=[1.5, 0.2]"]) == (1.5, 0.2)
    assert hw_loopback.true_goal("h1_hw", "h1", []) == (0.0, 0.0)
