"""One contact per foot where a height field is flat: MuJoCo's sphere-field contacts, pruned.

MuJoCo 4.0's height-field collision (``mjc_ConvexHField``) tests every triangular prism under
the sphere on its own and reports one contact per prism it enters, with no deduplication: on a
flat field of 5 cm cells a foot sphere gets a face contact plus edge contacts of the
neighbouring prisms (normals tilted 35-50° although the field is flat) and identical copies at
shared sample points, 2-6 contacts where a plane gives one (docs/derivatives.md, "Height
fields"). Every one is a constraint for the solver and for the derivatives.

:func:`prune_contacts` marks a model's height fields so that their sphere contacts are pruned
inside MuJoCo's collision: the ``mjCOLLISIONFUNC`` table entry (height field, sphere), which
``mj_collision`` reads for every pair, is replaced once per process by a compiled C callback
that calls MuJoCo's own function and then, for a marked field only, keeps a contact only if no
deeper one (smaller ``dist``; on a tie the earlier) among those kept has a normal within
:data:`ANGLE` of its own. What remains is the deepest contact per direction: on a flat patch
one face contact; at a riser the tread's and the wall's (90° apart) both. The kept contacts are
MuJoCo's, unchanged, in MuJoCo's order. Since the pruning is part of the collision, every
``mj_step``/``mj_forward`` of the model sees it (the planner's rollouts and line search through
:mod:`common.libmujoco`, ``mjd_transitionFD``, the analytic derivatives reading ``d.contact``),
copies of the model too (the mark is in the model); other models (the simulated world) keep
MuJoCo's contacts.

The mark is the field geom's ``rgba`` alpha set to :data:`MARK` (a value the renderer cannot
tell from 1): the one per-geom number of mjModel that no computation reads.
"""

from __future__ import annotations

import ctypes

import mujoco
import numpy as np
from numba import carray, cfunc, njit, types

from common.libmujoco import _lib, call_int, pointer

#: ``ccd_iterations`` of a planning model with a height field. MuJoCo hands a sphere whose centre
#: is inside a prism (a foot sunk deeper than its radius), or outside it by less than
#: ``ccd_tolerance``, to EPA on the full sphere, which stops after ``ccd_iterations`` whether
#: or not it has converged; at MuJoCo's default of 35 a centre within a few mm of two or three
#: faces (a corner of the prism) often stops early, on a contact up to 0.2 mm shallower than
#: the penetration and with a normal up to 70° off the nearest face's, which no prism feature
#: reproduces (the analytic derivatives then fell back to finite differences). With this many
#: EPA converges to ``ccd_tolerance`` on every such state measured (docs/derivatives.md,
#: "Height fields"); only EPA's deep contacts run longer, the rest stop as before.
CCD_ITERATIONS = 200
#: Largest angle between the normals of two contacts of which the shallower is dropped: above
#: the 35-50° of a flat field's edge contacts, below the 90° between a tread and a riser.
ANGLE = np.radians(60.0)
#: The ``geom_rgba`` alpha that marks a height field whose sphere contacts are pruned.
MARK = np.float32(1.0 - 2.0 ** -11)

_PRECONTACT = 10  # mjPreContact: dist, pos[3], normal[3], tangent[3] (doubles)
_NTYPES = int(mujoco.mjtGeom.mjNGEOMTYPES)
_ENTRY = int(mujoco.mjtGeom.mjGEOM_HFIELD) * _NTYPES + int(mujoco.mjtGeom.mjGEOM_SPHERE)
_table = (ctypes.c_void_p * (_NTYPES * _NTYPES)).in_dll(_lib, "mjCOLLISIONFUNC")
_callback = None  # the compiled callback, kept alive for the process


def _rgba_offset(model: mujoco.MjModel) -> int:
    """Byte offset of the ``geom_rgba`` pointer in the mjModel struct: the first word of the
    struct that holds the array's address."""
    target = model.geom_rgba.ctypes.data
    words = ctypes.cast(model._address, ctypes.POINTER(ctypes.c_uint64))
    for i in range(8192):
        if words[i] == target:
            return 8 * i
    raise RuntimeError("geom_rgba not found in mjModel")


