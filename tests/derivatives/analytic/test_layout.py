"""The mjData/mjContact offsets the horizon kernel reads: they agree with the bindings at every
reference state (counts, arena pointers and contact fields move with each forward pass), and a
layout that cannot be trusted makes the provider fall back to finite differences, loudly."""

from __future__ import annotations

import ctypes

import analytic_verify as verify
import mujoco
import numpy as np
import pytest

import derivatives
from derivatives.analytic import AnalyticFallbackWarning, layout
from derivatives.analytic import provider as provider_module


def _int(address: int) -> int:
    return ctypes.c_int.from_address(address).value


def _pointer(address: int) -> int:
    return ctypes.c_void_p.from_address(address).value or 0


@pytest.mark.parametrize("state", verify.STATES)
def test_offsets_read_what_the_bindings_show(a1_task, state):
    _, model = a1_task
    offsets = layout.data_layout(model)
    assert offsets is not None
    offsets = [int(o) for o in offsets]
    d = verify.reference_state(model, state)
    d.time = 0.75
    mujoco.mj_forward(model, d)
    assert d.ncon > 0 and d.nefc > 0
    base = d._address
    assert _int(base + offsets[layout.NCON]) == d.ncon
    assert _int(base + offsets[layout.NEFC]) == d.nefc
    assert ctypes.c_double.from_address(base + offsets[layout.TIME]).value == 0.75
    for index, name in ((layout.EFC_TYPE, "efc_type"), (layout.EFC_ID, "efc_id"),
                        (layout.EFC_J, "efc_J"), (layout.EFC_POS, "efc_pos"),
                        (layout.EFC_MARGIN, "efc_margin"), (layout.EFC_D, "efc_D"),
                        (layout.EFC_KBIP, "efc_KBIP"), (layout.EFC_AREF, "efc_aref")):
        assert _pointer(base + offsets[index]) == getattr(d, name).ctypes.data, name
    contact = _pointer(base + offsets[layout.CONTACT])
    assert contact == d.contact.dist.ctypes.data
    size = offsets[layout.CONTACT_SIZE]
    for c in range(d.ncon):
        row = contact + c * size
        geom = np.ctypeslib.as_array((ctypes.c_int * 2).from_address(
            row + offsets[layout.CONTACT_GEOM]))
        np.testing.assert_array_equal(geom, d.contact.geom[c])
        for index, name, n in ((layout.CONTACT_POS, "pos", 3), (layout.CONTACT_FRAME, "frame", 9),
                               (layout.CONTACT_FRICTION, "friction", 5)):
            values = np.ctypeslib.as_array((ctypes.c_double * n).from_address(
                row + offsets[index]))
            np.testing.assert_array_equal(values, getattr(d.contact, name)[c])


def test_a_layout_that_disagrees_is_rejected(a1_task, monkeypatch):
    """A wrong offset (here: mjData's counters shifted by one int) fails the check."""
    _, model = a1_task
    struct = layout._struct
    shifted = type("mjData", (ctypes.Structure,),
                   {"_fields_": [("pad", ctypes.c_int), *struct("mjData")._fields_]})
    monkeypatch.setattr(layout, "_struct",
                        lambda name: shifted if name == "mjData" else struct(name))
    assert layout.data_layout(model) is None


def test_unrecognised_layout_falls_back_to_fd_with_a_warning(a1_task, monkeypatch):
    _, model = a1_task
    monkeypatch.setattr(provider_module, "data_layout", lambda m: None)
    with pytest.warns(AnalyticFallbackWarning, match="mjData layout"):
        provider = derivatives.make_provider("analytic", model, threads=1)
    assert provider.fallback
    d = verify.reference_state(model, "standing")
    before = derivatives.fd_evaluations()
    provider.transition(d)
    assert derivatives.fd_evaluations() > before
    provider.close()
