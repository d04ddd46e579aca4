"""Base state from the robot's own sensors: IMU orientation and gyro, stance-leg kinematics.

Without external positioning, on the level floor (``ground: level``, the default) or on any
ground (``ground: carried``: ramps, steps):

- orientation: the IMU quaternion (w, x, y, z), its initial yaw removed so the world frame is
  the robot's starting heading (``zero_yaw``); angular velocity: the gyro (body frame);
- stance feet: the feet lowest in the world-aligned base frame (within ``stance_band`` of the
  lowest one; ``carried``: heights taken along the vertical less the slope of the ground
  under the feet, :class:`mpc.tasks.ground.GroundFit`), which needs no foot force sensor
  (Go2's and H1's are not reliable);
- base linear velocity (world): minus the mean world velocity of the stance feet relative to
  the base (J_foot qvel with the base translation held still), low-pass filtered;
- base height: ``level``: ``foot_height`` (a stance foot's site above the ground: by default
  the foot radius; MuJoCo's soft contact lets the fake robots' feet sink ~1.7 cm) plus the
  mean depth of the stance feet below the base. ``carried``: carried by the footholds: a foot
  that lands is anchored where the legs put it (base height plus its offset k_z), and the base
  stands at the mean over the stance feet of anchor − k_z; at the start the feet touch the
  ground at ``foot_height``;
- horizontal position: the integrated velocity, starting at ``initial_xy`` (drifts, as all
  odometry does).
"""

from __future__ import annotations

import math
from typing import ClassVar

import mujoco
import numpy as np

from hardware.estimation.base_state import GROUNDS, BaseState, BaseStateSource, ImuSample
from hardware.rotations import euler_zyx, quat_mul
from mpc.tasks.ground import GroundFit
from robots.info import RobotInfo


class LegOdometry(BaseStateSource):
    #: Bounds of the options, read by mpc.app.schema.check_kwargs (see mpc/app/schema.py).
    RANGES: ClassVar[dict[str, dict]] = {
        "stance_band": {"gt": 0.0, "max": 0.5},
        "velocity_filter": {"gt": 0.0, "max": 1.0},
        "initial_xy": {"min": -1000.0, "max": 1000.0},
        "foot_height": {"min": -1.0, "max": 1.0},
        "ground": {"choices": GROUNDS},
    }

    def __init__(self, model: mujoco.MjModel, robot: RobotInfo, stance_band: float = 0.02,
                 velocity_filter: float = 0.3, zero_yaw: bool = True,
                 initial_xy: list[float] | None = None, foot_height: float | None = None,
                 ground: str = "level"):
        if ground not in GROUNDS:
            raise ValueError(f"unknown ground {ground!r}; choose from {', '.join(GROUNDS)}")
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
        #: Height (world) of each stance foot's site where it landed; NaN: not standing.
        self.anchor = np.full(len(self.sites), np.nan)
        #: ``ground: carried``: the plane under the standing feet; None on the level floor.
        self.ground = None if ground == "level" else GroundFit(len(self.sites))

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
        up = feet[:, 2]
        if self.ground is not None:  # level with the others along the ground?
            up = up - feet[:, 0:2] @ self.ground.plane.slope
        self.stance = up <= up.min() + self.band
        vel = np.zeros(3)
        for s in np.flatnonzero(self.stance):
            mujoco.mj_jacSite(m, d, self.jac, None, self.sites[s])
            vel -= self.jac @ d.qvel
        vel /= self.stance.sum()
        self.vel = (1.0 - self.alpha) * self.vel + self.alpha * vel
        if self.time is not None:
            self.pos[:2] += self.vel[:2] * (imu.time - self.time)
        self.time = imu.time
        if self.ground is None:
            self.pos[2] = self.foot_height - feet[self.stance, 2].mean()
        else:
            self._carry_height(feet, self.ground)
        self.last = BaseState(imu.time, self.pos.copy(), quat, self.vel.copy(),
                              np.asarray(imu.gyro, dtype=float).copy())

    def _carry_height(self, feet: np.ndarray, ground: GroundFit) -> None:
        """``ground: carried``: the base height from the anchored footholds (the module
        docstring), ``feet`` the foot sites relative to the base (world axes); ``ground``
        refitted to the standing feet."""
        if np.isnan(self.anchor).all():  # the start: the feet touch the ground
            self.pos[2] = self.foot_height - feet[self.stance, 2].mean()
        # a foot that lands is anchored where the legs put it from the base ...
        landed = self.stance & np.isnan(self.anchor)
        self.anchor[landed] = self.pos[2] + feet[landed, 2]
        self.anchor[~self.stance] = np.nan
        # ... and the standing feet hold the base
        self.pos[2] = float(np.mean(self.anchor[self.stance] - feet[self.stance, 2]))
        ground.observe(feet + self.pos, self.stance)

    def estimate(self) -> BaseState | None:
        return self.last

    def health(self) -> dict[str, float]:
        return {"stance_feet": float(self.stance.sum())}
