"""Static standing, the oracle of the H1 home key's ctrl: the joint torques that hold a
floating-base robot still on its feet.

For a pose q at rest, the generalized forces must balance gravity:

    qfrc_bias(q) = Σᵢ Jᵢ(q)ᵀ fᵢ + τ

with fᵢ the force at contact point i (the lowest point of a contact sphere) and τ the joint
torques (zero on the floating base). The six floating-base rows fix the contact forces up to
the internal forces between the feet; of those we take the least-norm one, with tangential
components weighted up so that the feet push down rather than sideways. The joint rows then give τ.
"""

from __future__ import annotations

from collections.abc import Sequence

import mujoco
import numpy as np

#: Weight of tangential contact force components relative to normal ones.
TANGENTIAL_WEIGHT = 10.0


def contact_forces(model: mujoco.MjModel, data: mujoco.MjData,
                   contact_geoms: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Contact forces (k, 3), world frame, at the lowest points of ``contact_geoms`` (spheres)
    that balance gravity on the floating base at ``data.qpos``; also the stacked contact
    Jacobian (3k, nv). Leaves ``data`` at the pose with zero velocity."""
    data.qvel[:] = 0.0
    mujoco.mj_forward(model, data)
    jacobians = []
    for name in contact_geoms:
        geom = model.geom(name)
        point = data.geom_xpos[geom.id] - np.array([0.0, 0.0, geom.size[0]])
        jacp = np.zeros((3, model.nv))
        mujoco.mj_jac(model, data, jacp, None, point, geom.bodyid[0])
        jacobians.append(jacp)
    J = np.vstack(jacobians)
    base = slice(0, 6)  # the free joint's dofs come first in every robot model
    A = J[:, base].T  # (6, 3k): floating-base rows of Jᵀ
    b = data.qfrc_bias[base]
    # Least weighted norm: min ‖W f‖ s.t. A f = b  ⇒  f = W⁻² Aᵀ (A W⁻² Aᵀ)⁻¹ b.
    w = np.tile([TANGENTIAL_WEIGHT, TANGENTIAL_WEIGHT, 1.0], len(contact_geoms))
    Winv2 = 1.0 / w**2
    f = Winv2 * (A.T @ np.linalg.solve((A * Winv2) @ A.T, b))
    return f.reshape(-1, 3), J


def standing_torques(model: mujoco.MjModel, data: mujoco.MjData,
                     contact_geoms: Sequence[str]) -> np.ndarray:
    """Actuator forces (nu) that hold the pose in ``data.qpos`` at rest on ``contact_geoms``.

    Requires actuators that act on single joints (motors); the result is in actuator units
    (force / gear)."""
    f, J = contact_forces(model, data, contact_geoms)
    tau_dof = data.qfrc_bias - J.T @ f.ravel()
    dof = model.jnt_dofadr[model.actuator_trnid[:, 0]]
    return tau_dof[dof] / model.actuator_gear[:, 0]
