"""The libmujoco functions the WASP kernel calls, by address (see :mod:`common.libmujoco`).

They travel to the kernel as one tuple argument and are called with
:func:`common.libmujoco.call_void`, so the compiled kernel holds no address and is cached on
disk.
"""

from __future__ import annotations

from common import libmujoco as mjc

#: (mj_stepSkip, mj_differentiatePos, mj_integratePos, mj_setState): the first argument of
#: :func:`derivatives.wasp.kernel.linearize_knots`.
FUNCTIONS = (mjc.MJ_STEP_SKIP, mjc.MJ_DIFFERENTIATE_POS, mjc.MJ_INTEGRATE_POS, mjc.MJ_SET_STATE)
