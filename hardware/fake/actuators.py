"""A fake robot's motors as a model overlay states them (:mod:`robots.overlay`).

The fake robots' motors run the PD law of the commands they receive,

    tau = clip(s_p Kp (q_des - q) + s_d Kd (dq_des - dq) + tau_ff, +-limit),

and the overlay says how a particular robot's motors differ from the nominal model's: its
``kp`` is the position gain the motor applies when commanded the nominal model's (the gains
the bridge commands, :class:`hardware.unitree.motor_map.MotorMap`), so the motor scales every
commanded Kp by s_p = kp / nominal kp; its ``damping`` likewise the joint's velocity gain,
realized as s_d = damping / nominal damping on the commanded Kd by a fake robot whose joints
carry no damping of their own (their damping is the motor's Kd), or left in the joints by one
that keeps the model's joint damping; its ``torque_limit`` the motors' limit; its ``delay`` holds
every command back that long before the motors obey it (:class:`CommandDelay`). The model's
other parameters (armature, friction, trunk, feet) are applied to the simulated model itself by
:func:`robots.model_spec`.

The fake robot (:class:`hardware.fake.robot.FakeRobotSim`, behind every wire) builds its motors
from here, so the same overlay makes the same robot on every wire.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

from robots.overlay import Overlay

T = TypeVar("T")


@dataclass(frozen=True)
class MotorTruth:
    """Per motor (the caller's order): gain scales s_p, s_d and the torque limit."""

    kp_scale: np.ndarray
    kd_scale: np.ndarray
    torque_limit: np.ndarray

    @classmethod
    def build(cls, overlay: Overlay | None, joints: Sequence[str], nominal_kp: np.ndarray,
              nominal_damping: np.ndarray, torque_limit: np.ndarray,
              damping_in_joints: Sequence[bool]) -> MotorTruth:
        """The motors of ``joints`` under ``overlay`` (None: the nominal motors). The nominal
        figures are per joint: the position gain and the joint damping of the nominal model
        (what the bridge commands as Kp and Kd) and the torque limit. ``damping_in_joints``,
        per joint: the simulated joint keeps its damping (then the overlay's damping is there
        already, from the model, and s_d stays 1)."""
        n = len(joints)
        kp_scale, kd_scale = np.ones(n), np.ones(n)
        limit = np.array(torque_limit, dtype=float)
        for i, joint in enumerate(joints):
            p = overlay.joints.get(joint) if overlay is not None else None
            if p is None:
                continue
            if p.kp is not None and nominal_kp[i] > 0:
                kp_scale[i] = p.kp / nominal_kp[i]
            if p.damping is not None and not damping_in_joints[i] and nominal_damping[i] > 0:
                kd_scale[i] = p.damping / nominal_damping[i]
            if p.torque_limit is not None:
                limit[i] = p.torque_limit
        return cls(kp_scale, kd_scale, limit)

    def torque(self, kp: np.ndarray, q_des: np.ndarray, kd: np.ndarray, dq_des: np.ndarray,
               tau_ff: np.ndarray, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
        """The motors' torque under the commanded law (module docstring)."""
        tau = (self.kp_scale * kp) * (q_des - q)
        tau += (self.kd_scale * kd) * (dq_des - dq)
        tau += tau_ff
        np.minimum(tau, self.torque_limit, out=tau)
        np.maximum(tau, -self.torque_limit, out=tau)
        return tau

    def step_torque(self, kp: np.ndarray, q_des: np.ndarray, kd: np.ndarray,
                    dq_des: np.ndarray, tau_ff: np.ndarray, q: np.ndarray, dq: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
        """The law over one simulation step of MuJoCo's semi-implicit Euler integrator, as a
        motor whose own loop runs much faster than the step applies it: (explicit torque,
        damping to apply implicitly). That integrator is a leapfrog: the angles qₖ belong to
        the steps' instants, the speeds q̇ₖ₊₁ = (qₖ₊₁ − qₖ)/h to the midpoints between them, and
        the step's acceleration (q̇ₖ₊₁ − q̇ₖ)/h to the instant tₖ. So the law is evaluated at
        tₖ: the position term on qₖ, the velocity term on the speed at tₖ, the mean
        (q̇ₖ + q̇ₖ₊₁)/2 of the speeds either side, half explicit and half as the integrator's
        implicit joint damping:

            τ = Kp (q* − qₖ) + Kd (q̇* − (q̇ₖ + q̇ₖ₊₁)/2) + τ_ff.

        The simulated samples then obey the continuous law to second order with central
        differences for speed and acceleration, without the first-order error (an inertia off
        by Kd h / 2) a fully explicit velocity term leaves. A motor whose torque would pass its
        limit is clipped, fully explicit, for that step."""
        kd_eff = self.kd_scale * kd
        full = (self.kp_scale * kp) * (q_des - q) + kd_eff * (dq_des - dq) + tau_ff
        saturated = np.abs(full) > self.torque_limit
        implicit = np.where(saturated, 0.0, 0.5 * kd_eff)
        explicit = np.where(saturated, np.clip(full, -self.torque_limit, self.torque_limit),
                            full + implicit * dq)
        return explicit, implicit


class CommandDelay(Generic[T]):
    """Commands on their way to the motors: each is obeyed ``delay`` seconds (simulation time)
    after it arrived; with no delay, from the instant it arrived."""

    def __init__(self, delay: float):
        if not 0.0 <= delay <= 0.1:
            raise ValueError(f"a transport delay must be within 0..0.1 s, got {delay}")
        self.delay = float(delay)
        self._queue: deque[tuple[float, T]] = deque()

    def push(self, time: float, command: T) -> None:
        """``command`` arrived at ``time``; it is due ``delay`` later."""
        self._queue.append((time + self.delay, command))

    def during(self, start: float, end: float, tolerance: float = 1e-9
               ) -> list[tuple[float, T]]:
        """The commands that take over in the step [``start``, ``end``), oldest first, each with
        the instant it does (its due time; ``start`` for one due earlier). Of several that take
        over at one instant only the newest is kept, as a motor obeys only the latest; one due
        at ``end`` or later stays queued for the next step."""
        out: list[tuple[float, T]] = []
        while self._queue and self._queue[0][0] < end - tolerance:
            due, command = self._queue.popleft()
            at = due if due > start + tolerance else start
            if out and at - out[-1][0] <= tolerance:
                out.pop()
            out.append((at, command))
        return out

    def clear(self) -> None:
        self._queue.clear()
