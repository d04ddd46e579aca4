"""The libmujoco functions the WASP kernel calls, as numba first-class functions.

They travel to the kernel as arguments (:class:`mpc.mjc.CFunction`, numba's wrapper-address
protocol) instead of being baked in as addresses, so the compiled kernel is cached on disk and
later processes skip the compilation. Every pointer here, model and data included, is an
unsigned 64-bit integer: ``ndarray.ctypes.data`` has that type in numba and first-class calls
do not convert argument types, so the provider passes ``np.uint64`` addresses.
"""

from __future__ import annotations

from numba import types

from mpc.mjc import CFunction

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

#: The bundle the kernel takes as its first argument.
FUNCTIONS = (step_skip, differentiate_pos, integrate_pos, set_state)
