"""Realtime mode: threads run, rates and policy age are measured."""

import gc

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


def test_a_full_collection_in_the_run_skips_what_was_built_before_it(tmp_path):
    """A full garbage collection holds the GIL and stops every thread for as long as it takes
    to traverse the heap (~110 ms at a load of 5 for mpc-run's, ~7 s into an LCM run: the
    feedback thread fell silent past the robot's 50 ms command watchdog). What exists when the
    run starts is frozen for its duration (never traversed), and collectable again after it."""
    cfg = load_config("configs/a1_trot.yaml", [
        "runtime.mode=realtime", "planner.derivative_skip=4", "planner.warmstart_candidates=2",
        "planner.linesearch=batched", "task.gait=stand", "runtime.policy_timeout=2.0"])
    session = Session(cfg, tmp_path)
    session.plan(session.plant.read_state())
    built = len(gc.get_objects())  # tracked objects before the run
    frozen = []
    tick = session.tick

    def tick_and_look() -> bool:
        frozen.append(gc.get_freeze_count())
        return tick()

    session.tick = tick_and_look
    run_realtime(session, 0.3)
    session.close("realtime")
    assert frozen and min(frozen) >= 0.9 * built, (min(frozen, default=0), built)
    assert gc.get_freeze_count() == 0


def test_the_loops_start_from_a_policy_planned_after_the_collection_and_a_warm_law(
        tmp_path, monkeypatch):
    """The collection before the loops took long enough on a robot's clock that the policy
    planned before it expired at the first feedback step (0.49 s against 0.35), and the law's
    first evaluation (its kernel loaded then) made the first command stale: on loopback 4 of
    20 runs were damped at the start. The last plan and a first, unsent evaluation of the law
    come after the collection, before the loops."""
    import mpc.app.runtime.realtime as realtime

    cfg = load_config("configs/a1_trot.yaml", [
        "runtime.mode=realtime", "planner.derivative_skip=4", "planner.warmstart_candidates=2",
        "planner.linesearch=batched", "task.gait=stand", "runtime.policy_timeout=2.0"])
    session = Session(cfg, tmp_path)
    session.plan(session.plant.read_state())
    events: list[str] = []
    collect, plan, act = realtime.gc.collect, session.plan, session.act
    evaluate, send = session.feedback.evaluate, session.plant.send

    def record(name, fn):
        def wrapped(*args, **kwargs):
            events.append(name)
            return fn(*args, **kwargs)
        return wrapped

    monkeypatch.setattr(realtime.gc, "collect", record("collect", collect))
    session.plan, session.act = record("plan", plan), record("act", act)
    session.feedback.evaluate = record("evaluate", evaluate)
    session.plant.send = record("send", send)
    run_realtime(session, 0.2)
    session.close("realtime")
    first_act = events.index("act")
    before = events[:first_act]
    assert "collect" in before, events[:10]
    last_collect = len(before) - 1 - before[::-1].index("collect")
    assert "plan" in before[last_collect:], before
    assert "evaluate" in before[last_collect:], before
    assert "send" not in before, before  # the warm law's command is not sent
