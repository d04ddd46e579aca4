"""ctypes entry points into libmujoco for numba kernels.

numba can call a ctypes function from compiled code; with ``MjModel._address`` and
``MjData._address`` as pointers, a whole rollout (policy, ``mj_step``, bookkeeping) runs in one
compiled call that releases the GIL. The library is the one the ``mujoco`` bindings loaded, so
the pointers are compatible. Kernels that use these functions cannot be cached on disk (the
function addresses are baked into the machine code).
"""

from __future__ import annotations

import ctypes
import glob
import os

import mujoco


def _load_library() -> ctypes.CDLL:
    folder = os.path.dirname(mujoco.__file__)
    candidates = sorted(glob.glob(os.path.join(folder, "libmujoco.so*")))
    candidates += sorted(glob.glob(os.path.join(folder, "libmujoco*.dylib")))
    candidates += sorted(glob.glob(os.path.join(folder, "mujoco*.dll")))
    if not candidates:
        raise ImportError(f"libmujoco not found next to the mujoco bindings in {folder}")
    return ctypes.CDLL(candidates[0])


_lib = _load_library()
_ptr = ctypes.c_void_p


def _declare(name: str, argtypes: list, restype=None):
    fn = getattr(_lib, name)
    fn.argtypes = argtypes
    fn.restype = restype
    return fn


# void mj_step(const mjModel* m, mjData* d)
mj_step = _declare("mj_step", [_ptr, _ptr])
# void mj_forward(const mjModel* m, mjData* d)
mj_forward = _declare("mj_forward", [_ptr, _ptr])
# void mj_setState(const mjModel* m, mjData* d, const mjtNum* state, int sig)
mj_setState = _declare("mj_setState", [_ptr, _ptr, _ptr, ctypes.c_int])

STATE_TIME = int(mujoco.mjtState.mjSTATE_TIME)
