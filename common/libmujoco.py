"""libmujoco functions for numba kernels.

With ``MjModel._address`` and ``MjData._address`` as pointers, a whole rollout (policy,
``mj_step``, bookkeeping) runs in one compiled call that releases the GIL. Kernels receive the
functions' addresses as plain integer arguments and call them with :func:`call_void`, so their
machine code holds no addresses (it is cached on disk) and calling a kernel costs no more than
typing a few integers.

The library is the one the ``mujoco`` bindings loaded, so the pointers are compatible.
Pointers travel as 64-bit integers: MuJoCo supports 64-bit platforms only, where both are
passed in the same registers.
"""

from __future__ import annotations

import ctypes
import glob
import os

import mujoco
from llvmlite import ir
from numba import types
from numba.extending import intrinsic


def _load_library() -> ctypes.CDLL:
    folder = os.path.dirname(mujoco.__file__)
    candidates = sorted(glob.glob(os.path.join(folder, "libmujoco.so*")))
    candidates += sorted(glob.glob(os.path.join(folder, "libmujoco*.dylib")))
    candidates += sorted(glob.glob(os.path.join(folder, "mujoco*.dll")))
    if not candidates:
        raise ImportError(f"libmujoco not found next to the mujoco bindings in {folder}")
    return ctypes.CDLL(candidates[0])


_lib = _load_library()


def address(name: str) -> int:
    """Address of the libmujoco function ``name``."""
    return ctypes.cast(getattr(_lib, name), ctypes.c_void_p).value


@intrinsic
def call_void(typingctx, function, *args):
    """``call_void(address, *args)`` in a numba kernel calls the C function at ``address``
    with ``args`` (integers for pointers, floats for doubles, np.int32 for ints); the C
    function returns nothing."""
    argtypes = args[0] if len(args) == 1 and isinstance(args[0], types.BaseTuple) else args
    sig = types.void(function, types.StarArgTuple.from_types(tuple(argtypes)))

    def codegen(context, builder, signature, llargs):
        pointer, packed = llargs
        values = [builder.extract_value(packed, i) for i in range(len(argtypes))]
        fnty = ir.FunctionType(ir.VoidType(), [v.type for v in values])
        builder.call(builder.inttoptr(pointer, fnty.as_pointer()), values)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def call_int(typingctx, function, *args):
    """``call_int(address, *args)`` in a numba kernel calls the C function at ``address`` with
    ``args`` (as :func:`call_void`); the C function returns an ``int`` (np.int32)."""
    argtypes = args[0] if len(args) == 1 and isinstance(args[0], types.BaseTuple) else args
    sig = types.int32(function, types.StarArgTuple.from_types(tuple(argtypes)))

    def codegen(context, builder, signature, llargs):
        pointer, packed = llargs
        values = [builder.extract_value(packed, i) for i in range(len(argtypes))]
        fnty = ir.FunctionType(ir.IntType(32), [v.type for v in values])
        return builder.call(builder.inttoptr(pointer, fnty.as_pointer()), values)

    return sig, codegen


@intrinsic
def pointer(typingctx, address):
    """``pointer(address)`` in a numba kernel is the integer ``address`` as a ``void*``, for
    ``numba.carray(pointer(address), shape, dtype)``: an array over memory that libmujoco
    owns (arrays whose address changes from one forward pass to the next, such as
    ``mjData.efc_J``)."""
    if not isinstance(address, types.Integer):
        return None

    def codegen(context, builder, signature, llargs):
        return builder.inttoptr(llargs[0], ir.IntType(8).as_pointer())

    return types.voidptr(address), codegen


#: void mj_step(const mjModel* m, mjData* d)
MJ_STEP = address("mj_step")
#: void mj_forward(const mjModel* m, mjData* d)
MJ_FORWARD = address("mj_forward")
#: void mj_setState(const mjModel* m, mjData* d, const mjtNum* state, int sig)
MJ_SET_STATE = address("mj_setState")
#: void mj_stepSkip(const mjModel* m, mjData* d, int skipstage, int skipsensor): exported by
#: libmujoco but not declared in mujoco.h; the step mjd_transitionFD takes for every nudge.
MJ_STEP_SKIP = address("mj_stepSkip")
#: void mj_differentiatePos(const mjModel* m, mjtNum* qvel, mjtNum dt, const mjtNum* qpos1,
#:                          const mjtNum* qpos2)
MJ_DIFFERENTIATE_POS = address("mj_differentiatePos")
#: void mj_integratePos(const mjModel* m, mjtNum* qpos, const mjtNum* qvel, mjtNum dt)
MJ_INTEGRATE_POS = address("mj_integratePos")
STATE_TIME = int(mujoco.mjtState.mjSTATE_TIME)
#: void mj_getState(const mjModel* m, const mjData* d, mjtNum* state, int sig)
MJ_GETSTATE = address("mj_getState")
#: void mj_setState(const mjModel* m, mjData* d, const mjtNum* state, int sig)
MJ_SETSTATE = address("mj_setState")
