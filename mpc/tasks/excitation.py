"""Joint excitation for system identification: every joint sweeps through a chirp about home.

A robot hanging on a gantry (feet free) moves each actuated joint j through a chirp whose
frequency sweeps logarithmically up and down over ``band`` (a triangle in log f, ``sweep``
seconds per round trip), fading in and out over ``ramp`` seconds:

    q_ref,j(t) = q_home,j + e(t) A_j(f_j(t)) sin(φ_j(t)),   dφ_j/dt = 2π f_j(t),
    A_j(f) = min(a_j, v_max / (2π f)),

so the joint moves through angle ``a_j`` (``amplitude``, per joint of a leg: abduction, hip,
knee) at low frequencies and at the speed ``max_speed`` at every frequency above the corner
v_max / (2π a_j): a chirp's crest factor is √2, so the whole band is driven as hard as the
limits allow. The joints' sweeps are offset from one another by ``sweep`` / n (n the number of
joints), so at any moment they move at different frequencies and their responses can be told
apart. The amplitude is further bounded so that the angle stays ``margin`` inside the joint's
limits (:func:`robots.limits.joint_limits`). Before ``start`` and after ``start + duration``
the reference holds home.

What the motion makes observable (``mpc-sysid``, docs/sysid.md): accelerations up to the top
of the band (armature), speeds of both signs across the range (damping and dry friction), a
tracking error that the motor's stiffness must work against (its effective gain), and phase lag
at the higher frequencies (the delay).

The task is open loop: its planner publishes the reference as the policy (no feedback gains,
:class:`mpc.planner.scripted.ScriptedPlanner`), and the feedback law sends it to the plant,
through the hardware bridge and its safety layer on a robot. Its one cost term is the tracking
error q − q_ref, reported as the planner's cost.
"""

from __future__ import annotations

from typing import ClassVar

import mujoco
import numpy as np

import robots
from mpc.tasks.task_base import CostTerm, Task, base_axes
from robots.info import RobotInfo
from robots.limits import joint_limits