@njit(cache=True, nogil=True)
def prune(c, cos_angle):
    """Prune the contacts ``c`` (n × 10, mjPreContact rows) in place: each contact in order of
    depth (``dist``, ties in row order) is kept unless a kept one has a normal within the angle
    whose cosine is ``cos_angle``; the kept rows move to the front in their order. Returns how
    many are kept (n ≤ mjMAXCONPAIR = 50: the sets are bit masks, nothing is allocated)."""
    n = c.shape[0]
    done = np.uint64(0)
    keep = np.uint64(0)
    one = np.uint64(1)
    for _ in range(n):
        j = -1
        for q in range(n):  # the deepest not yet placed
            if not (done >> np.uint64(q)) & one and (j < 0 or c[q, 0] < c[j, 0]):
                j = q
        done |= one << np.uint64(j)
        kept = True
        for i in range(n):
            if (keep >> np.uint64(i)) & one and (c[i, 4] * c[j, 4] + c[i, 5] * c[j, 5]
                                                 + c[i, 6] * c[j, 6]) >= cos_angle:
                kept = False
                break
        if kept:
            keep |= one << np.uint64(j)
    k = 0
    for j in range(n):
        if (keep >> np.uint64(j)) & one:
            if k != j:
                for q in range(_PRECONTACT):
                    c[k, q] = c[j, q]
            k += 1
    return k


def _compile(original: int, rgba_offset: int, cos_angle: float, mark: float):
    """The callback: MuJoCo's function at ``original``, then :func:`prune` for a field whose
    ``geom_rgba`` alpha (the struct's pointer at ``rgba_offset``) is ``mark``."""
    sig = types.int32(types.int64, types.int64, types.int64, types.int32, types.int32,
                      types.float64)

    @cfunc(sig, nopython=True)
    def pruned_hfield(m, d, con, g1, g2, margin):
        n = call_int(original, m, d, con, g1, g2, margin)
        if n < 2:
            return n
        rgba = carray(pointer(m + rgba_offset), (1,), np.int64)[0]
        if carray(pointer(rgba), (4 * g1 + 4,), np.float32)[4 * g1 + 3] != mark:
            return n
        return prune(carray(pointer(con), (n, _PRECONTACT), np.float64), cos_angle)

    return pruned_hfield


def install(model: mujoco.MjModel) -> None:
    """Put the pruning callback in MuJoCo's collision table (once per process; ``model``: any
    model, to find the struct's layout)."""
    global _callback
    if _callback is not None:
        return
    original = _table[_ENTRY]
    _callback = _compile(original, _rgba_offset(model), float(np.cos(ANGLE)), MARK)
    _table[_ENTRY] = _callback.address


def uninstall() -> None:
    """MuJoCo's own function back in the table (for tests)."""
    global _callback
    if _callback is not None:
        _table[_ENTRY] = _ORIGINAL
        _callback = None


_ORIGINAL = _table[_ENTRY]


def prune_contacts(model: mujoco.MjModel, on: bool = True) -> None:
    """Mark (``on``) or unmark every height-field geom of ``model`` for pruned sphere contacts
    (module doc); takes effect at the next collision."""
    fields = np.flatnonzero(model.geom_type == mujoco.mjtGeom.mjGEOM_HFIELD)
    if not fields.size:
        return
    if on:
        install(model)
        model.geom_rgba[fields, 3] = MARK
    else:
        model.geom_rgba[fields, 3] = np.where(model.geom_rgba[fields, 3] == MARK, 1.0,
                                              model.geom_rgba[fields, 3])


def pruned(model: mujoco.MjModel) -> bool:
    """Whether some height field of ``model`` is marked."""
    fields = model.geom_type == mujoco.mjtGeom.mjGEOM_HFIELD
    return bool(np.any(model.geom_rgba[fields, 3] == MARK))
