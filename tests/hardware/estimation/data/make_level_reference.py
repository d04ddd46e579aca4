"""Makes ``level_reference.npz`` for test_level_ground.py: what the leg estimators saw and
estimated in a short lockstep trot.

    python tests/hardware/estimation/data/make_level_reference.py record OUT.npz
    python tests/hardware/estimation/data/make_level_reference.py estimate OUT.npz

``record``: the A1 trotting (configs/a1_trot.yaml, ``plant.type=sim_estimated``, 1.5 s in
lockstep) with every input of its base-state source kept (single precision): IMU samples,
encoders, foot forces and the planned stance in force at each update. ``estimate``: feeds
those inputs to ``kalman`` and ``leg_odometry`` with their default options and adds their
estimates (position, linear velocity) to the file. The committed file's estimates were made
by main at 553200e, before the estimators had the ``ground`` option: the default must still
give them.
"""

from __future__ import annotations

import sys

import numpy as np

import robots
from hardware.estimation.base_state import ImuSample
from hardware.estimation.sources import make_source

SOURCES = ("kalman", "leg_odometry")


class Recorder:
    """A base-state source that keeps every input it is given, then passes it on."""

    def __init__(self, source) -> None:
        self.source = source
        self.rows: dict[str, list] = {k: [] for k in ("imu", "q", "dq", "force", "planned")}
        self.force, self.planned = np.full(4, np.nan), np.full(4, -1.0)

    def __getattr__(self, name):
        return getattr(self.source, name)

    def observe_feet(self, force) -> None:
        self.force = np.asarray(force, float).copy()
        self.source.observe_feet(force)

    def set_planned_stance(self, stance) -> None:
        self.planned = np.full(4, -1.0) if stance is None else np.asarray(stance, float)
        self.source.set_planned_stance(stance)

    def update(self, imu, q, dq) -> None:
        for key, value in (("imu", np.r_[imu.time, imu.quat, imu.gyro, imu.accel]),
                           ("q", q), ("dq", dq), ("force", self.force),
                           ("planned", self.planned)):
            self.rows[key].append(np.array(value, float))
        self.source.update(imu, q, dq)


def record(out: str) -> None:
    import tempfile

    from hardware.fake import estimated_plant
    from mpc.app.config import load_config
    from mpc.app.run import run

    made: list[Recorder] = []
    original = estimated_plant.make_source

    def recording(spec, model, robot):
        made.append(Recorder(original(spec, model, robot)))
        return made[-1]

    estimated_plant.make_source = recording
    cfg = load_config("configs/a1_trot.yaml", ["runtime.mode=lockstep", "runtime.duration=1.5",
                                               "plant.type=sim_estimated"])
    with tempfile.TemporaryDirectory() as tmp:
        run(cfg, out=tmp)
    # single precision keeps the file small; the estimates are made from these values
    np.savez_compressed(out, **{k: np.array(v, np.float32) for k, v in made[-1].rows.items()})


def replay(kind: str, data, *, robot: str = "a1", contact: list | None = None,
           **options) -> np.ndarray:
    """(n, 6): position and linear velocity after each update of a ``kind`` source for
    ``robot`` with ``options`` (none: its defaults); with a list ``contact``, each update's
    contact belief is appended to it."""
    info = robots.info(robot)
    source = make_source({"type": kind, **options}, robots.load_planning_model(robot), info)
    out = np.empty((len(data["imu"]), 6))
    for k, (imu, q, dq, force, planned) in enumerate(zip(
            data["imu"], data["q"], data["dq"], data["force"], data["planned"], strict=True)):
        source.set_planned_stance(None if planned[0] < 0 else planned > 0.5)
        if np.isfinite(force).all():
            source.observe_feet(force)
        source.update(ImuSample(imu[0], imu[1:5], imu[5:8], imu[8:11]), q, dq)
        state = source.estimate()
        out[k] = np.r_[state.pos, state.linvel]
        if contact is not None:
            contact.append(np.array(source.contact))
    return out


def estimate(path: str) -> None:
    data = dict(np.load(path))
    for kind in SOURCES:
        data[kind] = replay(kind, data)
    np.savez_compressed(path, **data)


if __name__ == "__main__":
    {"record": record, "estimate": estimate}[sys.argv[1]](sys.argv[2])
