"""The gait schedule reaches the estimator: every feedback step hands the task's planned stance
to the plant, and an estimating plant to its filter (the contact prior)."""

import numpy as np

from mpc.app.config import load_config
from mpc.app.runtime.lockstep import run_lockstep
from mpc.app.runtime.session import Session


def test_the_session_hands_the_gait_schedule_to_the_estimator(tmp_path):
    cfg = load_config("configs/a1_trot.yaml", ["runtime.mode=lockstep",
                                                "plant.type=sim_estimated"])
    session = Session(cfg, tmp_path)
    source = session.plant.source
    seen: list[np.ndarray] = []
    feed = source.set_planned_stance

    def record(stance):
        seen.append(np.array(stance))
        feed(stance)

    source.set_planned_stance = record
    try:
        run_lockstep(session, 0.5)
    finally:
        session.close("lockstep")
    assert len(seen) >= session.counters.feedback_steps > 0
    np.testing.assert_array_equal(source.planned, seen[-1])
    assert len({tuple(s) for s in seen}) >= 2  # the trot's pairs alternate
