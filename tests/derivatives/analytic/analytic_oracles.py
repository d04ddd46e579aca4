"""Oracles and small models shared by the analytic-backend tests.

Independent of the code under test: MuJoCo's own functions (``mj_rne``, ``efc_J`` after
``mj_fwdPosition``, ``mj_constraintUpdate``), finite differences of them in MuJoCo's tangent
space, and Pinocchio.
"""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import analytic_verify as verify
import mujoco
import numpy as np

import derivatives
from derivatives.analytic import AnalyticFallbackWarning
from derivatives.analytic.bundles import (
    CONSTRAINT_FIELDS,
    DATA_FIELDS,
    FIXED_FIELDS,
    MODEL_FIELDS,
    ConstraintBundle,
    DataBundle,
    ModelBundle,
)
from derivatives.analytic.constraint import contact_rows
from derivatives.analytic.contact_jacobian import GEOMETRY_OK, contact_jacobian_derivatives
from derivatives.analytic.provider import model_tables


def random_state(m: mujoco.MjModel, rng: np.random.Generator, spread: float = 0.3):
    """Data at a random configuration around the first keyframe (or qpos0), random velocity."""
    d = mujoco.MjData(m)
    if m.nkey:
        mujoco.mj_resetDataKeyframe(m, d, 0)
    dq = spread * rng.standard_normal(m.nv)
    mujoco.mj_integratePos(m, d.qpos, dq, 1.0)
    d.qvel[:] = rng.standard_normal(m.nv)
    mujoco.mj_forward(m, d)
    return d


def tangent_fd(m: mujoco.MjModel, qpos: np.ndarray, fun, eps: float = 1e-6) -> np.ndarray:
    """Centered differences of fun(qpos) (a vector or matrix) over MuJoCo's tangent space."""
    columns = []
    for j in range(m.nv):
        dq = np.zeros(m.nv)
        dq[j] = eps
        plus, minus = qpos.copy(), qpos.copy()
        mujoco.mj_integratePos(m, plus, dq, 1.0)
        mujoco.mj_integratePos(m, minus, dq, -1.0)
        columns.append((np.asarray(fun(plus)) - np.asarray(fun(minus))) / (2 * eps))
    return np.stack(columns, axis=-1)


def constraint_jacobian_fd(m: mujoco.MjModel, d: mujoco.MjData) -> np.ndarray:
    """∂J/∂q of the constraint Jacobian ``efc_J`` at ``d`` by :func:`tangent_fd`, shape
    (nefc, nv, nv) with ∂J/∂q_j in the last axis; the constraint set must not change within
    the step (asserted)."""
    nefc, nv = d.nefc, m.nv

    def jacobian(qpos):
        s = mujoco.MjData(m)
        s.qpos[:] = qpos
        mujoco.mj_fwdPosition(m, s)
        assert s.nefc == nefc and s.ncon == d.ncon
        return s.efc_J.reshape(nefc, nv).copy()

    return tangent_fd(m, d.qpos, jacobian)


def vector_fd(x: np.ndarray, fun, eps: float = 1e-6) -> np.ndarray:
    """Centered differences of fun(x) over a plain vector x."""
    columns = []
    for j in range(x.size):
        plus, minus = x.copy(), x.copy()
        plus[j] += eps
        minus[j] -= eps
        columns.append((np.asarray(fun(plus)) - np.asarray(fun(minus))) / (2 * eps))
    return np.stack(columns, axis=-1)


def mj_rne_at(m: mujoco.MjModel, qpos, qvel, qacc, gravity: bool = True) -> np.ndarray:
    """MuJoCo's RNEA (``mj_rne`` with ``flg_acc=1``) at a state."""
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:], d.qacc[:] = qpos, qvel, qacc
    if not gravity:
        m = _without_gravity(m)
    mujoco.mj_kinematics(m, d)
    mujoco.mj_comPos(m, d)
    mujoco.mj_comVel(m, d)
    out = np.zeros(m.nv)
    mujoco.mj_rne(m, d, 1, out)
    return out


def _without_gravity(m: mujoco.MjModel) -> mujoco.MjModel:
    import copy

    m = copy.copy(m)
    m.opt.gravity[:] = 0.0
    return m


