"""Passive force derivatives against finite differences of ``qfrc_passive``."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from analytic_oracles import tangent_fd, vector_fd

from derivatives.analytic.passive import integrated_damping, passive_derivatives

SPRINGS = """
<mujoco>
  <option integrator="{integrator}"/>
  <worldbody>
    <body>
      <freejoint/>
      <geom type="box" size=".1 .1 .1"/>
      <body pos=".2 0 0">
        <joint axis="0 1 0" stiffness="4" springref=".3" damping=".5"/>
        <geom type="capsule" size=".02" fromto="0 0 0 .2 0 0"/>
        <body pos=".2 0 0">
          <joint type="slide" axis="1 0 0" stiffness="9" damping="1.5"/>
          <geom type="sphere" size=".03"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>"""


def passive(m, qpos, qvel):
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:] = qpos, qvel
    mujoco.mj_forward(m, d)
    return d.qfrc_passive.copy()


@pytest.mark.parametrize("disable", [0, int(mujoco.mjtDisableBit.mjDSBL_SPRING),
                                     int(mujoco.mjtDisableBit.mjDSBL_DAMPER)])
def test_passive_derivatives_match_finite_differences(disable):
    m = mujoco.MjModel.from_xml_string(SPRINGS.format(integrator="Euler"))
    m.opt.disableflags |= disable
    rng = np.random.default_rng(0)
    qpos = m.qpos0.copy()
    mujoco.mj_integratePos(m, qpos, 0.3 * rng.standard_normal(m.nv), 1.0)
    qvel = rng.standard_normal(m.nv)
    dq, dv = passive_derivatives(m)
    np.testing.assert_allclose(np.diag(dq), tangent_fd(m, qpos, lambda q: passive(m, q, qvel)),
                               atol=1e-8)
    np.testing.assert_allclose(np.diag(dv), vector_fd(qvel, lambda v: passive(m, qpos, v)),
                               atol=1e-8)
    assert np.count_nonzero(dq) == (0 if disable & int(mujoco.mjtDisableBit.mjDSBL_SPRING) else 2)


@pytest.mark.parametrize("integrator", ["Euler", "implicitfast"])
@pytest.mark.parametrize("eulerdamp", [True, False])
def test_integrated_damping(integrator, eulerdamp):
    m = mujoco.MjModel.from_xml_string(SPRINGS.format(integrator=integrator))
    if not eulerdamp:
        m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_EULERDAMP)
    implicit = integrator == "implicitfast" or eulerdamp
    np.testing.assert_array_equal(integrated_damping(m), m.dof_damping if implicit else 0.0)
