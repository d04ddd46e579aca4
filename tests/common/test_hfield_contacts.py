"""Pruned sphere contacts on height fields (:mod:`common.hfield_contacts`).

* On a flat field of 5 cm cells MuJoCo reports 1-6 contacts per sphere (one per prism it
  enters); pruned, exactly one, MuJoCo's deepest, unchanged.
* On the test terrain (bumps, a slope, a steep step): the pruned contacts are MuJoCo's (the same
  rows, in MuJoCo's order), the deepest is kept, no two kept normals are within the angle and
  every dropped contact has a kept one at least as deep within it.
* A sphere in the corner at the foot of the step keeps the floor's and the step's contacts.
* The mark travels with a copy of the model; an unmarked model in the same process keeps
  MuJoCo's contacts; clearing the mark restores them.

The derivatives through the pruned step: tests/derivatives/analytic/test_hfield.py.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import mujoco
import numpy as np

from common import hfield_contacts as hc

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "derivatives" / "analytic"))
import hfield_models as hm

_G = mujoco.mjtGeom


def sphere_on(heights: np.ndarray, pruned: bool) -> mujoco.MjModel:
    spec = mujoco.MjSpec()
    hm.add_field(spec, heights, hm.RESOLUTION)
    body = spec.worldbody.add_body(pos=[0, 0, 0.5])
    body.add_freejoint()
    body.add_geom(type=_G.mjGEOM_SPHERE, size=[0.02, 0, 0])
    model = spec.compile()
    hc.prune_contacts(model, pruned)
    return model


def contacts(m: mujoco.MjModel, qpos: np.ndarray) -> np.ndarray:
    """(dist, pos, normal) of each contact at ``qpos``."""
    d = mujoco.MjData(m)
    d.qpos[:] = qpos
    mujoco.mj_forward(m, d)
    return np.array([np.r_[d.contact.dist[i], d.contact.pos[i], d.contact.frame[i, :3]]
                     for i in range(d.ncon)]).reshape(-1, 7)


def check_pruned(full: np.ndarray, kept: np.ndarray) -> None:
    cos = np.cos(hc.ANGLE)
    rows = [int(np.flatnonzero((full == row).all(1))[0]) for row in kept]  # MuJoCo's rows
    assert rows == sorted(rows)
    assert kept[:, 0].min() == full[:, 0].min()
    normals = kept[:, 4:]
    gram = normals @ normals.T
    assert (gram[~np.eye(len(kept), dtype=bool)] < cos).all()
    for j in set(range(len(full))) - set(rows):
        near = (normals @ full[j, 4:] >= cos) & (kept[:, 0] <= full[j, 0])
        assert near.any(), j


def test_one_contact_per_sphere_on_a_flat_field():
    flat = np.zeros((9, 9))
    mujoco_m, pruned_m = sphere_on(flat, False), sphere_on(flat, True)
    rng = np.random.default_rng(0)
    most = 0
    for _ in range(200):
        qpos = np.r_[rng.uniform(-0.15, 0.15, 2), 0.02 - rng.uniform(1e-4, 5e-3), 1, 0, 0, 0]
        full, kept = contacts(mujoco_m, qpos), contacts(pruned_m, qpos)
        most = max(most, len(full))
        assert len(kept) == 1
        check_pruned(full, kept)
    assert most >= 4  # MuJoCo's own make several where a sample point is near


def test_pruned_contacts_on_the_test_terrain():
    mujoco_m, pruned_m = sphere_on(hm.terrain(), False), sphere_on(hm.terrain(), True)
    d = mujoco.MjData(mujoco_m)
    rng = np.random.default_rng(1)
    dropped = 0
    for _ in range(300):
        mujoco.mj_resetData(mujoco_m, d)
        d.qpos[:3] = [rng.uniform(-0.27, 0.27), rng.uniform(-0.27, 0.27), 0.5]
        hm.lower_onto(mujoco_m, d, rng.uniform(5e-4, 6e-3))
        full, kept = contacts(mujoco_m, d.qpos), contacts(pruned_m, d.qpos)
        check_pruned(full, kept)
        dropped += len(full) - len(kept)
    assert dropped > 100


def test_a_sphere_at_the_foot_of_a_step_keeps_floor_and_step():
    step = np.zeros((9, 9))
    step[:, 5:] = 0.12  # the field rises 12 cm over one cell
    m = sphere_on(step, True)
    kept = contacts(m, np.r_[-0.01, 0.013, 0.018, 1, 0, 0, 0])
    assert len(kept) == 2
    assert np.isclose(kept[:, 6], 1.0).sum() == 1  # the floor's face
    assert (kept[:, 4] < -0.9).sum() == 1  # the step's steep face


def test_the_mark_belongs_to_the_model():
    flat = np.zeros((9, 9))
    qpos = np.r_[0.0, 0.0, 0.017, 1, 0, 0, 0]  # over a sample point: six prisms
    m = sphere_on(flat, True)
    other = sphere_on(flat, False)
    assert len(contacts(other, qpos)) == 6
    assert len(contacts(m, qpos)) == 1
    twin = copy.copy(m)
    assert hc.pruned(twin) and len(contacts(twin, qpos)) == 1
    hc.prune_contacts(twin, False)
    assert not hc.pruned(twin) and len(contacts(twin, qpos)) == 6
    assert len(contacts(m, qpos)) == 1