def bundles(m: mujoco.MjModel, d: mujoco.MjData, **fields) -> tuple[ModelBundle, DataBundle]:
    """The model and data bundles the stage kernels read at ``d``, its arena fields (constraint
    rows and contacts) included; keyword arguments replace data fields (``qacc=...``)."""
    tables = model_tables(m)
    values = {f: getattr(d, f) for f in FIXED_FIELDS}
    values.update(efc_type=d.efc_type, efc_id=d.efc_id, efc_J=d.efc_J.reshape(d.nefc, m.nv),
                  efc_pos=d.efc_pos, efc_margin=d.efc_margin, efc_D=d.efc_D,
                  efc_KBIP=d.efc_KBIP.reshape(d.nefc, 4), efc_aref=d.efc_aref,
                  contact_geom=d.contact.geom, contact_pos=d.contact.pos,
                  contact_frame=d.contact.frame, contact_friction=d.contact.friction)
    values.update(fields)
    return (ModelBundle(*(tables[f] for f in MODEL_FIELDS)),
            DataBundle(*(values[f] for f in DATA_FIELDS)))


def constraint_bundle(m: mujoco.MjModel, d: mujoco.MjData,
                      **fields) -> tuple[ConstraintBundle, SimpleNamespace]:
    """A constraint bundle sized for ``d`` and allocated as the knot driver does, and its
    arrays by name (the bundle shares their memory, so they show what the kernels wrote);
    keyword arguments replace arrays (``contact_mu=...``, ``dja=...``)."""
    nefc, ncon, nv = d.nefc, d.ncon, m.nv
    i64 = np.int64
    arrays = dict(
        contact_adr=np.empty(ncon, i64), contact_dim=np.empty(ncon, i64),
        contact_mu=np.empty(ncon), jar=np.empty(nefc), state=np.empty(nefc, i64),
        force=np.empty(nefc), hessian=np.zeros((nefc, nefc)), block_start=np.empty(nefc, i64),
        block_size=np.empty(nefc, i64), rho=np.empty(nefc), kfac=np.empty(nefc),
        pos_jac=np.empty((nefc, nv)), dja=np.zeros((nefc, nv)), djv=np.zeros((nefc, nv)))
    arrays.update(fields)
    return (ConstraintBundle(*(arrays[f] for f in CONSTRAINT_FIELDS)),
            SimpleNamespace(**arrays))


def analytic_vs_oracle(m: mujoco.MjModel, d: mujoco.MjData,
                       eps: float) -> tuple[float, float]:
    """Relative errors of the analytic A, B at ``d`` against centered differences of step
    ``eps``; asserts no finite difference entered them."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", AnalyticFallbackWarning)
        provider = derivatives.make_provider("analytic", m, threads=1)
        before = derivatives.fd_evaluations()
        A, B = provider.transition(d)
    assert derivatives.fd_evaluations() == before, "a finite-difference fallback was used"
    A_ref, B_ref = verify.centered_fd(m, d, eps)
    return verify.relative_error(A, A_ref), verify.relative_error(B, B_ref)


def assert_contact_jacobian_matches_efc_j(m: mujoco.MjModel, d: mujoco.MjData) -> None:
    """The contact-Jacobian stage at ``d`` (its contacts all covered): (∂J/∂q) a, (∂J/∂q) v
    and ∂(Jᵀf)/∂q for a random a and f against centered differences of MuJoCo's efc_J, every
    row."""
    rng = np.random.default_rng(3)
    nefc, nv = d.nefc, m.nv
    qacc = rng.standard_normal(nv)
    force = rng.standard_normal(nefc)
    model, data = bundles(m, d, qacc=qacc)
    efc, out = constraint_bundle(m, d, force=force)
    contact_rows(data, efc)
    djtf = np.zeros((nv, nv))
    assert contact_jacobian_derivatives(model, data, efc, djtf) == (GEOMETRY_OK, -1)

    dJ = constraint_jacobian_fd(m, d)
    scale = np.abs(dJ).max()
    for x, ours in ((qacc, out.dja), (d.qvel, out.djv)):
        np.testing.assert_allclose(ours, np.einsum("rkj,k->rj", dJ, x), rtol=0,
                                   atol=1e-7 * scale)
    np.testing.assert_allclose(djtf, np.einsum("rkj,r->kj", dJ, force), rtol=0,
                               atol=1e-7 * scale)


def _chain_model(first_joints: str) -> mujoco.MjModel:
    """A free body with hinge, ball and slide children; ``first_joints`` are the joints of the
    first child."""
    return mujoco.MjModel.from_xml_string(f"""
