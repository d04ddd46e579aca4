"""Compiled rollouts against a plain Python loop over mujoco.mj_step."""

import mujoco
import numpy as np

from common.trajectory import ModelLayout
from mpc.planner.policy import Policy
from mpc.planner.rollout import RolloutPool


def test_rollout_reproduces_python_stepping(a1_task, rng):
    _task, model = a1_task
    lay = ModelLayout.of(model)
    d = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, d, 0)
    T = 12
    ctrl = model.key_ctrl[0] + 0.2 * rng.standard_normal((T, model.nu))
    policy = Policy.build(lay, 0.3 + 0.01 * np.arange(T), np.repeat(d.qpos[None], T, 0),
                          np.zeros((T, model.nv)), np.zeros((T, 0)), ctrl)
    pool = RolloutPool(model, T, 3, threads=2)
    batch = pool.run(0.3, d.qpos, d.qvel, d.act, 0.01, policy, [0, 0, 0], [0, 0, 0])
    pool.close()
    ref = mujoco.MjData(model)
    ref.qpos[:], ref.time = d.qpos, 0.3
    for t in range(T):
        np.testing.assert_array_equal(batch.qpos[0, t], ref.qpos)
        ref.ctrl[:] = np.clip(ctrl[t], lay.ctrl_lo, lay.ctrl_hi)
        if t < T - 1:
            mujoco.mj_step(model, ref)
        else:
            mujoco.mj_forward(model, ref)
        np.testing.assert_array_equal(batch.sensordata[0, t], ref.sensordata)
    assert np.all(batch.status == 0)
    # the three identical candidates, on two threads, agree exactly
    np.testing.assert_array_equal(batch.qpos[0], batch.qpos[2])


def test_diverging_rollout_is_flagged(a1_task):
    _, model = a1_task
    lay = ModelLayout.of(model)
    d = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, d, 0)
    d.qvel[:] = 1e6  # far beyond max_speed
    policy = Policy.hold(lay, 0.0, d.qpos, d.qvel, d.act, model.key_ctrl[0])
    pool = RolloutPool(model, 5, 1, threads=1, max_speed=100.0)
    batch = pool.run(0.0, d.qpos, d.qvel, d.act, 0.01, policy, [0.0], [0.0])
    assert batch.status[0] != 0
