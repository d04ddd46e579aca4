"""Byte offsets of the ``mjData`` and ``mjContact`` fields the horizon kernel reads.

A forward pass reallocates the constraint arrays (``efc_J``, ``efc_D``, ...) and the contacts
in the arena, so their addresses and sizes change from knot to knot. The bindings would give
fresh numpy views after every ``mj_forward``, but only from Python (a few microseconds per
array). The compiled horizon loop (:mod:`.horizon`) instead reads the counts and pointers from
the ``mjData`` struct itself, at the offsets computed here.

The offsets come from the struct declarations that ship with the bindings
(``mujoco.introspect``, generated from the same headers as the library), laid out by ``ctypes``
with the platform's C rules. They are then checked against the bindings on real data (the model's
own, and a sphere resting on a plane so that there are contacts and constraint rows): every
pointer field that is set and that the bindings show as a non-empty array must hold that
array's address, every counter and the time must equal the bindings' values, and the contact
fields must sit where the bindings' strided contact views say. A model with MuJoCo's sparse
constraint Jacobian (``opt.jacobian`` sparse) keeps ``efc_J`` row by row, its nonzeros only
(``efc_J_rownnz``, ``efc_J_rowadr``, ``efc_J_colind``); the layout says so (entry ``SPARSE``)
and holds those fields' offsets too, checked on a sparse sphere. :func:`data_layout` returns
``None`` if anything disagrees, and the provider then linearizes by finite differences (with a
warning) rather than read memory it does not understand.
"""

from __future__ import annotations

import ctypes
import functools

import mujoco
import numpy as np

try:
    from mujoco.introspect import ast_nodes, structs
except ImportError:  # pragma: no cover - bindings without introspection data
    structs = None

#: Entries of the layout array, in order: mjData counters and pointers, then mjContact.
NCON, NEFC, TIME = 0, 1, 2
CONTACT, EFC_TYPE, EFC_ID, EFC_J, EFC_POS, EFC_MARGIN, EFC_D, EFC_KBIP, EFC_AREF = range(3, 12)
CONTACT_SIZE, CONTACT_GEOM, CONTACT_POS, CONTACT_FRAME, CONTACT_FRICTION = range(12, 17)
#: The sparse Jacobian's row counts, row starts and columns, and whether the model has it (1).
EFC_J_ROWNNZ, EFC_J_ROWADR, EFC_J_COLIND, SPARSE = range(17, 21)

_DATA_FIELDS = ("ncon", "nefc", "time", "contact", "efc_type", "efc_id", "efc_J", "efc_pos",
                "efc_margin", "efc_D", "efc_KBIP", "efc_aref")
_SPARSE_FIELDS = ("efc_J_rownnz", "efc_J_rowadr", "efc_J_colind")
_CONTACT_FIELDS = ("geom", "pos", "frame", "friction")
_COUNTERS = ("ncon", "ne", "nf", "nl", "nefc", "nJ", "nisland")

_SCALARS = {
    "mjtNum": ctypes.c_double, "double": ctypes.c_double, "float": ctypes.c_float,
    "int": ctypes.c_int, "unsigned int": ctypes.c_uint, "char": ctypes.c_char,
    "unsigned char": ctypes.c_ubyte, "mjtByte": ctypes.c_ubyte, "mjtBool": ctypes.c_bool,
    "size_t": ctypes.c_size_t, "uintptr_t": ctypes.c_size_t, "mjtSize": ctypes.c_int64,
    "uint64_t": ctypes.c_uint64, "int64_t": ctypes.c_int64,
}


def _ctype(t):
    if isinstance(t, ast_nodes.PointerType):
        return ctypes.c_void_p
    if isinstance(t, ast_nodes.ArrayType):
        n = 1
        for e in t.extents:
            n *= e
        return _ctype(t.inner_type) * n
    if isinstance(t, ast_nodes.ValueType):
        if t.name in _SCALARS:
            return _SCALARS[t.name]
        return _struct(t.name)
    raise TypeError(f"unexpected field type {t}")


