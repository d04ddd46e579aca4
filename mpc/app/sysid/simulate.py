"""Output error: the gantry run simulated through its logged commands, on a model overlay.

The check of an identification (:mod:`mpc.app.sysid.actuators` fits an equation error) and the
report's before/after plots: the robot's model with the overlay applied hangs fixed at the
base (a gantry, feet free, no contacts), and every motor applies the law of the logged
commands at the overlay's delay plus the sensors' latency (the loop's delay the log shows),

    τ = kp/kp⁰ Kp (q* − q) + d/d⁰ Kd (q̇* − q̇) + τ_ff,

the velocity term half implicit, as the fake robots apply it
(:meth:`hardware.fake.actuators.MotorTruth.step_torque`), friction and armature in the model.
The joints start where the log starts; their simulated angles are compared with the logged
ones.
"""

from __future__ import annotations

import mujoco
import numpy as np

import robots
from mpc.app.sysid.data import RunData
from robots.overlay import Overlay


def simulate(data: RunData, overlay: Overlay, nominal: Overlay, sensor_latency: float
             ) -> np.ndarray:
    """Simulated joint angles on ``data.t`` (samples, joints) for the gantry run ``data``."""
    model = robots.load_model(data.robot.name, overlay)
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    model.opt.timestep = data.dt
    model.actuator_gainprm[:] = 0.0
    model.actuator_biasprm[:] = 0.0
    cols = np.array([model.joint(j).id for j in data.joints])
    qadr, dadr = model.jnt_qposadr[cols], model.jnt_dofadr[cols]
    scale_p, scale_d, limit = (np.ones(len(cols)) for _ in range(3))
    for j, joint in enumerate(data.joints):
        p, p0 = overlay.joints.get(joint), nominal.joints[joint]
        kp = (p.kp if p is not None and p.kp is not None else p0.kp) or 1.0
        damping = p.damping if p is not None and p.damping is not None else p0.damping
        scale_p[j] = kp / (p0.kp or 1.0)
        scale_d[j] = damping / (p0.damping or 1.0)
        top = p.torque_limit if p is not None and p.torque_limit is not None \
            else p0.torque_limit
        limit[j] = top or np.inf
    model.dof_damping[dadr] = 0.0
    d = mujoco.MjData(model)
    home = model.key(data.robot.home_key).qpos[:7] if model.nkey else None
    base = np.array([0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0]) if home is None else home.copy()
    base[2] += 1.0
    d.qpos[:7] = base
    d.qpos[qadr], d.qvel[dadr] = data.q[0], data.dq[0]
    when = data.t - (overlay.delay + sensor_latency)
    c = data.commands
    kp, kd = c.at("kp", when) * scale_p, c.at("kd", when) * scale_d
    kpq, kddq = c.at("kpq", when) * scale_p, c.at("kddq", when) * scale_d
    tau_ff = c.at("tau", when)
    out = np.empty_like(data.q)
    for k in range(len(data.t)):
        out[k] = d.qpos[qadr]
        q, dq = d.qpos[qadr], d.qvel[dadr]
        full = kpq[k] - kp[k] * q + kddq[k] - kd[k] * dq + tau_ff[k]
        saturated = np.abs(full) > limit
        implicit = np.where(saturated, 0.0, 0.5 * kd[k])
        model.dof_damping[dadr] = implicit
        d.qfrc_applied[dadr] = np.where(saturated, np.clip(full, -limit, limit),
                                        full + 0.5 * kd[k] * dq)
        d.qpos[:7], d.qvel[:6] = base, 0.0
        mujoco.mj_step(model, d)
    return out
