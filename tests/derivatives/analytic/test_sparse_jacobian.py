"""MuJoCo's sparse constraint Jacobian (``planner.jacobian: sparse``): the analytic backend
scatters ``efc_J``'s nonzeros into dense rows (derivatives/analytic/horizon.py) and linearizes
such a model as its dense twin, without finite differences: A and B agree with the dense
model's to rounding and with centered differences of the sparse model itself."""

from __future__ import annotations

import warnings

import analytic_verify as verify
import hfield_models as hm
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


def test_a_switch_to_sparse_after_construction_is_followed_on_a_height_field():
    """The Go2's planning model on a height field (bumps, a slope, a step; the stairs configs'
    case): its provider made dense, then the model switched to sparse rows; the next
    linearizations read the sparse rows (the layout is made again) and stay exact."""
    m = hm.robot_model("go2")
    with warnings.catch_warnings():
        warnings.simplefilter("error", AnalyticFallbackWarning)
        provider = derivatives.make_provider("analytic", m, threads=1)
    states = [hm.robot_state(m, robots.info("go2").feet, seed) for seed in (0, 1)]
    m.opt.jacobian = mujoco.mjtJacobian.mjJAC_SPARSE  # the states were found on dense rows
    for d in states:
        mujoco.mj_forward(m, d)
        assert d.nJ < d.nefc * m.nv
        before = derivatives.fd_evaluations()
        A, B = provider.transition(d)
        assert derivatives.fd_evaluations() == before and not provider.fallback
        A_ref, B_ref = verify.centered_fd(m, d, 1e-7)
        errors = verify.relative_error(A, A_ref), verify.relative_error(B, B_ref)
        assert max(errors) < 1e-6, errors
