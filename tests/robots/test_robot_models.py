"""The project's robot models against the reference descriptions (meshes removed).

Every model (and H1's generated legs-only planning model) must compile without warnings, have
the reference's masses, inertias, kinematics, joint properties and actuator limits, put its
feet where the reference puts them at the home pose, and let only spheres and capsules touch
the floor (the analytic derivative backend covers no other floor contact).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import mujoco
import numpy as np
import pytest
from reference_models import load_reference

import robots

MODELS_DIR = robots.MODELS_DIR
#: (robot, model file) of every shipped model.
MODELS = [(name, robots.info(name).model_file) for name in robots.available()] + [
    (name, robots.info(name).planning_model_file)
    for name in robots.available() if robots.info(name).planning_model_file
]
IDS = [Path(f).stem for _, f in MODELS]
QUADRUPEDS = ["a1", "go1", "go2"]
OBJ = mujoco.mjtObj
GEOM = mujoco.mjtGeom


@contextmanager
def mujoco_warnings() -> Iterator[list[str]]:
    """Collect MuJoCo warnings (compiler and runtime) raised inside the block."""
    previous = mujoco.get_mju_user_warning()
    collected: list[str] = []
    mujoco.set_mju_user_warning(collected.append)
    try:
        yield collected
    finally:
        mujoco.set_mju_user_warning(previous)


def load(file: str) -> mujoco.MjModel:
    return mujoco.MjModel.from_xml_path(str(MODELS_DIR / file))


def names(model: mujoco.MjModel, objtype: mujoco.mjtObj, count: int) -> list[str]:
    return [mujoco.mj_id2name(model, objtype, i) or "" for i in range(count)]


def home_data(model: mujoco.MjModel, robot: str) -> mujoco.MjData:
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key(robots.info(robot).home_key).id)
    mujoco.mj_forward(model, data)
    return data


def reference_at_home(robot: str, model: mujoco.MjModel) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """The reference model posed at the project model's home key, joint by joint (by name);
    joints the model lacks (locked in a planning model) take the full model's home angles."""
    ref = load_reference(robot)
    full = load(robots.info(robot).model_file)
    data = home_data(model, robot)
    full_data = home_data(full, robot)
    ref_data = mujoco.MjData(ref)
    for j in range(ref.njnt):
        adr = ref.jnt_qposadr[j]
        if ref.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            ref_data.qpos[adr : adr + 7] = data.qpos[:7]
            continue
        name = ref.joint(j).name
        source, source_data = (model, data) if name in names(model, OBJ.mjOBJ_JOINT, model.njnt) \
            else (full, full_data)
        ref_data.qpos[adr] = source_data.qpos[source.joint(name).qposadr[0]]
    mujoco.mj_forward(ref, ref_data)
    return ref, ref_data


def world_inertia(data: mujoco.MjData, model: mujoco.MjModel, body: int) -> np.ndarray:
    """Inertia tensor of ``body`` about its centre of mass, in the world frame."""
    R = data.ximat[body].reshape(3, 3)
    return R @ np.diag(model.body_inertia[body]) @ R.T


# --- compilation and contact geometry ---------------------------------------------------------

@pytest.mark.parametrize(("robot", "file"), MODELS, ids=IDS)
def test_compiles_without_warnings(robot, file):
    with mujoco_warnings() as warnings:
        model = load(file)
        data = home_data(model, robot)
        mujoco.mj_step(model, data)
    assert warnings == []
    assert not np.any(data.warning.number), "runtime warnings in the first step"


@pytest.mark.parametrize(("robot", "file"), MODELS, ids=IDS)
def test_only_spheres_and_capsules_can_touch_the_floor(robot, file):
    model = load(file)
    planes = np.flatnonzero(model.geom_type == GEOM.mjGEOM_PLANE)
    assert len(planes) == 1, "one floor plane"
    floor = planes[0]

    def collides(g: int) -> bool:
        return bool(model.geom_contype[g] & model.geom_conaffinity[floor]
                    or model.geom_contype[floor] & model.geom_conaffinity[g])

    touching = [g for g in range(model.ngeom) if g != floor and collides(g)]
    for pair in zip(model.pair_geom1, model.pair_geom2, strict=True):
        if floor in pair:
            touching += [g for g in pair if g != floor]
    assert touching, "the robot must be able to touch the floor"
    allowed = {int(GEOM.mjGEOM_SPHERE), int(GEOM.mjGEOM_CAPSULE)}
    bad = {model.geom(g).name or f"#{g}": GEOM(model.geom_type[g]).name
           for g in touching if int(model.geom_type[g]) not in allowed}
    assert bad == {}


def foot_geoms(model: mujoco.MjModel) -> list[int]:
    """The foot contact spheres: quadrupeds' X_foot, H1's X_heel and X_toe."""
    return [g for g in range(model.ngeom)
            if model.geom(g).name.endswith(("_foot", "_heel", "_toe"))]


