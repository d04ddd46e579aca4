"""MuJoCo's sparse constraint Jacobian (``planner.jacobian: sparse``): the analytic backend
scatters ``efc_J``'s nonzeros into dense rows (derivatives/analytic/horizon.py) and linearizes
such a model as its dense twin, without finite differences: A and B agree with the dense
model's to rounding and with centered differences of the sparse model itself."""

from __future__ import annotations

import warnings

import analytic_verify as verify
import mujoco
from analytic_oracles import analytic_vs_oracle

import derivatives
import robots
from derivatives.analytic import AnalyticFallbackWarning
from derivatives.analytic.layout import SPARSE, data_layout
from mpc.tasks import make_task
from tests.conftest import trotting_data


def twins() -> tuple[mujoco.MjModel, mujoco.MjModel]:
    task = make_task("quadruped_flat", robots.info("a1"), goal=[2.0, 0.0])
    return task.planning_model(0.01, jacobian="dense"), task.planning_model(0.01,
                                                                             jacobian="sparse")


def test_the_layout_says_which_jacobian_a_model_has():
    dense, sparse = twins()
    assert not mujoco.mj_isSparse(dense) and mujoco.mj_isSparse(sparse)
    assert data_layout(dense)[SPARSE] == 0 and data_layout(sparse)[SPARSE] == 1


def test_a_sparse_model_is_linearized_as_its_dense_twin(rng):
    dense, sparse = twins()
    with warnings.catch_warnings():
        warnings.simplefilter("error", AnalyticFallbackWarning)
        providers = [derivatives.make_provider("analytic", m, threads=1)
                     for m in (dense, sparse)]
    for _ in range(4):
        d = trotting_data(dense, rng)
        ds = mujoco.MjData(sparse)
        ds.time, ds.qpos[:], ds.qvel[:], ds.ctrl[:] = d.time, d.qpos, d.qvel, d.ctrl
        ds.qacc_warmstart[:] = d.qacc_warmstart
        for m, data in ((dense, d), (sparse, ds)):
            verify.settle_solver(m, data)
        assert ds.nefc > 0 and ds.nJ < ds.nefc * sparse.nv  # contacts, and rows kept sparse
        before = derivatives.fd_evaluations()
        (A, B), (As, Bs) = (p.transition(x) for p, x in zip(providers, (d, ds), strict=True))
        assert derivatives.fd_evaluations() == before
        assert verify.relative_error(As, A) < 1e-9 and verify.relative_error(Bs, B) < 1e-9
        errors = analytic_vs_oracle(sparse, ds, 1e-6)
        assert max(errors) < 1e-5, errors
