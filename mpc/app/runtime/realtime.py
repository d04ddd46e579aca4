"""Realtime mode: wall-clock threads, as on hardware.

- plant thread (simulated plants only): steps the simulation so that its clock follows the
  wall clock (it falls behind, and the real-time factor drops, if the machine cannot keep up);
- feedback thread: the TV-LQR law at ``feedback_rate`` on the latest measured state (under
  SCHED_FIFO with ``runtime.realtime_priority``: :mod:`mpc.app.runtime.priority`);
- planner thread: one iteration after another, at most ``planning_rate`` per second.

The planner publishes each policy by swapping a reference; the feedback thread reads whatever
is current. Achieved rates and policy ages are measured by the session.
"""

from __future__ import annotations

import gc
import logging
import threading
import time as _time
from collections.abc import Callable

from mpc.app.runtime import priority
from mpc.app.runtime.session import Session

log = logging.getLogger(__name__)


def _periodic(stop: threading.Event, period: float, body: Callable[[], None]) -> None:
    """Call ``body`` every ``period`` seconds of wall time until ``stop`` is set; a late call
    re-anchors the schedule instead of bursting to catch up."""
    deadline = _time.perf_counter()
    while not stop.is_set():
        body()
        deadline += period
        delay = deadline - _time.perf_counter()
        if delay > 0:
            _time.sleep(delay)
        elif delay < -period:
            deadline = _time.perf_counter()


def run_realtime(session: Session, duration: float) -> None:
    """Run for ``duration`` seconds of plant time; the main thread watches the state and
    ticks the session's observers every 10 ms (a tick that returns False stops the run)."""
    plant = session.plant
    rt = session.cfg.runtime
    stop = threading.Event()
    errors: list[BaseException] = []

    def guarded(fn):
        def run():
            try:
                fn()
            except BaseException as e:  # stop everything, report in the main thread
                errors.append(e)
                stop.set()
        return run

    def plant_loop():
        _periodic(stop, plant.timestep, plant.step)

    def feedback_loop():
        if rt.realtime_priority is not None:  # checked before the run was built (run.py)
            priority.set_realtime(rt.realtime_priority, "runtime.realtime_priority")
        _periodic(stop, 1.0 / rt.feedback_rate, lambda: session.act(plant.read_state()))

    def planner_loop():
        _periodic(stop, 1.0 / rt.planning_rate, lambda: session.plan(plant.read_state()))

    threads = [threading.Thread(target=guarded(planner_loop), name="planner", daemon=True),
               threading.Thread(target=guarded(feedback_loop), name="feedback", daemon=True)]
    if not plant.realtime_only:
        threads.append(threading.Thread(target=guarded(plant_loop), name="plant", daemon=True))
    t_end = session.time_start + duration
    # What was built before the clock starts (models, compiled kernels, modules: most of the
    # heap) moves to the permanent generation, so that a full collection during the run
    # traverses only what the run makes. A full collection holds the GIL, stopping every
    # thread: over the whole heap it took ~110 ms at a load of 5, ~7 s into an LCM run, and the
    # feedback thread's silence tripped the robot's 50 ms command watchdog.
    gc.collect()
    gc.freeze()
    session.warm_up()  # a fresh policy, the feedback law's kernel loaded
    wall0 = _time.perf_counter()
    for t in threads:
        t.start()
    try:
        while not stop.is_set():
            state = plant.read_state()
            if not session.observe(state) or state.time >= t_end:
                break
            session.loop_wall_time = _time.perf_counter() - wall0
            if not session.tick():
                break
            _time.sleep(0.01)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=5.0)
        session.loop_wall_time = _time.perf_counter() - wall0
        gc.unfreeze()  # collectable again once the run is over
    if errors:
        raise errors[0]
