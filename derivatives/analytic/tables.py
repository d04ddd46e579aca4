"""Model constants the kernels need, as plain numpy arrays (built once per model).

Beyond copies of ``mjModel`` fields this holds the tree bookkeeping of the derivatives:

* ``body_subtree_end[b]``: bodies are numbered depth first, so the subtree of b is the range
  [b, body_subtree_end[b]); ``body_dof_end[b]`` is the end of its dofs, [body_dofadr[b], ...).
* ``dof_group_start[k]`` / ``dof_group_end[k]``: the dofs that move together with dof k's axis.
  A hinge or slide is its own group; a ball joint's three rotations form one group (its axes are
  body-fixed, so each rotation turns the other two); a free joint has a translation group
  (world axes, never turned) and a rotation group.

Perturbing dof j moves, rigidly with twist ``cdof[j]``, every body of the subtree of its body
and turns the axes of the dofs [dof_group_start[j], body_dof_end[body(j)]).
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

FREE, BALL, SLIDE, HINGE = 0, 1, 2, 3


@dataclass(frozen=True)
class TreeTables:
    """Topology of the kinematic tree and per-dof groups."""

    body_parentid: np.ndarray
    body_rootid: np.ndarray
    body_dofadr: np.ndarray
    body_dofnum: np.ndarray
    body_subtree_end: np.ndarray
    body_dof_end: np.ndarray
    #: Last dof of the chain of dofs that move body b (-1: none); walk on with dof_parentid.
    body_chain_end: np.ndarray
    body_mass: np.ndarray
    body_subtreemass: np.ndarray
    dof_bodyid: np.ndarray
    dof_parentid: np.ndarray
    dof_group_start: np.ndarray
    dof_group_end: np.ndarray
    #: 1 for the translations of free joints: they move a whole tree, which changes neither τ
    #: (translation invariance) nor the bias forces' velocity derivative (Galilean invariance).
    dof_free_translation: np.ndarray
    #: First dof of each three-dof rotation (ball joints, free-joint rotations).
    rotation_dofs: np.ndarray

    @classmethod
    def of(cls, m: mujoco.MjModel) -> TreeTables:
        nbody, nv = m.nbody, m.nv
        parent = m.body_parentid.astype(np.int64)
        subtree_end = np.arange(1, nbody + 1, dtype=np.int64)
        for b in range(nbody - 1, 0, -1):
            subtree_end[parent[b]] = max(subtree_end[parent[b]], subtree_end[b])
        dof_bodyid = m.dof_bodyid.astype(np.int64)
        dof_end = np.zeros(nbody, dtype=np.int64)
        for b in range(nbody):
            dof_end[b] = int(np.count_nonzero(dof_bodyid < subtree_end[b]))
        chain_end = np.full(nbody, -1, dtype=np.int64)
        for b in range(1, nbody):
            n = m.body_dofnum[b]
            chain_end[b] = m.body_dofadr[b] + n - 1 if n else chain_end[parent[b]]
        start = np.arange(nv, dtype=np.int64)
        end = np.arange(1, nv + 1, dtype=np.int64)
        free_translation = np.zeros(nv, dtype=np.int64)
        rotations = []
        for j in range(m.njnt):
            adr = m.jnt_dofadr[j]
            if m.jnt_type[j] == FREE:
                start[adr : adr + 3], end[adr : adr + 3] = adr, adr + 3
                free_translation[adr : adr + 3] = 1
                start[adr + 3 : adr + 6], end[adr + 3 : adr + 6] = adr + 3, adr + 6
                rotations.append(adr + 3)
            elif m.jnt_type[j] == BALL:
                start[adr : adr + 3], end[adr : adr + 3] = adr, adr + 3
                rotations.append(adr)
        return cls(
            body_parentid=parent,
            body_rootid=m.body_rootid.astype(np.int64),
            body_dofadr=m.body_dofadr.astype(np.int64),
            body_dofnum=m.body_dofnum.astype(np.int64),
            body_subtree_end=subtree_end,
            body_dof_end=dof_end,
            body_chain_end=chain_end,
            body_mass=m.body_mass.copy(),
            body_subtreemass=m.body_subtreemass.copy(),
            dof_bodyid=dof_bodyid,
            dof_parentid=m.dof_parentid.astype(np.int64),
            dof_group_start=start,
            dof_group_end=end,
            dof_free_translation=free_translation,
            rotation_dofs=np.array(rotations, dtype=np.int64),
        )


def tree_is_depth_first(m: mujoco.MjModel) -> bool:
    """True if every subtree is a contiguous body range and dofs follow body order."""
    t = TreeTables.of(m)
    for b in range(1, m.nbody):
        for c in range(b + 1, t.body_subtree_end[b]):
            a = c
            while a > b:
                a = t.body_parentid[a]
            if a != b:
                return False
    return bool(np.all(np.diff(t.dof_bodyid) >= 0))
