"""Lockstep mode: simulated time drives everything, so a run is deterministic.

Per plant step of dt: every round(1/(planning_rate dt)) steps one planner iteration runs at the
current state (it takes no simulated time); every round(1/(feedback_rate dt)) steps the
feedback law acts; then the plant steps. Same config and seed, same result.
"""

from __future__ import annotations

import time as _time

from mpc.app.runtime.session import Session


def run_lockstep(session: Session, duration: float) -> None:
    """Run for ``duration`` seconds of plant time. The session's observers tick about every
    50 ms of wall time; a tick that returns False stops the run."""
    plant = session.plant
    dt = plant.timestep
    rt = session.cfg.runtime
    plan_every = max(1, round(1.0 / (rt.planning_rate * dt)))
    act_every = max(1, round(1.0 / (rt.feedback_rate * dt)))
    steps = round(duration / dt)
    wall0 = _time.perf_counter()
    next_tick = wall0
    for i in range(steps):
        state = plant.read_state()
        if not session.observe(state):
            break
        if i % plan_every == 0:
            session.plan(state)
        if i % act_every == 0:
            session.act(state)
        plant.step()
        if _time.perf_counter() >= next_tick:
            next_tick = _time.perf_counter() + 0.05
            session.loop_wall_time = _time.perf_counter() - wall0
            if not session.tick():
                break
    session.observe(plant.read_state())
    session.loop_wall_time = _time.perf_counter() - wall0
