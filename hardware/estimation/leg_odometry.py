"""Base state from the robot's own sensors: IMU orientation and gyro, stance-leg kinematics.

For flat ground and no external positioning:

- orientation: the IMU quaternion (w, x, y, z), its initial yaw removed so the world frame is
  the robot's starting heading (``zero_yaw``); angular velocity: the gyro (body frame);
- stance feet: the feet lowest in the world-aligned base frame (within ``stance_band`` of the
  lowest one), which needs no foot force sensor (Go2's and H1's are not reliable);
- base linear velocity (world): minus the mean world velocity of the stance feet relative to
  the base (J_foot qvel with the base translation held still), low-pass filtered;
- base height: ``foot_height`` (a stance foot's site above the ground: by default the foot
  radius; MuJoCo's soft contact lets the fake robots' feet sink ~1.7 cm) plus the mean depth of
  the stance feet below the base;
- horizontal position: the integrated velocity, starting at ``initial_xy`` (drifts, as all
  odometry does).
"""

from __future__ import annotations

import math
from typing import ClassVar

import mujoco
import numpy as np

from hardware.estimation.base_state import BaseState, BaseStateSource, ImuSample
from hardware.rotations import euler_zyx, quat_mul
from robots.info import RobotInfo


class LegOdometry(BaseStateSource):
    #: Bounds of the options, read by mpc.app.schema.check_kwargs (see mpc/app/schema.py).
    RANGES: ClassVar[dict[str, dict[str, float]]] = {
        "stance_band": {"gt": 0.0, "max": 0.5},
        "velocity_filter": {"gt": 0.0, "max": 1.0},
        "initial_xy": {"min": -1000.0, "max": 1000.0},
        "foot_height": {"min": -1.0, "max": 1.0},
    }

    def __init__(self, model: mujoco.MjModel, robot: RobotInfo, stance_band: float = 0.02,
                 velocity_filter: float = 0.3, zero_yaw: bool = True,
                 initial_xy: list[float] | None = None, foot_height: float | None = None):
        if not 0.0 < velocity_filter <= 1.0:
            raise ValueError(f"velocity_filter must be in (0, 1], got {velocity_filter}")
        self.model = model
        self.data = mujoco.MjData(model)
        self.band = float(stance_band)
        self.alpha = float(velocity_filter)
        self.zero_yaw = zero_yaw
        self.foot_height = robot.foot_radius if foot_height is None else float(foot_height)
        self.sites = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, f) for f in robot.feet]
        if min(self.sites) < 0:
            raise ValueError(f"{robot.name}: planning model lacks foot sites {robot.feet}")
        jnt = model.actuator_trnid[:, 0]
        self.qadr = model.jnt_qposadr[jnt]
        self.vadr = model.jnt_dofadr[jnt]
        self.jac = np.zeros((3, model.nv))
        self.yaw0: float | None = None
        self.pos = np.array([*(initial_xy or (0.0, 0.0)), 0.0])
        self.vel = np.zeros(3)
        self.time: float | None = None
        self.last: BaseState | None = None
        self.stance = np.zeros(len(self.sites), bool)

    def update(self, imu: ImuSample, joint_q: np.ndarray, joint_dq: np.ndarray) -> None:
        quat = np.asarray(imu.quat, dtype=float)
        quat = quat / np.linalg.norm(quat)
        if self.zero_yaw:
            if self.yaw0 is None:
                self.yaw0 = euler_zyx(quat)[2]
            h = -0.5 * self.yaw0
            quat = quat_mul(np.array([math.cos(h), 0.0, 0.0, math.sin(h)]), quat)
        m, d = self.model, self.data
        d.qpos[:] = 0.0
        d.qpos[3:7] = quat
        d.qpos[self.qadr] = joint_q
        d.qvel[:] = 0.0
        d.qvel[3:6] = imu.gyro
        d.qvel[self.vadr] = joint_dq
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        feet = d.site_xpos[self.sites]
        self.stance = feet[:, 2] <= feet[:, 2].min() + self.band
        vel = np.zeros(3)
        for s in np.flatnonzero(self.stance):
            mujoco.mj_jacSite(m, d, self.jac, None, self.sites[s])
            vel -= self.jac @ d.qvel
        vel /= self.stance.sum()
        self.vel = (1.0 - self.alpha) * self.vel + self.alpha * vel
        if self.time is not None:
            self.pos[:2] += self.vel[:2] * (imu.time - self.time)
        self.time = imu.time
        self.pos[2] = self.foot_height - feet[self.stance, 2].mean()
        self.last = BaseState(imu.time, self.pos.copy(), quat, self.vel.copy(),
                              np.asarray(imu.gyro, dtype=float).copy())

    def estimate(self) -> BaseState | None:
        return self.last

    def health(self) -> dict[str, float]:
        return {"stance_feet": float(self.stance.sum())}
