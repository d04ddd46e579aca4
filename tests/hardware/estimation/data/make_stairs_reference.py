"""Makes ``stairs_reference.npz`` for test_kalman_map.py: what the A1's Kalman filter saw
climbing stairs on the deploy path, with the simulation's true base height.

    python tests/hardware/estimation/data/make_stairs_reference.py OUT.npz

The A1 (configs/a1_hw_stairs.yaml, planning on the map of its 8 cm flight, as the config was
when the file was made: its filter carrying the height, ``ground: carried``, and its swings
rising over 0.15 of the swing, ``task.map_rise``) walks up the
flight for 8 s in lockstep on :class:`hardware.fake.motor_plant.FakeMotorPlant` with the other
published description of the robot (MuJoCo Menagerie's, tests/reference) standing on the same
flight, its realistic sensors, 6 ms command delay and plans in force 20 ms late
(scripts/eval_terrain.py's settings). Kept per estimator update (single precision): every
input of the base-state source (IMU, encoders, foot forces, planned stance) and the true base
height. By 8 s the robot stands on the third tread, 0.24 m up.
"""

from __future__ import annotations

import sys
from pathlib import Path

from make_carried_reference import record_run

MAP = Path(__file__).resolve().parents[4] / "configs" / "maps" / "stairs_8cm.yaml"


def record(out: str, duration: float = 8.0) -> None:
    record_run(out, "configs/a1_hw_stairs.yaml", duration,
               overrides=("plant.base_state={type: kalman, ground: carried}",
                          "task.map_rise=0.15"),
               terrain=[{"kind": "map", "file": str(MAP)}])


if __name__ == "__main__":
    record(sys.argv[1])
