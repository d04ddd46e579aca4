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
like forces), its rotational inertia scaled with its mass as an overlay scales it. The samples
are those clear of the stretches where the log shows the link's timing broken, at the
identified delay (:mod:`mpc.app.sysid.data`).

Uncertainty: the linearized delete-a-block jackknife over stretches of the runs
(:mod:`mpc.app.sysid.uncertainty`), as for the actuators. A standing run alone makes the mass
and the horizontal centre of mass observable (static balance of forces and moments); the
height of the centre of mass needs horizontal accelerations, which trotting provides.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np
from scipy.optimize import least_squares

from mpc.app.sysid import uncertainty
from mpc.app.sysid.actuators import (
    ActuatorFit,
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


def _motor_torque(data: RunData, delay: float, values: dict[str, dict[str, float]],
                  nominal: Overlay, sample: np.ndarray) -> np.ndarray:
    """Net joint torque τ_i at ``sample`` of the actuators ``values`` (per joint, as
    :class:`mpc.app.sysid.actuators.JointFit` holds them) at ``delay`` (module docstring)."""
    when = data.t[sample] - delay
    c = data.commands
    q, dq, ddq, sign = (x[sample] for x in (data.q, data.dq, data.ddq, data.sign))
    out = np.empty((len(sample), len(data.joints)))
    for j, joint in enumerate(data.joints):
        p, p0 = values[joint], nominal.joints[joint]
        kp0, d0 = p0.kp or 1.0, p0.damping or 1.0
        limit = p0.torque_limit or np.inf
        motor = (p["kp"] / kp0 * (c.at("kpq", when)[:, j] - c.at("kp", when)[:, j] * q[:, j])
                 + p["damping"] / d0 * (c.at("kddq", when)[:, j]
                                        - c.at("kd", when)[:, j] * dq[:, j])
                 + c.at("tau", when)[:, j])
        out[:, j] = (np.clip(motor, -limit, limit) - p["armature"] * ddq[:, j]
                     - p["frictionloss"] * sign[:, j])
    return out


@dataclass
class _Legs:
    """One run's samples: y of the actuated joints, and per sample the map H from the legs'
    net joint forces y − τ to the base's rows, Σ_i J_{i,b}ᵀ F_i = H (y − τ) (a leg's block of H
    is J_{i,b}ᵀ J_{i,leg}⁻ᵀ)."""

    data: RunData
    sample: np.ndarray
    y: np.ndarray
    H: np.ndarray

    def contact(self, delay: float, values: dict[str, dict[str, float]], nominal: Overlay
                ) -> np.ndarray:
        """Σ_i J_{i,b}ᵀ F_i at each sample (rows: samples, columns: the base's 6 dofs) with
        the actuators ``values`` at ``delay``."""
        tau = _motor_torque(self.data, delay, values, nominal, self.sample)
        return np.einsum("sbj,sj->sb", self.H, self.y - tau)


def _legs(data: RunData, model: mujoco.MjModel, sample: np.ndarray) -> _Legs:
    """The legs' part of the base's rows at ``sample`` (:class:`_Legs`)."""
    y = inverse_dynamics(data, model, sample)
    cols = np.array([model.joint(j).id for j in data.joints])
    qadr, dadr = model.jnt_qposadr[cols], model.jnt_dofadr[cols]
    feet = [model.site(f).id for f in data.robot.feet]
    d = mujoco.MjData(model)
    jac = np.zeros((3, model.nv))
    H = np.zeros((len(sample), 6, len(cols)))
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
            H[row][:, leg] += jac[:, :6].T @ np.linalg.pinv(jac[:, dadr[leg]].T)
    return _Legs(data, sample, y, H)


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
    legs, parts = [], []
    values = {j.joint: j.values for j in fit.joints}
    for data in runs:
        every = max(1, int(1.0 / (RATE * data.dt)))
        edge = int(0.3 / data.dt)
        sample = np.arange(edge, len(data.t) - edge, every)
        sample = sample[data.clear(data.t[sample], fit.delay)]  # the link's hiccups left out
        legs.append(_legs(data, model, sample))
        parts.append((data, sample, legs[-1].contact(fit.delay, values, nominal)))
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
    # the linearized jackknife over stretches of the runs (mpc/app/sysid/uncertainty.py): a
    # sample's six rows stay together
    stretches = [(6 * block[:, None] + np.arange(6)).ravel()
                 for block in uncertainty.blocks(len(r) // 6)]
    own = uncertainty.jackknife_std(uncertainty.linearized(sol.jac, r, sol.x, stretches))
    # and the actuators' own uncertainty carried through the contact forces: the trunk's fit
    # (one Gauss-Newton step) with each of the actuators' jackknife fits, whose spread adds
    # (the gantry runs are independent of these)
    carried = []
    for delay_k, values_k in fit.without:
        shift = np.concatenate([leg.contact(delay_k, values_k, nominal) - c
                                for leg, (_, _, c) in zip(legs, parts, strict=True)])
        carried.append(sol.x + np.linalg.lstsq(sol.jac, (shift * scale).ravel(),
                                               rcond=None)[0])
    std = np.hypot(own, uncertainty.jackknife_std(np.array(carried))) if carried else own
    if fit.delay_sampling > 0:  # and the delay's sampling spread, through its sensitivity
        h = fit.delay_sampling
        ends = [np.concatenate([leg.contact(fit.delay + sign * h, values, nominal)
                                for leg in legs]) for sign in (1.0, -1.0)]
        slope = np.linalg.lstsq(sol.jac, ((ends[0] - ends[1]) * scale).ravel() / 2,
                                rcond=None)[0]
        std = np.hypot(std, slope)
    force = np.concatenate([c for _, _, c in parts])
    return TrunkFit(float(sol.x[0]), sol.x[1:4].copy(), float(std[0]), std[1:4],
                    float(np.sqrt(np.mean(r ** 2))), float(np.sqrt(np.mean(force ** 2))),
                    sum(len(s) for _, s, _ in parts))
