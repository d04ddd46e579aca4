"""Actuator force derivatives against finite differences of ``actuator_force``, and the
implicitfast damping against MuJoCo's own ``qDeriv``."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from analytic_oracles import bundles

from derivatives.analytic.actuation import actuator_derivatives, implicit_damping
from derivatives.analytic.passive import integrated_damping

ACTUATORS = """
<mujoco>
  <worldbody>
    <body>
      <joint name="a" axis="0 1 0" damping=".3"/>
      <geom type="capsule" size=".02" fromto="0 0 0 .2 0 0" mass=".3"/>
      <body pos=".2 0 0">
        <joint name="b" type="slide" axis="1 0 0"/>
        <geom type="sphere" size=".03" mass=".1"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <position joint="a" kp="30" kv="2" ctrlrange="-1 1" forcerange="-4 4"/>
    <motor joint="b" gear="3" ctrlrange="-2 2"/>
    <general joint="a" gaintype="affine" gainprm="2 .5 -.3" biastype="affine"
             biasprm=".1 -1 -.2" gear="1.5"/>
    <general joint="b" ctrllimited="false" gainprm="4"/>
  </actuator>
</mujoco>"""


def derivatives_at(m, d):
    out = [np.zeros(m.nu) for _ in range(3)]
    actuator_derivatives(*bundles(m, d), *out)
    return out


def force_at(m, d, qpos=None, qvel=None, ctrl=None):
    s = mujoco.MjData(m)
    s.qpos[:] = d.qpos if qpos is None else qpos
    s.qvel[:] = d.qvel if qvel is None else qvel
    s.ctrl[:] = d.ctrl if ctrl is None else ctrl
    mujoco.mj_forward(m, s)
    return s.actuator_force.copy()


@pytest.mark.parametrize(("ctrl", "saturated", "clamped"), [
    ((0.3, 1.0, 0.5, 2.0), False, False),
    ((0.9, 2.5, -0.4, -1.0), True, True),
    ((-1.4, -1.0, 0.2, 0.0), True, True),
])
def test_force_derivatives_match_finite_differences(ctrl, saturated, clamped):
    """Inside the ranges, past the control range (clamped) and with the servo saturated."""
    m = mujoco.MjModel.from_xml_string(ACTUATORS)
    d = mujoco.MjData(m)
    d.qpos[:] = (0.2, 0.05)
    d.qvel[:] = (0.7, -0.3)
    d.ctrl[:] = ctrl
    mujoco.mj_forward(m, d)
    dlen, dvel, dctrl = derivatives_at(m, d)
    eps = 1e-6
    gear = m.actuator_gear[:, 0]
    dof = m.jnt_dofadr[m.actuator_trnid[:, 0]]
    for i in range(m.nu):
        k = dof[i]
        dq, dv = np.zeros(m.nv), np.zeros(m.nv)
        dq[k], dv[k] = eps, eps
        fd_q = (force_at(m, d, qpos=d.qpos + dq) - force_at(m, d, qpos=d.qpos - dq))[i] / 2 / eps
        fd_v = (force_at(m, d, qvel=d.qvel + dv) - force_at(m, d, qvel=d.qvel - dv))[i] / 2 / eps
        du = np.zeros(m.nu)
        du[i] = eps
        fd_u = (force_at(m, d, ctrl=d.ctrl + du) - force_at(m, d, ctrl=d.ctrl - du))[i] / 2 / eps
        np.testing.assert_allclose(gear[i] * dlen[i], fd_q, atol=1e-7)
        np.testing.assert_allclose(gear[i] * dvel[i], fd_v, atol=1e-7)
        np.testing.assert_allclose(dctrl[i], fd_u, atol=1e-7)
    outside = np.abs(d.ctrl[:2]) > m.actuator_ctrlrange[:2, 1]
    assert (np.abs(d.actuator_force[0]) >= 4.0) == saturated
    assert outside.any() == clamped
    if saturated:
        assert dlen[0] == dvel[0] == dctrl[0] == 0.0
    assert np.all(dctrl[:2][outside] == 0.0)


def test_implicit_damping_matches_mujoco_qDeriv():  # noqa: N802
    """W = M + h diag(d): d must be minus the diagonal of MuJoCo's implicitfast qDeriv."""
    base = mujoco.MjModel.from_xml_string(ACTUATORS)
    base.actuator_gainprm[2, 2] = 0.0  # the gate refuses velocity-dependent gains here
    base.opt.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    d = mujoco.MjData(base)
    d.qpos[:] = (0.2, 0.05)
    d.qvel[:] = (0.7, -0.3)
    d.ctrl[:] = (0.3, 1.0, 0.5, 2.0)
    mujoco.mj_forward(base, d)
    ours = integrated_damping(base)
    implicit_damping(*bundles(base, d), ours)
    mujoco.mj_implicit(base, d)
    qderiv = np.zeros((base.nv, base.nv))
    for i in range(base.nv):
        for a in range(base.D_rowadr[i], base.D_rowadr[i] + base.D_rownnz[i]):
            qderiv[i, base.D_colind[a]] = d.qDeriv[a]
    np.testing.assert_allclose(np.diag(-qderiv), ours, rtol=1e-12)
    assert np.count_nonzero(qderiv - np.diag(np.diag(qderiv))) == 0
