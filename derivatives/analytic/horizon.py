"""All knots of a horizon in one compiled call that releases the GIL.

For each knot t of ``knots``: put the knot's time, state, control and solver warm start into
the worker's ``MjData`` (unless ``load`` is false: the data already holds the knot), run
``mj_forward`` (libmujoco, by address), read the constraint and contact arrays it allocated and
linearize (:func:`.knot.linearize_knot`). No Python runs between knots, so two threads with
their own ``MjData`` run two chunks of a horizon in parallel.

A forward pass reallocates the constraint rows and contacts in the arena: their counts and
addresses are read from the ``mjData`` struct at the offsets of :mod:`.layout`, wrapped as
arrays without copying (``numba.carray``) and put into the data bundle's arena fields. The
contact fields are strided views (one ``mjContact`` per row), exactly as the bindings present
them.
"""

from __future__ import annotations

import numpy as np
from numba import carray, njit

from derivatives.analytic.knot import linearize_knot
from derivatives.analytic.layout import (
    CONTACT,
    CONTACT_FRAME,
    CONTACT_FRICTION,
    CONTACT_GEOM,
    CONTACT_POS,
    CONTACT_SIZE,
    EFC_AREF,
    EFC_D,
    EFC_ID,
    EFC_J,
    EFC_KBIP,
    EFC_MARGIN,
    EFC_POS,
    EFC_TYPE,
    NCON,
    NEFC,
    TIME,
)
from derivatives.mjc import call_void, pointer


@njit(cache=True, nogil=True)
def _field(d_ptr, offset, dtype):
    """The scalar field of the mjData struct at ``offset`` (as a one-element array view)."""
    return carray(pointer(d_ptr + offset), 1, dtype)


@njit(cache=True, nogil=True)
def _rows(d_ptr, layout, field, shape, dtype):
    """The arena array a pointer field of mjData points to, viewed with ``shape``."""
    return carray(pointer(_field(d_ptr, layout[field], np.int64)[0]), shape, dtype)


@njit(cache=True, nogil=True)
def _point_at_arena(d_ptr, layout, d):
    """Point the arena fields of the data bundle ``d`` at the last forward pass's constraint
    rows and contacts."""
    nv = d.qvel.shape[0]
    ncon = _field(d_ptr, layout[NCON], np.int32)[0]
    nefc = _field(d_ptr, layout[NEFC], np.int32)[0]
    d.efc_type = _rows(d_ptr, layout, EFC_TYPE, nefc, np.int32)
    d.efc_id = _rows(d_ptr, layout, EFC_ID, nefc, np.int32)
    d.efc_J = _rows(d_ptr, layout, EFC_J, (nefc, nv), np.float64)
    d.efc_pos = _rows(d_ptr, layout, EFC_POS, nefc, np.float64)
    d.efc_margin = _rows(d_ptr, layout, EFC_MARGIN, nefc, np.float64)
    d.efc_D = _rows(d_ptr, layout, EFC_D, nefc, np.float64)
    d.efc_KBIP = _rows(d_ptr, layout, EFC_KBIP, (nefc, 4), np.float64)
    d.efc_aref = _rows(d_ptr, layout, EFC_AREF, nefc, np.float64)
    # mjContact as rows of 4-byte and of 8-byte words; its fields are column ranges
    words = layout[CONTACT_SIZE] // 4
    ints = _rows(d_ptr, layout, CONTACT, (ncon, words), np.int32)
    reals = _rows(d_ptr, layout, CONTACT, (ncon, words // 2), np.float64)
    geom = layout[CONTACT_GEOM] // 4
    pos = layout[CONTACT_POS] // 8
    frame = layout[CONTACT_FRAME] // 8
    friction = layout[CONTACT_FRICTION] // 8
    d.contact_geom = ints[:, geom : geom + 2]
    d.contact_pos = reals[:, pos : pos + 3]
    d.contact_frame = reals[:, frame : frame + 9]
    d.contact_friction = reals[:, friction : friction + 5]


@njit(cache=True, nogil=True)
def linearize_knots(mj_forward, m_ptr, d_ptr, layout, m, d, load, knots, time, qpos, qvel,
                    act, ctrl, warmstart, A, B, C, D, with_sensors, status, info):
    """Linearize the knots ``knots`` (trajectory arrays and outputs indexed by knot).

    ``mj_forward``: its libmujoco address; ``m_ptr``, ``d_ptr``: the model and the worker's
    data, whose bundles are ``m`` and ``d``; ``layout``: the offsets of
    :mod:`.layout`. Writes A[t], B[t] (C[t], D[t] when ``with_sensors``, else zeros) and
    ``status[i]``, ``info[i]`` of the i-th knot (see :func:`.knot.linearize_knot`).
    """
    slot = np.zeros(1, dtype=np.int64)
    for i in range(knots.shape[0]):
        t = knots[i]
        if load:
            _field(d_ptr, layout[TIME], np.float64)[0] = time[t]
            d.qpos[:] = qpos[t]
            d.qvel[:] = qvel[t]
            d.act[:] = act[t]
            d.ctrl[:] = ctrl[t]
            d.qacc_warmstart[:] = warmstart[t]
        call_void(mj_forward, m_ptr, d_ptr)
        _point_at_arena(d_ptr, layout, d)
        if not with_sensors:
            C[t] = 0.0
            D[t] = 0.0
        status[i] = linearize_knot(m, d, A[t], B[t], C[t], D[t], with_sensors, slot)
        info[i] = slot[0]
