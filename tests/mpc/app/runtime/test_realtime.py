"""Realtime mode: threads run, rates and policy age are measured."""

from mpc.app.config import load_config
from mpc.app.runtime.realtime import run_realtime
from mpc.app.runtime.session import Session


def test_realtime_threads_measure_rates(tmp_path):
    cfg = load_config("configs/a1_trot.yaml", [
        "runtime.mode=realtime", "planner.derivative_skip=4", "planner.warmstart_candidates=2",
        "planner.linesearch=batched", "task.gait=stand", "runtime.policy_timeout=2.0"])
    session = Session(cfg, tmp_path)
    session.plan(session.plant.read_state())  # compile before the clock starts
    run_realtime(session, 1.5)
    s = session.close("realtime")
    assert s["sim_time_s"] >= 1.5
    assert s["planner_iterations"] >= 3
    assert s["planning_rate_hz"] > 1.0
    assert 100 < s["feedback_rate_hz"] < 330  # target 300 Hz on a loaded 2-core machine
    assert 0.3 < s["real_time_factor"] < 1.1
    assert s["policy_age_ms_median"] is not None and s["policy_age_ms_median"] > 0
    assert not s["fell"]
