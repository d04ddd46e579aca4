"""The trunk's mass and centre of mass from standing and trotting runs, given the actuators.

The floating base's six rows of the equations of motion have no actuator: what moves the trunk
is the legs' contact forces,

    y_b(q, q̇, q̈; m, c) = Σ_i J_{i,b}ᵀ F_i                                          (1)

with y = M(q) q̈ + c(q, q̇) the inverse dynamics of the rigid bodies (the base's motion from
the IMU as in :func:`mpc.app.sysid.actuators.inverse_dynamics`), J_i the translational
Jacobian of foot i and F_i its contact force. Each leg's own rows give its force from the
joint torques the identified actuators applied,

    τ_i = τ_m,i − a q̈_i − f sign(q̇_i),   F_i = J_{i,leg}⁻ᵀ (y_{i,leg} − τ_i),

(τ_m the motor law of the logged commands at the identified delay and gains, clipped to the
torque limit; a swing leg's force comes out near zero by itself, so no contact detection is
needed), and the legs' rows do not depend on the trunk's mass (it is the tree's root). The
trunk's mass m and centre of mass c are then the least-squares solution of (1) over the run's
samples (``scipy.optimize.least_squares``; forces in N, moments divided by ``LEVER`` to weigh
like forces), its rotational inertia scaled with its mass as an overlay scales it.

Uncertainty: from the Jacobian at the optimum, σ² (JᵀJ)⁻¹, with the residuals' effective
number of samples as in :mod:`mpc.app.sysid.actuators`. A standing run alone makes the mass
and the horizontal centre of mass observable (static balance of forces and moments); the
height of the centre of mass needs horizontal accelerations, which trotting provides.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np
from scipy.optimize import least_squares

from mpc.app.sysid.actuators import (
    ActuatorFit,
    _correlation_factor,
    inverse_dynamics,
    rigid_body_model,
)
from mpc.app.sysid.data import RunData, SysidError
from robots.overlay import Overlay

#: Moments are divided by this lever (m) so that they weigh like forces.
LEVER = 0.2
#: Samples per run second used (decimation of the 500 Hz grid).
RATE = 50.0


@dataclass
class TrunkFit:
    mass: float
    com: np.ndarray
    mass_std: float
    com_std: np.ndarray
    #: RMS of the base rows' residual (N) and of the contact forces' sum (N); samples.
    residual_rms: float
    force_rms: float
    samples: int


@dataclass
class _Sample:
    """Per sample: the leg's contact forces summed into the base's rows (Σ J_{i,b}ᵀ F_i)."""

    contact: np.ndarray
    index: np.ndarray


def _motor_torque(data: RunData, fit: ActuatorFit, nominal: Overlay, sample: np.ndarray
                  ) -> np.ndarray:
    """Net joint torque τ_i of the identified actuators at ``sample`` (module docstring)."""
    when = data.t[sample] - fit.delay
    c = data.commands
    q, dq, ddq, sign = (x[sample] for x in (data.q, data.dq, data.ddq, data.sign))
    out = np.empty((len(sample), len(data.joints)))
    by_joint = {j.joint: j.values for j in fit.joints}
    for j, joint in enumerate(data.joints):
        p, p0 = by_joint[joint], nominal.joints[joint]
        kp0, d0 = p0.kp or 1.0, p0.damping or 1.0
        limit = p0.torque_limit or np.inf
        motor = (p["kp"] / kp0 * (c.at("kpq", when)[:, j] - c.at("kp", when)[:, j] * q[:, j])
                 + p["damping"] / d0 * (c.at("kddq", when)[:, j]
                                        - c.at("kd", when)[:, j] * dq[:, j])
                 + c.at("tau", when)[:, j])
        out[:, j] = (np.clip(motor, -limit, limit) - p["armature"] * ddq[:, j]
                     - p["frictionloss"] * sign[:, j])
    return out


def _contacts(data: RunData, model: mujoco.MjModel, fit: ActuatorFit, nominal: Overlay,
              sample: np.ndarray) -> np.ndarray:
    """Σ_i J_{i,b}ᵀ F_i at each sample (rows: samples, columns: the base's 6 dofs)."""
    y = inverse_dynamics(data, model, sample)
    tau = _motor_torque(data, fit, nominal, sample)
    cols = np.array([model.joint(j).id for j in data.joints])
    qadr, dadr = model.jnt_qposadr[cols], model.jnt_dofadr[cols]
    feet = [model.site(f).id for f in data.robot.feet]
    d = mujoco.MjData(model)
    jac = np.zeros((3, model.nv))
    out = np.zeros((len(sample), 6))
    for row, k in enumerate(sample):
        d.qpos[:] = 0.0
        d.qpos[3:7] = data.quat[k]
        d.qpos[qadr] = data.q[k]
        mujoco.mj_kinematics(model, d)
        mujoco.mj_comPos(model, d)
        for site in feet:
            mujoco.mj_jacSite(model, d, jac, None, site)
            leg = np.flatnonzero(np.abs(jac[:, dadr]).sum(axis=0) > 1e-9)
            if len(leg) != 3:
                continue
            force = np.linalg.lstsq(jac[:, dadr[leg]].T, y[row, leg] - tau[row, leg],
                                    rcond=None)[0]
            out[row] += jac[:, :6].T @ force
    return out


def _base_rows(model: mujoco.MjModel, data: RunData, sample: np.ndarray, body: int,
               inertia0: np.ndarray, mass0: float, theta: np.ndarray) -> np.ndarray:
    model.body_mass[body] = theta[0]
    model.body_ipos[body] = theta[1:4]
    model.body_inertia[body] = inertia0 * theta[0] / mass0
    return inverse_dynamics(data, model, sample, base=True)


def identify(runs: list[RunData], nominal: Overlay, fit: ActuatorFit) -> TrunkFit:
    """The trunk's mass and centre of mass from ``runs`` (module docstring)."""
    robot = runs[0].robot
    model = rigid_body_model(robot.name)
    body = model.body(robot.base_body).id
    mass0, inertia0 = float(model.body_mass[body]), model.body_inertia[body].copy()
    parts = []
    for data in runs:
        every = max(1, int(1.0 / (RATE * data.dt)))
        edge = int(0.3 / data.dt)
        sample = np.arange(edge, len(data.t) - edge, every)
        parts.append((data, sample, _contacts(data, model, fit, nominal, sample)))
    if sum(len(s) for _, s, _ in parts) < 50:
        raise SysidError("fewer than 50 samples of standing or trotting for the trunk")
    scale = np.array([1, 1, 1, 1 / LEVER, 1 / LEVER, 1 / LEVER])

    def residual(theta: np.ndarray) -> np.ndarray:
        rows = [(_base_rows(model, data, sample, body, inertia0, mass0, theta) - contact)
                * scale for data, sample, contact in parts]
        return np.concatenate(rows).ravel()

    start = np.r_[nominal.trunk_mass, nominal.trunk_com]
    sol = least_squares(residual, start, x_scale=np.r_[1.0, 0.01, 0.01, 0.01],
                        bounds=(np.r_[0.1 * mass0, -0.5, -0.5, -0.5],
                                np.r_[10 * mass0, 0.5, 0.5, 0.5]))
    r = sol.fun
    n_eff = len(r) / _correlation_factor(r)
    s2 = float(r @ r) / max(n_eff - 4, 1.0)
    cov = s2 * np.linalg.pinv(sol.jac.T @ sol.jac)
    std = np.sqrt(np.diag(cov))
    force = np.concatenate([c for _, _, c in parts])
    return TrunkFit(float(sol.x[0]), sol.x[1:4].copy(), float(std[0]), std[1:4],
                    float(np.sqrt(np.mean(r ** 2))), float(np.sqrt(np.mean(force ** 2))),
                    sum(len(s) for _, s, _ in parts))
