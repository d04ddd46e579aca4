"""The libmujoco functions the WASP kernel calls, as numba first-class functions.

They travel to the kernel as arguments (numba's wrapper-address protocol) instead of being
baked in as addresses, so the compiled kernel is cached on disk and later processes skip the
compilation. The library is the one the ``mujoco`` bindings loaded (:mod:`mpc.mjc`), so model
and data pointers are compatible. Pointers are unsigned 64-bit integers (MuJoCo supports 64-bit
platforms only; numba's ``array.ctypes.data`` has that type, so model and data addresses are
passed as ``np.uint64`` too: first-class calls do not convert argument types).
"""

from __future__ import annotations

import ctypes

import numba.experimental.function_type  # noqa: F401  (registers typeof for the protocol)
from numba import types

from mpc import mjc


class CFunction(types.WrapperAddressProtocol):
    """A C function of libmujoco with its numba signature."""

    def __init__(self, name: str, signature):
        self.name = name
        self._address = ctypes.cast(getattr(mjc._lib, name), ctypes.c_void_p).value
        self._signature = signature

    def __wrapper_address__(self) -> int:
        return self._address

    def signature(self):
        return self._signature


_ptr = types.uint64
#: void mj_stepSkip(const mjModel* m, mjData* d, int skipstage, int skipsensor): exported by
#: libmujoco but not declared in mujoco.h; the step mjd_transitionFD takes for every nudge.
step_skip = CFunction("mj_stepSkip", types.void(_ptr, _ptr, types.int32, types.int32))
#: void mj_differentiatePos(const mjModel* m, mjtNum* qvel, mjtNum dt, qpos1, qpos2)
differentiate_pos = CFunction("mj_differentiatePos",
                              types.void(_ptr, _ptr, types.float64, _ptr, _ptr))
#: void mj_integratePos(const mjModel* m, mjtNum* qpos, const mjtNum* qvel, mjtNum dt)
integrate_pos = CFunction("mj_integratePos", types.void(_ptr, _ptr, _ptr, types.float64))
#: void mj_setState(const mjModel* m, mjData* d, const mjtNum* state, int sig)
set_state = CFunction("mj_setState", types.void(_ptr, _ptr, _ptr, types.int32))

#: A bundle to hand to the kernel in one argument.
FUNCTIONS = (step_skip, differentiate_pos, integrate_pos, set_state)
