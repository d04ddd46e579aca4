"""The reference descriptions (MuJoCo Menagerie) with visual meshes removed.

Used by tests and benchmarks as the independent description a project model is checked against.
The files live in ``tests/reference/`` with their licences (see the README there). Every body
of these files has an explicit inertial, so dropping mesh geoms, meshes and textures leaves the
dynamics unchanged.
"""

from __future__ import annotations

from pathlib import Path

import mujoco

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
