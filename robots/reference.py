"""The reference descriptions (MuJoCo Menagerie) with visual meshes removed.

Used by tests and benchmarks as the independent description a project model is checked against.
Every body of these files has an explicit inertial, so dropping mesh geoms, meshes and textures
leaves the dynamics unchanged.
"""

from __future__ import annotations

import os
from pathlib import Path

import mujoco

#: Menagerie folder of each robot.
FOLDERS = {"a1": "unitree_a1", "go1": "unitree_go1", "go2": "unitree_go2", "h1": "unitree_h1"}


def reference_root() -> Path:
    """Folder holding ``menagerie/``: $LEGGED_MPC_REFERENCE, else ../shared/reference next to
    the repository, else /work/shared/reference."""
    candidates = []
    if os.environ.get("LEGGED_MPC_REFERENCE"):
        candidates.append(Path(os.environ["LEGGED_MPC_REFERENCE"]))
    repo = Path(__file__).resolve().parent.parent
    candidates += [repo.parent / "shared" / "reference", Path("/work/shared/reference")]
    for c in candidates:
        if (c / "menagerie").is_dir():
            return c
    raise FileNotFoundError(
        "reference descriptions not found; set LEGGED_MPC_REFERENCE to the folder holding "
        f"menagerie/ (looked in {', '.join(map(str, candidates))})")


def reference_spec(robot: str, scene: bool = True) -> mujoco.MjSpec:
    """Specification of the reference description of ``robot`` without meshes and textures."""
    path = reference_root() / "menagerie" / FOLDERS[robot] / ("scene.xml" if scene else
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
