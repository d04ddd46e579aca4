"""The TV-LQR feedback law between plans, with the guards that keep bad commands off the plant.

u = clamp(u*(t) + g K(t) (x ⊖ x*(t))) from the latest published policy, with the gain scale
g in [0, 1] (``runtime.feedback_gain``): the gains K assume the command acts at once, and a
command path with several milliseconds of delay (a robot over the network) turns the full
gains into a growing joint oscillation, which a smaller g avoids. A non-finite result is
never sent (the plant keeps its last command); a policy older than ``timeout`` or repeated
non-finite results put the plant in damping, with the reason logged.

A command also takes time to reach the motors, and the state it is computed from is already
old when it is read: the command lead δ is the planning model overlay's transport delay
(:mod:`robots.overlay`, identified by ``mpc-sysid``) plus the state's age
(``runtime.sensor_latency``; :func:`mpc.app.runtime.session.command_lead`). The state read at
s is the robot's at s − latency and the command sent at s acts from s + delay, so with the
lead the law evaluates the policy δ ahead, at the state the measured speeds carry the measured
one to:

    u(s) = clamp(u*(s + δ) + g K(s + δ) (x̂ ⊖ x*(s + δ))),   x̂ = (q(s) ⊕ δ q̇(s), q̇(s))

The target of a force-limited position servo is then kept within the servo's reach at x̂
(:mod:`mpc.app.runtime.servo_reach`): past it a motor's torque limit swallows its damping,
which the model's does not.

The plan itself still starts from the measured state (the plan's first δ is spent under the
commands already sent, which the previous plan computed for that stretch). Starting it from a
state predicted δ ahead instead (:mod:`mpc.app.runtime.predict`) was measured worse on the
perturbed fake robots (``scripts/eval_sysid.py``): the planning model's 10 ms step is longer
than the delays it would predict over, and its prediction error then starts every plan.
"""

from __future__ import annotations

import logging

import mujoco
import numpy as np

from mpc.app.plants.plant_base import Plant, PlantState
from mpc.app.runtime.servo_reach import ServoReach
from mpc.planner.policy import Policy

log = logging.getLogger(__name__)

#: Consecutive non-finite actions tolerated before the plant is put in damping.
MAX_NONFINITE = 3


class FeedbackController:
    def __init__(self, plant: Plant, nu: int, timeout: float, gain: float = 1.0,
                 lead: float = 0.0, model: mujoco.MjModel | None = None):
        """``lead`` (s): the command lead δ (module docstring); ``model``, the planning
        model, integrates the joints' positions over it (needed with a lead) and names the
        servos whose targets are kept within reach (none without a model)."""
        if not 0.0 <= gain <= 1.0:
            raise ValueError(f"feedback gain must be within 0..1, got {gain}")
        if lead < 0.0 or (lead > 0.0 and model is None):
            raise ValueError(f"a command lead must be >= 0 s and come with the model, got {lead}")
        self.lead = float(lead)
        self.model = model
        self._qpos = np.zeros(model.nq) if model is not None else None
        self.reach = ServoReach(model) if model is not None else None
        self.plant = plant
        self.timeout = float(timeout)
        self.gain = float(gain)
        self.ctrl = np.zeros(nu)
        self.sent = 0
        self.nonfinite = 0
        self.stopped: str | None = None
        self.last_age = 0.0

    def step(self, policy: Policy, state: PlantState) -> np.ndarray | None:
        """Evaluate the policy at ``state`` and send the result; returns what was sent."""
        if self.stopped is not None:
            return None
        self.last_age = state.time - policy.start
        if self.last_age > self.timeout:
            return self._stop(f"policy expired ({self.last_age:.3f} s old, "
                              f"limit {self.timeout:.3f} s)")
        finite = self._law(policy, state, self.ctrl)
        if not finite or not np.all(np.isfinite(self.ctrl)):
            self.nonfinite += 1
            log.warning("non-finite feedback action discarded (%d in a row)", self.nonfinite)
            if self.nonfinite >= MAX_NONFINITE:
                return self._stop("repeated non-finite feedback actions")
            return None
        self.nonfinite = 0
        self.plant.send(self.ctrl)
        self.sent += 1
        return self.ctrl

    def evaluate(self, policy: Policy, state: PlantState) -> np.ndarray:
        """The law at ``state``, not sent and not counted (a warm-up: the first evaluation in a
        process loads the compiled policy kernel from numba's cache)."""
        out = np.zeros_like(self.ctrl)
        self._law(policy, state, out)
        return out

    def _law(self, policy: Policy, state: PlantState, out: np.ndarray) -> bool:
        """out = the law at ``state`` (module docstring); whether the policy found it finite."""
        time, qpos = state.time, state.qpos
        if self.lead > 0.0:
            time, qpos = time + self.lead, self._qpos
            qpos[:] = state.qpos
            mujoco.mj_integratePos(self.model, qpos, state.qvel, self.lead)
        _, finite = policy.action(time, qpos, state.qvel, state.act, out=out,
                                  feedback=self.gain)
        if self.reach is not None:
            self.reach.clamp(qpos, state.qvel, out)
        return finite

    def _stop(self, reason: str) -> None:
        self.stopped = reason
        self.plant.damp(reason)
        log.error("feedback stopped: %s", reason)
        return None
