"""A planner that publishes an open-loop task's reference as the policy.

For tasks whose motion is given rather than optimized (``open_loop``, e.g. the joint excitation
of :mod:`mpc.tasks.excitation`): each iteration publishes, from the measured state's time over
``horizon`` seconds at ``step`` intervals, the task's reference joint targets as u*(t) and as
the nominal joint angles and speeds of x*(t) (the base as measured), with zero feedback gains,
so the feedback law sends u*(t) interpolated in time. The iteration's cost is the task's at the
measured state (the tracking error).
"""

from __future__ import annotations

import time as _time

import mujoco
import numpy as np

from common.trajectory import ModelLayout
from mpc.planner.planner_base import PHASES, IterationStats, Planner
from mpc.planner.policy import Policy
from mpc.tasks.task_base import Task


class ScriptedPlanner(Planner):
    def __init__(self, task: Task, model: mujoco.MjModel, horizon: float = 0.5,
                 step: float = 0.002):
        if not hasattr(task, "reference"):
            raise ValueError(f"task {task.name} has no reference to publish")
        self.task = task
        self.model = model
        self.layout = ModelLayout.of(model)
        self.times = np.arange(0.0, horizon + step / 2, step)
        self.nominal = None
        self.iteration = 0
        self.data = mujoco.MjData(model)
        act = model.actuator_trnid[:, 0]
        self.qpos_adr, self.dof_adr = model.jnt_qposadr[act], model.jnt_dofadr[act]

    def reset(self, time, qpos, qvel, act) -> None:
        self.policy = self._policy(float(time), qpos, qvel, act)

    def iterate(self, time, qpos, qvel, act) -> IterationStats:
        tic = _time.perf_counter()
        self.iteration += 1
        stats = IterationStats(iteration=self.iteration, time=float(time), status="ok")
        self.policy = self._policy(float(time), qpos, qvel, act)
        d = self.data
        d.qpos[:], d.qvel[:], d.act[:] = qpos, qvel, act
        d.ctrl[:] = self.policy.ctrl[0]
        mujoco.mj_forward(self.model, d)
        stats.term_costs = self.task.term_costs(self.task.residual(d.sensordata,
                                                                   np.array(time)))
        stats.stage_cost = stats.cost = stats.cost_nominal = float(stats.term_costs.sum())
        stats.timings = dict.fromkeys(PHASES, 0.0)
        stats.timings["total"] = (_time.perf_counter() - tic) * 1e3
        return stats

    def _policy(self, time: float, qpos, qvel, act) -> Policy:
        times = time + self.times
        q, dq = self.task.reference(times)
        n = len(times)
        qpos_t = np.tile(np.asarray(qpos, float), (n, 1))
        qvel_t = np.tile(np.asarray(qvel, float), (n, 1))
        qpos_t[:, self.qpos_adr], qvel_t[:, self.dof_adr] = q, dq
        return Policy.build(self.layout, times, qpos_t, qvel_t,
                            np.tile(np.asarray(act, float), (n, 1)), q,
                            iteration=self.iteration)
