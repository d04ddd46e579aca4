"""The reference descriptions (MuJoCo Menagerie) with visual meshes removed.

Used by tests and benchmarks as the independent description a project model is checked against.
The files live in ``tests/reference/`` with their licences (see the README there). Every body
of these files has an explicit inertial, so dropping mesh geoms, meshes and textures leaves the
dynamics unchanged.
"""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np

#: Menagerie folder of each robot.
FOLDERS = {"a1": "unitree_a1", "go1": "unitree_go1", "go2": "unitree_go2", "h1": "unitree_h1"}


#: The reference descriptions, in the repository beside this file.
REFERENCE_DIR = Path(__file__).resolve().parent / "reference"


def reference_spec(robot: str, scene: bool = True) -> mujoco.MjSpec:
    """Specification of the reference description of ``robot`` without meshes and textures."""
    path = REFERENCE_DIR / "menagerie" / FOLDERS[robot] / ("scene.xml" if scene else
                                                                f"{robot}.xml")
    spec = mujoco.MjSpec.from_file(str(path))
    for geom in list(spec.geoms):
        if geom.type == mujoco.mjtGeom.mjGEOM_MESH:
            spec.delete(geom)
    for mesh in list(spec.meshes):
        spec.delete(mesh)
    file_textures = {t.name for t in spec.textures if t.file}
    for material in list(spec.materials):
        if any(name in file_textures for name in material.textures):
            spec.delete(material)
    for texture in list(spec.textures):
        if texture.file:
            spec.delete(texture)
    for geom in spec.geoms:
        if geom.material and geom.material not in {m.name for m in spec.materials}:
            geom.material = ""
    return spec


def load_reference(robot: str, scene: bool = True) -> mujoco.MjModel:
    """Compiled reference model of ``robot`` (meshes removed)."""
    return reference_spec(robot, scene).compile()


def reference_plant_spec(robot: str) -> mujoco.MjSpec:
    """The reference description ready to stand in for the robot in a simulated plant (e.g.
    ``FakeMotorPlant(..., spec=reference_plant_spec("go2"))``: a robot that is not the
    planner's own model): the project model's foot and IMU sites added where the reference
    lacks them (same body, same pose), and its ``home`` key set to the project's home pose,
    joint by joint by name (the reference's own home of the Go2 starts its feet 1.8 cm inside
    the floor)."""
    import robots

    spec = reference_spec(robot)
    own = mujoco.MjSpec.from_file(str(robots.model_path(robot)))
    info = robots.info(robot)
    have = {s.name for s in spec.sites}
    for name in (*info.feet, "imu"):
        site = own.site(name)
        if name not in have:
            spec.body(site.parent.name).add_site(name=name, pos=site.pos, quat=site.quat)
    own_model, ref_model = own.compile(), spec.compile()
    home = own_model.key(info.home_key).qpos
    qpos = ref_model.qpos0.copy()
    for j in range(ref_model.njnt):
        adr = ref_model.jnt_qposadr[j]
        if ref_model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            qpos[adr:adr + 7] = home[:7]
        else:
            qpos[adr] = home[own_model.joint(ref_model.joint(j).name).qposadr[0]]
    keys = {k.name: k for k in spec.keys}
    key = keys.get(info.home_key) or spec.add_key(name=info.home_key)
    key.qpos = qpos
    key.qvel, key.act = np.zeros(ref_model.nv), np.zeros(ref_model.na)
    key.ctrl = np.zeros(ref_model.nu)
    return spec