@pytest.mark.parametrize(("robot", "file"), MODELS, ids=IDS)
def test_feet_and_nothing_else_touch_at_home(robot, file):
    """At the home pose every foot sphere is within 2 mm of the floor and the only contacts
    (floor or self, margins included) are feet on the floor."""
    model = load(file)
    data = home_data(model, robot)
    feet = foot_geoms(model)
    assert len(feet) == 4  # quadrupeds: one per foot; H1: heel and toe per foot
    for g in feet:
        bottom = data.geom_xpos[g][2] - model.geom_size[g, 0]
        assert abs(bottom) < 2e-3, model.geom(g).name
    pairs = {tuple(sorted((model.geom(c.geom1).name or f"#{c.geom1}",
                           model.geom(c.geom2).name or f"#{c.geom2}")))
             for c in data.contact[: data.ncon]}
    assert pairs <= {tuple(sorted(("floor", model.geom(g).name))) for g in feet}


@pytest.mark.parametrize(("robot", "file"), MODELS, ids=IDS)
def test_options_match_reference(robot, file):
    model, ref = load(file), load_reference(robot)
    assert model.opt.timestep == ref.opt.timestep == 0.002
    assert model.opt.cone == ref.opt.cone
    assert model.opt.impratio == ref.opt.impratio
    assert model.opt.integrator == ref.opt.integrator
    assert model.opt.solver == ref.opt.solver


# --- mass, inertia, kinematics ----------------------------------------------------------------

@pytest.mark.parametrize(("robot", "file"), MODELS, ids=IDS)
def test_total_mass_matches_reference(robot, file):
    model, ref = load(file), load_reference(robot)
    assert mujoco.mj_getTotalmass(model) == pytest.approx(mujoco.mj_getTotalmass(ref), rel=1e-9)


@pytest.mark.parametrize(("robot", "file"), MODELS, ids=IDS)
def test_bodies_match_reference_at_home(robot, file):
    """Per body: mass, centre of mass, inertia tensor and frame, in the world at the home pose."""
    model = load(file)
    data = home_data(model, robot)
    ref, ref_data = reference_at_home(robot, model)
    body_names = names(model, OBJ.mjOBJ_BODY, model.nbody)
    assert set(body_names) == set(names(ref, OBJ.mjOBJ_BODY, ref.nbody))
    for b, name in enumerate(body_names):
        r = ref.body(name).id
        assert model.body_mass[b] == pytest.approx(ref.body_mass[r], rel=1e-9), name
        np.testing.assert_allclose(data.xpos[b], ref_data.xpos[r], atol=1e-9, err_msg=name)
        np.testing.assert_allclose(data.xmat[b], ref_data.xmat[r], atol=1e-9, err_msg=name)
        np.testing.assert_allclose(data.xipos[b], ref_data.xipos[r], atol=1e-9, err_msg=name)
        np.testing.assert_allclose(world_inertia(data, model, b), world_inertia(ref_data, ref, r),
                                   atol=1e-9, rtol=1e-7, err_msg=name)


@pytest.mark.parametrize(("robot", "file"), MODELS, ids=IDS)
def test_joints_match_reference(robot, file):
    model, ref = load(file), load_reference(robot)
    for j in range(model.njnt):
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            continue
        name, r = model.joint(j).name, ref.joint(model.joint(j).name).id
        assert model.jnt_type[j] == ref.jnt_type[r], name
        np.testing.assert_allclose(model.jnt_axis[j], ref.jnt_axis[r], err_msg=name)
        np.testing.assert_allclose(model.jnt_range[j], ref.jnt_range[r], err_msg=name)
        d, rd = model.jnt_dofadr[j], ref.jnt_dofadr[r]
        assert model.dof_damping[d] == ref.dof_damping[rd], name
        assert model.dof_armature[d] == ref.dof_armature[rd], name
        assert model.dof_frictionloss[d] == ref.dof_frictionloss[rd], name


def force_limit(model: mujoco.MjModel, actuator: int) -> np.ndarray:
    """(lower, upper) joint force of an actuator: forcerange if limited, else ctrlrange x gear."""
    if model.actuator_forcelimited[actuator]:
        return model.actuator_forcerange[actuator]
    return model.actuator_ctrlrange[actuator] * model.actuator_gear[actuator, 0]


@pytest.mark.parametrize(("robot", "file"), MODELS, ids=IDS)
def test_actuator_limits_match_reference(robot, file):
    """Same force limits per joint; position actuators' ctrl range is the joint range and their
    kp is the reference's where the reference has position actuators."""
    model, ref = load(file), load_reference(robot)
    ref_by_joint = {ref.joint(ref.actuator_trnid[a, 0]).name: a for a in range(ref.nu)}
    for a in range(model.nu):
        joint = model.joint(model.actuator_trnid[a, 0])
        r = ref_by_joint[joint.name]
        np.testing.assert_allclose(force_limit(model, a), force_limit(ref, r), err_msg=joint.name)
        is_position = model.actuator_biastype[a] == mujoco.mjtBias.mjBIAS_AFFINE
        if is_position:
            np.testing.assert_allclose(model.actuator_ctrlrange[a], joint.range)
            if ref.actuator_biastype[r] == mujoco.mjtBias.mjBIAS_AFFINE:
                assert model.actuator_gainprm[a, 0] == ref.actuator_gainprm[r, 0], joint.name
        else:
            np.testing.assert_allclose(model.actuator_ctrlrange[a], ref.actuator_ctrlrange[r])
            np.testing.assert_allclose(model.actuator_gear[a], ref.actuator_gear[r])