@functools.cache
def _struct(name: str) -> type[ctypes.Structure]:
    """A ctypes structure with the fields of MuJoCo's struct ``name``."""
    decl = structs.STRUCTS[name]
    return type(name, (ctypes.Structure,),
                {"_fields_": [(f.name, _ctype(f.type)) for f in decl.fields]})


def _read(address: int, ctype):
    return ctype.from_address(address).value


def _data_check(d: mujoco.MjData, offsets: dict[str, int]) -> set[str]:
    """The fields of ``d`` at ``offsets`` that agree with the bindings (pointers that are set
    and that the bindings show as a non-empty array, counters, time); empty if any disagrees.
    """
    base = d._address
    agreed = set()
    for f in structs.STRUCTS["mjData"].fields:
        if not isinstance(f.type, ast_nodes.PointerType):
            continue
        pointer = _read(base + offsets[f.name], ctypes.c_void_p)
        view = getattr(d, f.name, None)
        if f.name == "contact" and d.ncon:
            view = d.contact.dist
        if pointer is None or not isinstance(view, np.ndarray) or view.size == 0:
            continue  # unallocated (the bindings may still show an array) or not an array
        if pointer != view.ctypes.data:
            return set()
        agreed.add(f.name)
    for name in (*_COUNTERS, "time"):
        ctype = ctypes.c_double if name == "time" else ctypes.c_int
        if _read(base + offsets[name], ctype) != getattr(d, name):
            return set()
        agreed.add(name)
    return agreed


def _contact_check(offsets: dict[str, int], sparse: bool = False) -> bool:
    """On a sphere resting on a plane (one contact, a few constraint rows; with ``sparse``
    MuJoCo's sparse Jacobian): every field the kernel reads agrees with the bindings, and
    mjContact's fields sit where the bindings' strided contact views say."""
    jacobian = "sparse" if sparse else "dense"
    m = mujoco.MjModel.from_xml_string(
        f'<mujoco><option jacobian="{jacobian}"/><worldbody><geom type="plane" size="1 1 .1"/>'
        '<body pos="0 0 .09"><freejoint/><geom size=".1"/></body></worldbody></mujoco>')
    d = mujoco.MjData(m)
    d.time = 0.375
    mujoco.mj_forward(m, d)
    fields = {*_DATA_FIELDS, *(_SPARSE_FIELDS if sparse else ())}
    if d.ncon != 1 or not fields <= _data_check(d, offsets):
        return False
    contact = _struct("mjContact")
    base = d.contact.dist.ctypes.data
    for f in _CONTACT_FIELDS:
        view = getattr(d.contact, f)
        if (view.strides[0] != ctypes.sizeof(contact)
                or view.ctypes.data - base != getattr(contact, f).offset):
            return False
    return True


def data_layout(m: mujoco.MjModel) -> np.ndarray | None:
    """The offsets (int64, indexed by ``NCON``, ``NEFC``, ...) of the fields the horizon kernel
    reads, checked on data of ``m``; ``None`` if they cannot be trusted."""
    if structs is None:
        return None
    try:
        data = _struct("mjData")
        contact = _struct("mjContact")
    except (KeyError, TypeError):
        return None
    offsets = {f.name: getattr(data, f.name).offset for f in structs.STRUCTS["mjData"].fields}
    d = mujoco.MjData(m)
    if m.nkey:
        mujoco.mj_resetDataKeyframe(m, d, 0)
    d.time = 0.125
    mujoco.mj_forward(m, d)
    sparse = bool(mujoco.mj_isSparse(m))
    if not (_contact_check(offsets, sparse) and _data_check(d, offsets)):
        return None
    layout = [offsets[f] for f in _DATA_FIELDS]
    layout += [ctypes.sizeof(contact)] + [getattr(contact, f).offset for f in _CONTACT_FIELDS]
    layout += [offsets[f] for f in _SPARSE_FIELDS] + [int(sparse)]
    return np.array(layout, dtype=np.int64)
