"""Knots handed from a compiled producer to compiled consumers on other threads.

The planner's nominal rollout records a trajectory knot by knot; the derivative kernels can
linearize knot t as soon as it is recorded, so on two cores the derivatives cost little more
than the rollout itself. The two sides share one ``progress`` array of two int64 counters:

    progress[READY]    knots recorded so far (the producer stores t + 1 after knot t;
                       STOPPED if it ended early: the trajectory is discarded, and
                       consumers stop, even before knots that were recorded)
    progress[CLAIMED]  entries of the consumers' knot list handed out so far

Consumers take list entries with an atomic fetch-and-add on CLAIMED (each entry goes to
exactly one thread, the next free thread takes the next one) and wait for READY to pass the
knot. The producer's store releases and the consumers' load acquires, so a consumer that sees
READY > t also sees everything the producer wrote for knot t. Waiting yields the core
(``sched_yield``), so a consumer that waits does not take CPU time from the producer on a busy
machine.
"""

from __future__ import annotations

import ctypes

import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from common.libmujoco import call_void

READY, CLAIMED = 0, 1
#: progress[READY] of a producer that ended before recording every knot.
STOPPED = -1

#: int sched_yield(void) of the C library (its result is of no use here).
SCHED_YIELD = ctypes.cast(ctypes.CDLL(None).sched_yield, ctypes.c_void_p).value


def new_progress(ready: int = 0) -> np.ndarray:
    """A progress array with ``ready`` knots recorded and nothing claimed."""
    return np.array([ready, 0], dtype=np.int64)


def _counter(context, builder, signature, args):
    """Pointer to the int64 ``array[index]`` of an intrinsic's first two arguments."""
    aryty, idxty = signature.args[0], signature.args[1]
    ary = context.make_array(aryty)(context, builder, args[0])
    index = context.cast(builder, args[1], idxty, types.intp)
    return cgutils.get_item_pointer(context, builder, aryty, ary, [index])


def _is_counter(array, index) -> bool:
    return (isinstance(array, types.Array) and array.dtype == types.int64 and array.ndim == 1
            and isinstance(index, types.Integer))


@intrinsic
def load_acquire(typingctx, array, index):
    """``array[index]`` (int64), read with acquire ordering."""
    if not _is_counter(array, index):
        return None

    def codegen(context, builder, signature, args):
        return builder.load_atomic(_counter(context, builder, signature, args), "acquire", 8)

    return types.int64(array, index), codegen


@intrinsic
def store_release(typingctx, array, index, value):
    """``array[index] = value`` (int64), written with release ordering."""
    if not (_is_counter(array, index) and isinstance(value, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        v = context.cast(builder, args[2], signature.args[2], types.int64)
        builder.store_atomic(v, _counter(context, builder, signature, args), "release", 8)
        return context.get_dummy_value()

    return types.void(array, index, value), codegen


@intrinsic
def fetch_add(typingctx, array, index, value):
    """Atomically add ``value`` to ``array[index]`` (int64); returns the value before."""
    if not (_is_counter(array, index) and isinstance(value, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        v = context.cast(builder, args[2], signature.args[2], types.int64)
        ptr = _counter(context, builder, signature, args)
        return builder.atomic_rmw("add", ptr, v, "acq_rel")

    return types.int64(array, index, value), codegen


@njit(cache=True, nogil=True)
def publish(progress, ready):
    """The producer: ``ready`` knots are recorded (or STOPPED)."""
    store_release(progress, READY, ready)


@njit(cache=True, nogil=True)
def claim(progress):
    """A consumer: the next entry of the knot list, handed to this thread alone."""
    return fetch_add(progress, CLAIMED, 1)


@njit(cache=True, nogil=True)
def wait_for(sched_yield, progress, knot):
    """A consumer: wait until knot ``knot`` is recorded; False if the producer stopped
    before it. ``sched_yield``: the address :data:`SCHED_YIELD`."""
    while True:
        ready = load_acquire(progress, READY)
        if ready > knot:
            return True
        if ready == STOPPED:
            return False
        call_void(sched_yield)