# --- feet ---------------------------------------------------------------------------------------

def reference_foot_sphere(ref: mujoco.MjModel, leg: str) -> int:
    """The reference's foot: the one sphere geom of the leg's calf body."""
    calf = ref.body(f"{leg}_calf").id
    spheres = [g for g in range(ref.ngeom)
               if ref.geom_bodyid[g] == calf and ref.geom_type[g] == GEOM.mjGEOM_SPHERE]
    assert len(spheres) == 1
    return spheres[0]


@pytest.mark.parametrize("robot", QUADRUPEDS)
def test_quadruped_feet_match_reference_at_home(robot):
    """Foot sites and geoms where the reference's foot spheres are, with their radius and
    contact parameters, at the home pose."""
    model = load(robots.info(robot).model_file)
    data = home_data(model, robot)
    ref, ref_data = reference_at_home(robot, model)
    for site in robots.info(robot).feet:
        leg = site.split("_")[0]
        r = reference_foot_sphere(ref, leg)
        g = model.geom(site).id
        np.testing.assert_allclose(data.site(site).xpos, ref_data.geom_xpos[r], atol=1e-9)
        np.testing.assert_allclose(data.geom_xpos[g], ref_data.geom_xpos[r], atol=1e-9)
        assert model.geom_size[g, 0] == ref.geom_size[r, 0]
        assert robots.info(robot).foot_radius == ref.geom_size[r, 0]
        for attr in ("geom_friction", "geom_condim", "geom_priority", "geom_solimp",
                     "geom_solref", "geom_margin"):
            np.testing.assert_array_equal(getattr(model, attr)[g], getattr(ref, attr)[r], attr)


def reference_h1_sole(ref: mujoco.MjModel, ref_data: mujoco.MjData, side: str) -> np.ndarray:
    """Lowest points of the reference's foot capsules (world, at the pose in ``ref_data``):
    (x of the rear end, x of the front end, z of the sole)."""
    ankle = ref.body(f"{side}_ankle_link").id
    ends = []
    for g in range(ref.ngeom):
        if ref.geom_bodyid[g] != ankle or ref.geom_type[g] != GEOM.mjGEOM_CAPSULE:
            continue
        axis = ref_data.geom_xmat[g].reshape(3, 3)[:, 2] * ref.geom_size[g, 1]
        radius = ref.geom_size[g, 0]
        for end in (ref_data.geom_xpos[g] + axis, ref_data.geom_xpos[g] - axis):
            ends.append((end[0] - radius, end[0] + radius, end[2] - radius))
    ends = np.array(ends)
    return np.array([ends[:, 0].min(), ends[:, 1].max(), ends[:, 2].min()])


@pytest.mark.parametrize("file", ["h1.xml", "h1_legs.xml"])
def test_h1_feet_match_reference_at_home(file):
    """Compared with the reference's ankle-link frames (exactly) and its foot geometry: the heel
    and toe spheres stand on the reference's sole and span its length (within 5 mm)."""
    model = load(file)
    data = home_data(model, "h1")
    ref, ref_data = reference_at_home("h1", model)
    for side in ("left", "right"):
        ankle = f"{side}_ankle_link"
        np.testing.assert_allclose(data.body(ankle).xpos, ref_data.body(ankle).xpos, atol=1e-9)
        np.testing.assert_allclose(data.body(ankle).xmat, ref_data.body(ankle).xmat, atol=1e-9)
        rear, front, sole = reference_h1_sole(ref, ref_data, side)
        heel, toe = model.geom(f"{side}_heel"), model.geom(f"{side}_toe")
        for g in (heel, toe):
            assert g.type[0] == GEOM.mjGEOM_SPHERE
            assert data.geom_xpos[g.id][2] - g.size[0] == pytest.approx(sole, abs=1e-9)
        assert data.geom_xpos[heel.id][0] - heel.size[0] == pytest.approx(rear, abs=5e-3)
        assert data.geom_xpos[toe.id][0] + toe.size[0] == pytest.approx(front, abs=5e-3)
        # The foot site lies midway between the sphere centres, at their height.
        np.testing.assert_allclose(
            data.site(f"{side}_foot").xpos,
            (data.geom_xpos[heel.id] + data.geom_xpos[toe.id]) / 2, atol=1e-9)
        assert robots.info("h1").foot_radius == heel.size[0] == toe.size[0]
