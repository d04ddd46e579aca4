"""Planning from where the robot will be when the plan is published.

In real time an iteration takes tens of milliseconds: a plan computed from the state measured
at t is published at t + L, when the robot has already moved on under the previous policy, so
the first L seconds of the new plan start from a state that is gone. Replanning from stale
states at 10-20 Hz, with a few milliseconds of command delay on top, drives the joints into a
growing oscillation on the fake robots (``scripts/eval_latency.py --plan-latency``).

With ``runtime.plan_ahead`` the planner starts instead from the state predicted at t + L: the
planning model rolled forward from the measured state under the policy in force, with the
feedback gain the robot applies, L being the median wall time of the recent iterations. It
starts once a few iterations have been timed (the first ones include compilation and can take
seconds), and L is capped at ``max_lead``: an open-loop prediction further out is worth less
than the measurement.
"""

from __future__ import annotations

from collections import deque

import mujoco
import numpy as np

from mpc.app.plants.plant_base import PlantState
from mpc.planner.policy import Policy


class StatePredictor:
    #: Timed iterations needed before predicting.
    MIN_SAMPLES = 3

    def __init__(self, model: mujoco.MjModel, feedback_gain: float, window: int = 10,
                 max_lead: float = 0.1, fixed_lead: float | None = None):
        """``fixed_lead`` replaces the timed lead (lockstep runs that emulate a planning
        latency: their wall time means nothing)."""
        self.model = model
        self.fixed_lead = fixed_lead
        self.data = mujoco.MjData(model)
        self.gain = float(feedback_gain)
        self.max_lead = float(max_lead)
        self.recent: deque[float] = deque(maxlen=window)
        self._ctrl = np.empty(model.nu)

    def note(self, seconds: float) -> None:
        """Record how long one planning step took, from reading the state to publishing."""
        self.recent.append(float(seconds))

    @property
    def lead(self) -> float:
        """How far ahead to predict (s): the median of the recent planning steps, at most
        ``max_lead``; 0 until ``MIN_SAMPLES`` steps have been timed."""
        if self.fixed_lead is not None:
            return self.fixed_lead
        if len(self.recent) < self.MIN_SAMPLES:
            return 0.0
        return min(float(np.median(self.recent)), self.max_lead)

    def predict(self, state: PlantState, policy: Policy) -> PlantState:
        """``state`` advanced by ``lead`` (whole planning-model steps) under ``policy``; the
        measured state itself if the lead rounds to no step or the prediction is not finite."""
        steps = round(self.lead / self.model.opt.timestep)
        if steps == 0:
            return state
        d, ctrl = self.data, self._ctrl
        d.time = state.time
        d.qpos[:], d.qvel[:], d.act[:] = state.qpos, state.qvel, state.act
        for _ in range(steps):
            _, finite = policy.action(d.time, d.qpos, d.qvel, d.act, out=ctrl,
                                      feedback=self.gain)
            if not finite:
                return state
            d.ctrl[:] = ctrl
            mujoco.mj_step(self.model, d)
        if not (np.all(np.isfinite(d.qpos)) and np.all(np.isfinite(d.qvel))):
            return state
        return PlantState(float(d.time), d.qpos.copy(), d.qvel.copy(), d.act.copy())
