"""libmujoco entry points as first-class functions for numba kernels.

With ``MjModel._address`` and ``MjData._address`` as pointers, a whole rollout (policy,
``mj_step``, bookkeeping) runs in one compiled call that releases the GIL. The functions are
passed to kernels as arguments (numba's wrapper-address protocol) rather than referenced as
globals, so the kernels' machine code holds no addresses and can be cached on disk.

The library is the one the ``mujoco`` bindings loaded, so the pointers are compatible.
Pointer arguments are declared as 64-bit integers (``ndarray.ctypes.data`` is unsigned in numba):
MuJoCo supports 64-bit platforms only, where both travel in the same registers.
"""

from __future__ import annotations

import ctypes
import glob
import os

import mujoco
import numba.experimental.function_type  # noqa: F401  (registers typeof for the protocol)
from numba import types


def _load_library() -> ctypes.CDLL:
    folder = os.path.dirname(mujoco.__file__)
    candidates = sorted(glob.glob(os.path.join(folder, "libmujoco.so*")))
    candidates += sorted(glob.glob(os.path.join(folder, "libmujoco*.dylib")))
    candidates += sorted(glob.glob(os.path.join(folder, "mujoco*.dll")))
    if not candidates:
        raise ImportError(f"libmujoco not found next to the mujoco bindings in {folder}")
    return ctypes.CDLL(candidates[0])


_lib = _load_library()


class CFunction(types.WrapperAddressProtocol):
    """A C function of libmujoco with a numba signature."""

    def __init__(self, name: str, signature):
        self.name = name
        self._address = ctypes.cast(getattr(_lib, name), ctypes.c_void_p).value
        self._signature = signature

    def __wrapper_address__(self) -> int:
        return self._address

    def signature(self):
        return self._signature


_ptr = types.int64
# void mj_step(const mjModel* m, mjData* d)
mj_step = CFunction("mj_step", types.void(_ptr, _ptr))
# void mj_forward(const mjModel* m, mjData* d)
mj_forward = CFunction("mj_forward", types.void(_ptr, _ptr))
# void mj_setState(const mjModel* m, mjData* d, const mjtNum* state, int sig)
mj_set_state = CFunction("mj_setState", types.void(_ptr, _ptr, types.uint64, types.int32))

STATE_TIME = int(mujoco.mjtState.mjSTATE_TIME)