class JointExcitation(Task):
    name = "joint_excitation"
    description = "every joint follows a multisine about home (system identification)"
    #: Published as is, without optimization (:class:`mpc.planner.scripted.ScriptedPlanner`).
    open_loop: ClassVar[bool] = True
    #: Bounds of the options (s, rad, rad/s, Hz); the amplitude is further bounded by the
    #: joints' limits and the speed by max_speed.
    RANGES: ClassVar[dict[str, dict[str, float]]] = {
        "start": {"min": 0.0, "max": 60.0},
        "duration": {"gt": 0.0, "max": 600.0},
        "ramp": {"min": 0.0, "max": 60.0},
        "amplitude": {"min": 0.0, "max": 1.5},
        "max_speed": {"gt": 0.0, "max": 20.0},
        "band": {"gt": 0.0, "max": 50.0},
        "sweep": {"gt": 0.0, "max": 600.0},
        "margin": {"min": 0.0, "max": 0.5},
    }

    def __init__(self, robot: RobotInfo, start: float = 2.0, duration: float = 60.0,
                 ramp: float = 2.0, amplitude: float | list[float] = 0.3,
                 max_speed: float = 4.0, band: list[float] = (0.3, 8.0), sweep: float = 20.0,
                 margin: float = 0.1):
        """``start``, ``duration``, ``ramp`` (s); ``amplitude`` (rad): one value, or one per
        joint of a leg (abduction, hip, knee); ``max_speed`` (rad/s) of the reference;
        ``band`` [lowest, highest] frequency (Hz); ``sweep`` (s) per sweep up and down;
        ``margin`` (rad) kept from the joint limits."""
        super().__init__(robot)
        if robot.control != "position":
            raise ValueError(f"{self.name} needs position-controlled motors; {robot.name}'s "
                             f"take torques")
        if not (start >= 0 and duration > 0 and 0 <= 2 * ramp <= duration):
            raise ValueError("start >= 0, duration > 0 and ramp <= duration / 2")
        if np.shape(band) != (2,):
            raise ValueError(f"band must be [lowest, highest] in Hz, got {band!r}")
        lo, hi = (float(f) for f in band)
        if not 0 < lo < hi <= 50.0:
            raise ValueError(f"band must be 0 < lowest < highest <= 50 Hz, got {list(band)}")
        if not (max_speed > 0 and sweep > 0 and margin >= 0):
            raise ValueError("max_speed > 0, sweep > 0 and margin >= 0")
        self.start, self.duration, self.ramp = float(start), float(duration), float(ramp)
        model = robots.load_planning_model(robot.name)
        joints = [model.joint(model.actuator_trnid[a, 0]).name for a in range(model.nu)]
        self.joints = joints
        key = model.key(robot.home_key)
        self.home = key.qpos[model.jnt_qposadr[model.actuator_trnid[:, 0]]].copy()
        lower, upper, _ = joint_limits(robot, model, joints)
        amp = np.full(3, float(amplitude)) if np.ndim(amplitude) == 0 \
            else np.asarray(amplitude, float)
        if amp.shape != (3,) or np.any(amp < 0):
            raise ValueError("amplitude: one value or three (abduction, hip, knee), each >= 0")
        n = len(joints)
        room = np.minimum(self.home - lower, upper - self.home) - margin
        self.amplitude = np.maximum(np.minimum([amp[i % 3] for i in range(n)], room), 0.0)
        # The sweeps on a grid of STEP seconds: frequency, phase (its integral), amplitude.
        grid = np.arange(0.0, self.duration + 2 * self.STEP, self.STEP)
        offsets = sweep * np.arange(n) / n
        tau = ((grid[:, None] + offsets) % sweep) / sweep  # (T, n) in [0, 1)
        tri = 1.0 - np.abs(2.0 * tau - 1.0)  # 0 -> 1 -> 0 over a sweep
        freq = lo * (hi / lo) ** tri
        phase = 2 * np.pi * np.cumsum(freq, axis=0) * self.STEP
        amp_f = np.minimum(self.amplitude, max_speed / (2 * np.pi * freq))
        self._grid = grid
        self._unit = amp_f * np.sin(phase)  # (T, n)
        self._unit_dot = np.gradient(self._unit, self.STEP, axis=0)
        self.terms = [CostTerm("tracking", n, "quadratic", 0.0, 1.0)]

    #: Grid of the precomputed sweeps (s).
    STEP = 1e-3

    # --- the reference ----------------------------------------------------------------------
    def envelope(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """e(t) and de/dt: 0 outside the excitation, a smoothstep up and down over ramp."""
        s = np.asarray(t, float) - self.start
        if self.ramp == 0:
            inside = (s >= 0) & (s <= self.duration)
            return inside.astype(float), np.zeros_like(s)
        up, down = s / self.ramp, (self.duration - s) / self.ramp
        x = np.clip(np.minimum(up, down), 0.0, 1.0)
        slope = np.where((x > 0) & (x < 1), np.where(up < down, 1.0, -1.0) / self.ramp, 0.0)
        return x * x * (3 - 2 * x), 6 * x * (1 - x) * slope

    def reference(self, t) -> tuple[np.ndarray, np.ndarray]:
        """Target angles and speeds of the actuated joints (model order) at times ``t``:
        arrays (..., nu)."""
        t = np.asarray(t, float)
        s = np.clip(t - self.start, 0.0, self.duration)
        i = np.minimum((s / self.STEP).astype(int), len(self._grid) - 2)
        w = ((s - self._grid[i]) / self.STEP)[..., None]
        unit = (1 - w) * self._unit[i] + w * self._unit[i + 1]
        unit_dot = (1 - w) * self._unit_dot[i] + w * self._unit_dot[i + 1]
        e, de = self.envelope(t)
        return self.home + e[..., None] * unit, e[..., None] * unit_dot + de[..., None] * unit

    # --- the task interface -----------------------------------------------------------------
    def fall_reason(self, qpos: np.ndarray) -> str | None:
        """Tilt only: on a gantry the base's height is not measured (the legs that leg
        odometry measures it from are in the air), but a base that tilts is off the gantry."""
        angle = float(np.arccos(np.clip(base_axes(qpos)[2, 2], -1.0, 1.0)))
        if angle > self.robot.fall_tilt:
            return f"tilt {np.degrees(angle):.0f} deg"
        return None

    def add_sensors(self, spec: mujoco.MjSpec) -> None:
        for joint in self.joints:
            spec.add_sensor(type=mujoco.mjtSensor.mjSENS_JOINTPOS,
                            objtype=mujoco.mjtObj.mjOBJ_JOINT, objname=joint,
                            name=f"excitation_{joint}")

    def _rows(self) -> np.ndarray:
        return np.array([self.sensor(f"excitation_{j}").start for j in self.joints])

    def residual(self, sensordata: np.ndarray, time: np.ndarray) -> np.ndarray:
        return sensordata[..., self._rows()] - self.reference(time)[0]

    def residual_jacobian(self, sensordata: np.ndarray, time: np.ndarray) -> np.ndarray:
        shape = np.shape(sensordata)[:-1]
        out = np.zeros((*shape, len(self.joints), self.nsensordata))
        out[..., np.arange(len(self.joints)), self._rows()] = 1.0
        return out
