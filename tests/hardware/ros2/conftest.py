"""ROS 2 tests: DDS on the loopback interface (127.0.0.1 as the discovery peer) in a domain of
this test run's own."""

from __future__ import annotations

import pytest
from unitree_helpers import domain_id

from mpc.app.config import Ros2Config


@pytest.fixture
def ros2_settings() -> Ros2Config:
    """The config's ``ros2`` section as a run on loopback has it."""
    return Ros2Config(enabled=True, domain_id=domain_id(), interface="lo")
