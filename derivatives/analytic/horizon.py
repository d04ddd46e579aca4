"""The knots of a horizon in one compiled call per thread that releases the GIL (and one knot
of a caller's ``MjData`` likewise: :func:`linearize_state`).

Each thread claims the next entry t of ``knots`` (:mod:`common.handover`), waits until the
trajectory's producer has recorded knot t, puts the knot's time, state, control and solver
warm start into its own ``MjData``, runs ``mj_forward`` (libmujoco, by address), reads the
constraint and contact arrays it allocated and linearizes (:func:`.knot.linearize_knot`). No
Python runs between knots; threads share the knots as they come, and can start while the
trajectory is still being rolled out.

A forward pass reallocates the constraint rows and contacts in the arena: their counts and
addresses are read from the ``mjData`` struct at the offsets of :mod:`.layout`, wrapped as
arrays without copying (``numba.carray``) and put into the data bundle's arena fields. The
contact fields are strided views (one ``mjContact`` per row), exactly as the bindings present
them. A model with the sparse constraint Jacobian has ``efc_J``'s nonzeros row by row; the
kernel scatters them into a dense (nefc, nv) array of its own (:func:`_dense_jacobian`), as
the linearization reads dense rows.
"""

from __future__ import annotations

import numpy as np
from numba import carray, njit

from common.handover import claim, wait_for
from common.libmujoco import call_void, pointer
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
    EFC_J_COLIND,
    EFC_J_ROWADR,
    EFC_J_ROWNNZ,
    EFC_KBIP,
    EFC_MARGIN,
    EFC_POS,
    EFC_TYPE,
    NCON,
    NEFC,
    SPARSE,
    TIME,
)

#: status of a knot list entry that was never linearized: its producer stopped before it.
NOT_RECORDED = -1


@njit(cache=True, nogil=True)
def _field(d_ptr, offset, dtype):
    """The scalar field of the mjData struct at ``offset`` (as a one-element array view)."""
    return carray(pointer(d_ptr + offset), 1, dtype)


@njit(cache=True, nogil=True)
def _rows(d_ptr, layout, field, shape, dtype):
    """The arena array a pointer field of mjData points to, viewed with ``shape``."""
    return carray(pointer(_field(d_ptr, layout[field], np.int64)[0]), shape, dtype)


@njit(cache=True, nogil=True)
def _dense_jacobian(d_ptr, layout, nefc, nv):
    """The sparse ``efc_J`` (row r: ``rownnz[r]`` values from ``rowadr[r]``, in the columns
    ``colind`` gives) as a dense (nefc, nv) array."""
    rownnz = _rows(d_ptr, layout, EFC_J_ROWNNZ, nefc, np.int32)
    rowadr = _rows(d_ptr, layout, EFC_J_ROWADR, nefc, np.int32)
    nnz = 0 if nefc == 0 else rowadr[nefc - 1] + rownnz[nefc - 1]
    colind = _rows(d_ptr, layout, EFC_J_COLIND, nnz, np.int32)
    values = _rows(d_ptr, layout, EFC_J, nnz, np.float64)
    dense = np.zeros((nefc, nv))
    for r in range(nefc):
        for k in range(rowadr[r], rowadr[r] + rownnz[r]):
            dense[r, colind[k]] = values[k]
    return dense


@njit(cache=True, nogil=True)
def _point_at_arena(d_ptr, layout, d):
    """Point the arena fields of the data bundle ``d`` at the last forward pass's constraint
    rows and contacts."""
    nv = d.qvel.shape[0]
    ncon = _field(d_ptr, layout[NCON], np.int32)[0]
    nefc = _field(d_ptr, layout[NEFC], np.int32)[0]
    d.efc_type = _rows(d_ptr, layout, EFC_TYPE, nefc, np.int32)
    d.efc_id = _rows(d_ptr, layout, EFC_ID, nefc, np.int32)
    if layout[SPARSE]:
        d.efc_J = _dense_jacobian(d_ptr, layout, nefc, nv)
    else:
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
def linearize_knots(mj_forward, sched_yield, m_ptr, d_ptr, layout, m, d, knots, progress,
                    time, qpos, qvel, act, ctrl, warmstart, A, B, C, D, with_sensors, status,
                    info):
    """Linearize the entries of ``knots`` this thread claims from ``progress`` (trajectory
    arrays and outputs indexed by knot), until none is left.

    ``mj_forward``, ``sched_yield``: their addresses; ``m_ptr``, ``d_ptr``: the model and the
    worker's data, whose bundles are ``m`` and ``d``; ``layout``: the offsets of
    :mod:`.layout`. Writes A[t], B[t] (C[t], D[t] when ``with_sensors``, else zeros) and
    ``status[i]``, ``info[i]`` of the i-th entry (see :func:`.knot.linearize_knot`;
    NOT_RECORDED if the producer stopped before knot t).
    """
    slot = np.zeros(1, dtype=np.int64)
    while True:
        i = claim(progress)
        if i >= knots.shape[0]:
            return
        t = knots[i]
        if not wait_for(sched_yield, progress, t):
            status[i] = NOT_RECORDED
            continue
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


@njit(cache=True, nogil=True)
def linearize_state(driver, src_ptr, A, B, C, D, with_sensors):
    """Linearize the state held by the ``MjData`` at address ``src_ptr`` (left untouched):
    its integration state (time, qpos, qvel, act, ctrl, warm start, applied forces, mocap) is
    copied into the driver's scratch data with ``mj_getState``/``mj_setState``, then as one
    knot of :func:`linearize_knots`. Returns (status, contact index) as
    :func:`.knot.linearize_knot` defines them."""
    m_ptr = driver.m_ptr
    d_ptr = driver.d_ptr
    state = driver.state.ctypes.data
    call_void(driver.mj_getstate, m_ptr, src_ptr, state, driver.state_sig)
    call_void(driver.mj_setstate, m_ptr, d_ptr, state, driver.state_sig)
    call_void(driver.mj_forward, m_ptr, d_ptr)
    d = driver.d
    _point_at_arena(d_ptr, driver.layout, d)
    if not with_sensors:
        C[:] = 0.0
        D[:] = 0.0
    info = driver.info
    status = linearize_knot(driver.m, d, A, B, C, D, with_sensors, info)
    return status, info[0]
