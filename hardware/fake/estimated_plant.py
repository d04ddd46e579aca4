"""``plant.type: sim_estimated``: the MuJoCo simulation, seen only through the robot's sensors.

Every simulation step the robot's sensors (:mod:`hardware.fake.sensors`, seeded: deterministic in
lockstep) sample the true state: IMU quaternion, gyro and accelerometer (specific force of the
base body), joint encoders and speeds, foot forces; the configured base-state source
(``base_state``, the hardware configs' own estimator by default) is fed exactly as a hardware
bridge feeds it. :meth:`read_state` reports the estimated base and the encoders' joints, so a
closed-loop run shows what estimation costs; :meth:`true_state` keeps the truth for comparison.
"""

from __future__ import annotations

import mujoco
import numpy as np

import robots
from hardware.estimation.base_state import BaseStateSource, ImuSample
from hardware.estimation.sources import check_spec, make_source
from hardware.fake.robot import default_sensors
from hardware.fake.sensors import SensorModel
from mpc.app.plants.plant_base import PlantState
from mpc.app.plants.sim_plant import SimPlant
from mpc.app.plants.terrain import TerrainSpec
from robots.info import RobotInfo


class EstimatedSimPlant(SimPlant):
    """A :class:`SimPlant` whose base state comes from an estimator on noisy sensors."""

    @staticmethod
    def check_options(robot: str, options: dict) -> None:
        SimPlant.check_options(robot, options)
        check_spec(options.get("base_state"))
        default_sensors(robot, options.get("sensors"))

    def __init__(self, robot: RobotInfo, seed: int = 0, timestep: float = 0.002,
                 init_noise: float = 0.0, keyframe: str = "home",
                 base_state: dict | None = None, sensors: dict | None = None,
                 terrain: TerrainSpec = None, overlay: robots.Overlay | None = None):
        super().__init__(robot, seed=seed, timestep=timestep, init_noise=init_noise,
                         keyframe=keyframe, terrain=terrain, overlay=overlay)
        m = self.model
        self.planning = robots.load_planning_model(robot.name)
        self.source: BaseStateSource = make_source(base_state or {"type": "kalman"},
                                                   self.planning, robot)
        # The planning model's actuated joints, by name, in the full simulation.
        joints = [m.joint(self.planning.joint(j).name) for j in self.planning.actuator_trnid[:, 0]]
        self._q = np.array([j.qposadr[0] for j in joints])
        self._dq = np.array([j.dofadr[0] for j in joints])
        self._foot_of_body = np.full(m.nbody, -1)
        self._foot_of_body[self._foot_bodies] = np.arange(len(self._foot_bodies))
        self.sensors = SensorModel(default_sensors(robot.name, sensors), self.timestep,
                                   len(robot.feet), seed + 7919)
        self._v_prev: np.ndarray | None = None
        self._wrench = np.zeros(6)
        self._estimate = None
        self._sense()

    def _foot_forces(self) -> np.ndarray:
        m, d = self.model, self.data
        out = np.zeros(len(self._foot_bodies))
        if d.ncon == 0:
            return out
        feet = self._foot_of_body[m.geom_bodyid[d.contact.geom]]
        contact, side = np.nonzero(feet >= 0)
        for i, foot in zip(contact.tolist(), feet[contact, side].tolist(), strict=True):
            mujoco.mj_contactForce(m, d, i, self._wrench)
            out[foot] += abs(self._wrench[0])
        return out

    def _sense(self) -> None:
        """Sample the sensors and feed the estimator (lock held by the caller or unshared)."""
        m, d = self.model, self.data
        # Specific force at the base origin in body axes, what an accelerometer there reads:
        # f = R^T (a - g), a the world acceleration of the free joint's origin over the step.
        a = (d.qvel[0:3] - self._v_prev) / self.timestep if self._v_prev is not None else 0.0
        self._v_prev = d.qvel[0:3].copy()
        rot = np.empty(9)
        mujoco.mju_quat2Mat(rot, d.qpos[3:7])
        accel = rot.reshape(3, 3).T @ (a - m.opt.gravity)
        r = self.sensors.measure(d.time, d.qpos[3:7], d.qvel[3:6], accel,
                                 d.qpos[self._q], d.qvel[self._dq], self._foot_forces())
        self.source.observe_feet(r.foot_force)
        self.source.update(ImuSample(r.time, r.quat, r.gyro, r.accel), r.q, r.dq)
        self._reading = r
        self._estimate = self.source.estimate()

    def step(self) -> None:
        super().step()
        with self.lock:
            self._sense()

    def read_state(self) -> PlantState:
        with self.lock:
            est, r = self._estimate, self._reading
            d = self.data
            qpos = np.zeros(self.planning.nq)
            qvel = np.zeros(self.planning.nv)
            qpos[0:3], qpos[3:7] = est.pos, est.quat
            qvel[0:3], qvel[3:6] = est.linvel, est.angvel
            pj = self.planning.actuator_trnid[:, 0]
            qpos[self.planning.jnt_qposadr[pj]] = r.q
            qvel[self.planning.jnt_dofadr[pj]] = r.dq
            return PlantState(d.time, qpos, qvel, np.zeros(self.planning.na))

    def set_planned_stance(self, stance: np.ndarray | None) -> None:
        self.source.set_planned_stance(stance)

    def true_state(self) -> PlantState:
        """The simulation's state (planning-model layout), for comparing with the estimate."""
        return super().read_state()

    def close(self) -> None:
        self.source.close()