<mujoco>
  <option gravity="0.3 -0.2 -9.81"/>
  <worldbody>
    <geom type="plane" size="5 5 .1"/>
    <body pos="0 0 .5">
      <freejoint/>
      <geom type="box" size=".1 .08 .05" mass="2"/>
      <body pos=".2 0 0" euler="10 20 30">
        {first_joints}
        <geom type="capsule" size=".02" fromto="0 0 0 .2 0 0" mass=".3"/>
        <body pos=".2 0 0">
          <joint type="ball"/>
          <geom type="sphere" size=".03" pos=".02 .01 0" mass=".1"/>
          <body pos="0 0 -.1">
            <joint axis="0 0 1"/>
            <geom type="capsule" size=".01" fromto="0 0 0 0 0 -.1" mass=".05"/>
          </body>
        </body>
      </body>
      <body pos="-.2 0 0">
        <joint type="slide" axis="1 0 .5"/>
        <geom type="sphere" size=".03" mass=".1"/>
      </body>
    </body>
  </worldbody>
</mujoco>""")


def floating_chain_model() -> mujoco.MjModel:
    """A free body with hinge, ball and slide children, a second hinge on one body and a
    hinge with an off-origin anchor: every joint arrangement the tree code distinguishes."""
    return _chain_model('<joint name="hinge" axis="0 1 0"/>\n'
                        '        <joint name="hinge2" axis="1 0 .3" pos=".05 .02 0"/>')


def single_joint_chain_model() -> mujoco.MjModel:
    """Like :func:`floating_chain_model` with one joint per body (Pinocchio's tree)."""
    return _chain_model('<joint name="hinge" axis="0 1 .2" pos=".05 .02 0"/>')


def contact_zoo_model(cone: str = "elliptic", impratio: float = 10.0) -> mujoco.MjModel:
    """A free box resting on spheres of every contact dimension (1, 3, 4, 6), a capsule and a
    box corner, with a limited, frictional hinge: every constraint type and cone dimension."""
    return mujoco.MjModel.from_xml_string(f"""
<mujoco>
  <option cone="{cone}" impratio="{impratio}" timestep="0.005"/>
  <worldbody>
    <geom type="plane" size="5 5 .1" friction="0.8 0.02 0.01"/>
    <body pos="0 0 .1">
      <freejoint/>
      <geom type="box" size=".2 .15 .03" mass="3" contype="0" conaffinity="0"/>
      <geom type="sphere" size=".03" pos=".15 .1 -.07" condim="1" priority="1"/>
      <geom type="sphere" size=".03" pos="-.15 .1 -.07" condim="3" priority="1"
            solimp=".8 .95 .01"/>
      <geom type="sphere" size=".03" pos=".15 -.1 -.07" condim="4" priority="1"/>
      <geom type="sphere" size=".03" pos="-.15 -.1 -.07" condim="6" priority="1" solref=".01 .8"/>
      <geom type="capsule" size=".02" fromto="-.1 0 -.0805 .1 .05 -.0795" condim="3"/>
      <body pos="0 0 .05">
        <joint name="hinge" axis="0 1 0" range="-.3 .3" frictionloss=".3" damping=".5"
               armature=".01"/>
        <geom type="box" size=".03 .03 .03" pos="0 0 -.101" euler="20 30 10" mass=".2"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <position joint="hinge" kp="20" kv="1" ctrlrange="-1 1" forcerange="-3 3"/>
  </actuator>
</mujoco>""")


def sensor_zoo_model() -> mujoco.MjModel:
    """A floating chain on the floor carrying every sensor type the backend computes, on sites,
    bodies (inertial and joint frames) and geoms, a subtree below the root, and a cutoff."""
    return mujoco.MjModel.from_xml_string("""
<mujoco>
  <option timestep="0.005"/>
  <worldbody>
    <geom type="plane" size="5 5 .1"/>
    <body name="root" pos="0 0 .06">
      <freejoint/>
      <geom name="base" type="box" size=".2 .1 .03" mass="2"/>
      <site name="imu" pos=".05 .02 .03" euler="10 -20 30"/>
      <body name="arm" pos=".2 0 0" euler="0 10 0">
        <joint name="hinge" axis="0 1 0" range="-1 1" damping=".2"/>
        <geom name="link" type="capsule" size=".02" fromto="0 0 0 .2 0 0" mass=".3"/>
        <site name="tip" pos=".2 0 0" euler="30 0 -10"/>
        <body name="slider" pos=".2 0 0">
          <joint name="slide" type="slide" axis="0 0 1" range="-.1 .1"/>
          <geom name="ball" type="sphere" size=".03" pos=".01 0 0" mass=".1"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <position name="servo" joint="hinge" kp="10" kv=".5" ctrlrange="-1 1"/>
    <motor name="motor" joint="slide" gear="2" ctrlrange="-5 5"/>
  </actuator>
  <sensor>
    <framepos objtype="site" objname="tip"/>
    <framepos objtype="body" objname="arm"/>
    <framepos objtype="xbody" objname="slider"/>
    <framepos objtype="geom" objname="ball"/>
    <framequat objtype="site" objname="imu"/>
    <framequat objtype="body" objname="slider"/>
    <framexaxis objtype="site" objname="tip"/>
    <frameyaxis objtype="geom" objname="link"/>
    <framezaxis objtype="xbody" objname="arm"/>
    <framelinvel objtype="site" objname="tip"/>
    <framelinvel objtype="body" objname="slider"/>
    <framelinvel objtype="site" objname="imu" cutoff=".4"/>
    <frameangvel objtype="geom" objname="ball"/>
    <subtreecom body="root"/>
    <subtreecom body="arm"/>
    <subtreelinvel body="root"/>
    <subtreelinvel body="arm"/>
    <gyro site="imu"/>
    <velocimeter site="tip"/>
    <jointpos joint="hinge"/>
    <jointpos joint="slide"/>
    <jointvel joint="hinge"/>
    <jointvel joint="slide"/>
    <actuatorpos actuator="motor"/>
    <actuatorvel actuator="servo"/>
    <actuatorfrc actuator="servo"/>
    <actuatorfrc actuator="motor"/>
  </sensor>
</mujoco>""")


def self_contact_model(cone: str = "elliptic", condim: int = 3) -> mujoco.MjModel:
    """A free base with two arms (a ball joint on one, two hinges on the other), each a sphere
    then a capsule, and a static sphere: sphere-sphere, sphere-capsule and capsule-capsule
    contacts between two moving bodies, in one tree and against the world. No floor, no
    gravity: the arms are posed into each other by :func:`self_contact_state`."""
    return mujoco.MjModel.from_xml_string(f"""
<mujoco>
  <option cone="{cone}" gravity="0 0 0" timestep="0.005"/>
  <default><geom condim="{condim}" friction=".7 .03 .02"/></default>
  <worldbody>
    <geom name="post" type="sphere" size=".05" pos=".2 .2 .5"/>
    <body pos="0 0 .5">
      <freejoint/>
      <geom type="box" size=".05 .05 .05" contype="0" conaffinity="0" mass="2"/>
      <body pos="0 .1 0">
        <joint type="ball"/>
        <geom type="sphere" size=".04" pos=".15 0 0" mass=".2"/>
        <body pos=".15 0 0">
          <joint axis="0 0 1"/>
          <geom type="capsule" size=".02" fromto="0 0 0 .15 .05 0" mass=".1"/>
        </body>
      </body>
      <body pos="0 -.1 0">
        <joint axis="0 0 1"/>
        <joint axis="1 0 .3"/>
        <geom type="sphere" size=".04" pos=".15 0 0" mass=".2"/>
        <body pos=".15 0 0">
          <joint axis="0 1 0"/>
          <geom type="capsule" size=".02" fromto="0 0 0 .15 -.05 .02" mass=".1"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>""")


def self_contact_state(m: mujoco.MjModel, pair: tuple[int, int], seed: int = 0,
                       world: bool = False, tries: int = 20000) -> mujoco.MjData:
    """Data at a seeded random pose (base rotated too) where a contact between geom types
    ``pair`` (MuJoCo's order; ``world``: its first geom static) is active, every contact
    between 1e-4 and 1e-2 deep (a contact set stable under small steps)."""
    rng = np.random.default_rng(seed)
    d = mujoco.MjData(m)
    for _ in range(tries):
        mujoco.mj_resetData(m, d)
        dq = 0.9 * rng.standard_normal(m.nv)
        dq[:3] = 0.0
        mujoco.mj_integratePos(m, d.qpos, dq, 1.0)
        d.qvel[:] = rng.standard_normal(m.nv)
        mujoco.mj_forward(m, d)
        types = [tuple(m.geom_type[g] for g in d.contact.geom[i]) for i in range(d.ncon)
                 if not world or m.geom_bodyid[d.contact.geom[i, 0]] == 0]
        if pair in types and all(-0.01 < dist < -1e-4 for dist in d.contact.dist):
            return d
    raise RuntimeError(f"no pose with a {pair} contact")
