"""Batches of closed-loop rollouts, spread over threads (one MjData per thread)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import mujoco
import numpy as np

from common import libmujoco as mjc
from common.handover import new_progress
from common.trajectory import ModelLayout, TrajectoryBatch
from mpc.planner.kernels.rollout import rollout
from mpc.planner.policy import Policy


class RolloutPool:
    """Rolls a policy out from one initial state under several (feedforward, feedback) scalings.

    The kernel releases the GIL, so the threads run in parallel; the calling thread rolls out
    the first share itself (``threads − 1`` helpers), which saves waking a thread and waiting
    for it on a loaded machine.
    """

    def __init__(self, model: mujoco.MjModel, horizon: int, capacity: int, threads: int = 1,
                 max_speed: float = 1e3):
        self.model = model
        self.layout = ModelLayout.of(model)
        self.horizon = horizon
        self.max_speed = float(max_speed)
        self.datas = [mujoco.MjData(model) for _ in range(max(1, threads))]
        self.batch = TrajectoryBatch.allocate(self.layout, capacity, horizon)
        self._scratch = [new_progress() for _ in self.datas]
        helpers = len(self.datas) - 1
        self._executor = ThreadPoolExecutor(helpers) if helpers > 0 else None

    @property
    def executor(self) -> ThreadPoolExecutor | None:
        """The helper threads' executor (None with one thread), idle between :meth:`run`
        calls: the planner lends it other work of its own."""
        return self._executor

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)

    def run(self, time: float, qpos, qvel, act, dt: float, policy: Policy,
            ff_scales, fb_scales, progress: np.ndarray | None = None) -> TrajectoryBatch:
        """Roll out ``len(ff_scales)`` candidates; returns a view of the first rows. A single
        candidate publishes its knots to ``progress`` as it records them (see
        :mod:`common.handover`)."""
        n = len(ff_scales)
        if n > len(self.batch):
            raise ValueError(f"{n} rollouts requested, capacity {len(self.batch)}")
        ff = np.asarray(ff_scales, dtype=float)
        fb = np.asarray(fb_scales, dtype=float)
        args = (float(time), np.asarray(qpos, float), np.asarray(qvel, float),
                np.asarray(act, float), float(dt), policy, ff, fb)
        workers = len(self.datas)
        if self._executor is None or n == 1:
            self._work(0, 1, n, *args, progress if n == 1 else None)
        else:
            jobs = [self._executor.submit(self._work, w, workers, n, *args)
                    for w in range(1, min(workers, n))]
            self._work(0, workers, n, *args)
            for job in jobs:
                job.result()
        b = self.batch
        return TrajectoryBatch(b.time[:n], b.qpos[:n], b.qvel[:n], b.act[:n], b.ctrl[:n],
                               b.sensordata[:n], b.warmstart[:n], b.status[:n])

    def _work(self, worker: int, stride: int, n: int, time, qpos, qvel, act, dt,
              policy: Policy, ff, fb, progress: np.ndarray | None = None) -> None:
        d = self.datas[worker]
        if progress is None:  # nobody listens: the worker's own counters
            progress = self._scratch[worker]
        lay, b = self.layout, self.batch
        for i in range(worker, n, stride):
            b.status[i] = rollout(
                mjc.MJ_STEP, mjc.MJ_FORWARD, mjc.MJ_SET_STATE,
                self.model._address, d._address, d.qpos, d.qvel, d.act, d.ctrl, d.sensordata,
                d.qacc_warmstart, d.warning.number, lay.jnt_type, lay.jnt_qposadr,
                lay.jnt_dofadr, lay.ctrl_lo, lay.ctrl_hi, self.max_speed, time, qpos, qvel, act, dt,
                policy.times, policy.qpos, policy.qvel, policy.act, policy.ctrl,
                policy.feedforward, policy.gains, ff[i], fb[i],
                b.time[i], b.qpos[i], b.qvel[i], b.act[i], b.ctrl[i], b.sensordata[i],
                b.warmstart[i], progress,
            )
