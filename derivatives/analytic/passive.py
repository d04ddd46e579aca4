"""Passive forces: joint springs and dampers, and the damping MuJoCo integrates implicitly.

Within the gate (no fluid forces, gravity compensation, tendons or polynomial springs and
dampers; springs only on hinge and slide joints) qfrc_passive = −k (q − q_ref) − b v per dof, so
its derivatives are constant diagonals:

    ∂qfrc_passive/∂q = −diag(k),      ∂qfrc_passive/∂v = −diag(b).

The integrators add h diag(b) to M for the velocity update (Euler unless ``eulerdamp`` is
disabled; implicitfast always, plus the actuators' velocity gains, see :mod:`.actuation`).
"""

from __future__ import annotations

import mujoco
import numpy as np

_D = mujoco.mjtDisableBit
_SCALAR = (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE)


def _off(m: mujoco.MjModel, flag) -> bool:
    return bool(m.opt.disableflags & int(flag))


def passive_derivatives(m: mujoco.MjModel) -> tuple[np.ndarray, np.ndarray]:
    """Diagonals of ∂qfrc_passive/∂q and ∂qfrc_passive/∂v (each (nv,))."""
    dq = np.zeros(m.nv)
    if not _off(m, _D.mjDSBL_SPRING):
        scalar = np.isin(m.jnt_type[m.dof_jntid], _SCALAR)
        dq[scalar] = -m.jnt_stiffness[m.dof_jntid[scalar]]
    dv = np.zeros(m.nv) if _off(m, _D.mjDSBL_DAMPER) else -m.dof_damping.copy()
    return dq, dv


def integrated_damping(m: mujoco.MjModel) -> np.ndarray:
    """Per-dof damping d of the integration matrix W = M + h diag(d) (actuators excluded)."""
    implicitfast = m.opt.integrator == mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    if _off(m, _D.mjDSBL_DAMPER) or not (implicitfast or not _off(m, _D.mjDSBL_EULERDAMP)):
        return np.zeros(m.nv)
    return m.dof_damping.copy()
