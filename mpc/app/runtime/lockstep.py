"""Lockstep mode: simulated time drives everything, so a run is deterministic.

Per plant step of dt: every round(1/(planning_rate dt)) steps one planner iteration runs at the
current state (it takes no simulated time); every round(1/(feedback_rate dt)) steps the
feedback law acts; then the plant steps. Same config and seed, same result.
"""

from __future__ import annotations

import time as _time
from collections.abc import Iterator

from mpc.app.runtime.session import Session


def run_lockstep(session: Session, duration: float) -> None:
    """Run for ``duration`` seconds of plant time. The session's observers tick about every
    50 ms of wall time; a tick that returns False stops the run."""
    for _ in lockstep_steps(session, duration):
        pass


def lockstep_steps(session: Session, duration: float) -> Iterator[None]:
    """The lockstep loop, yielding after every plant step, so that several sessions can take
    their steps in turn (``scripts/compare_backends.py`` runs the variants of a comparison
    side by side that way: whatever load the machine has, it falls on all of them alike).
    ``session.loop_wall_time`` counts the wall time spent in this session's own steps."""
    plant = session.plant
    dt = plant.timestep
    rt = session.cfg.runtime
    plan_every = max(1, round(1.0 / (rt.planning_rate * dt)))
    act_every = max(1, round(1.0 / (rt.feedback_rate * dt)))
    steps = round(duration / dt)
    session.loop_wall_time = 0.0
    next_tick = _time.perf_counter()
    for i in range(steps):
        start = _time.perf_counter()
        state = plant.read_state()
        if not session.observe(state):
            session.loop_wall_time += _time.perf_counter() - start
            break
        if i % plan_every == 0:
            session.plan(state)
        if i % act_every == 0:
            session.act(state)
        plant.step()
        keep = True
        if _time.perf_counter() >= next_tick:
            next_tick = _time.perf_counter() + 0.05
            keep = session.tick()
        session.loop_wall_time += _time.perf_counter() - start
        if not keep:
            break
        yield
    session.observe(plant.read_state())
