"""Base state from the IMU and the stance legs: a linear Kalman filter in the world frame (the
structure of the MIT Cheetah / legged_control estimator), with a contact belief per foot.

Orientation R and body angular velocity come from the IMU (its quaternion, initial yaw
removed so the world frame is the robot's starting heading, and its gyro). The filter
estimates the rest.

State (n feet):  x = [p, v, p_1 .. p_n] in R^(6+3n): base position and world velocity, the
feet's world positions.

Process, over the IMU period dt, driven by the accelerometer's specific force f:
    p <- p + v dt + a dt^2/2,   v <- v + a dt,   a = R f + g
    p_i <- p_i + w_i
with covariance Q: accel_noise^2 dt on v (accelerometer noise, bias and vibration),
(foot_drift^2 dt) / c_i on p_i (a stance foot stays put, a swing foot goes anywhere).

Measurements per foot i, from the joint encoders through the planning model's kinematics
(k_i(q): foot position relative to the base in world-aligned axes; J_i: its Jacobian, base
translation held still, so J_i [0, w, dq] is the foot's velocity relative to the base):
    p_i - p = k_i                                 (noise kin_pos_noise)
    v      = -J_i [0, w, dq]                      (the stance foot does not slide; kin_vel_noise)
    p_i,z  = foot_height + G(p_i)                 (ground: level and map; height_noise)
where the velocity is that of the point a foot radius below the foot site (a round foot rolls
about it); each standard deviation is divided by sqrt(c_i), and the feet believed in swing
(c_i = contact_min) are left out of the correction.

Where the ground is, by the option ``ground``:
- ``level`` (the default): the flat floor. The height row p_i,z = foot_height holds the height
  (no drift on a level floor), foot_height defaulting to the planning model's resting foot
  height (:func:`resting_foot_height`); at the start the lowest feet stand there.
- ``carried`` (blind terrain): nothing says where the ground is. The height is carried from
  foothold to foothold (a foot that lands is where the legs put it from the base, and holds
  the base while it stands), so it is right on a ramp or a step, and drifts as all odometry
  does (the A1 on its Menagerie description: about 1.7 cm/s, on the floor as on a ramp:
  docs/terrain.md). (The level row read the base 0.23 m low at the top of a 10° ramp 1.5 m
  long and 0.27 m high at its foot going down; a measurement of each foot against the plane
  through the last footholds followed the ramp no better, 0.23 m: each new foothold pulled
  toward the plane of the old ones kept the plane level.) At the start the feet are taken to
  touch the ground at ``foot_height`` (default: the foot radius) under the base. The ground's
  slope tells the kinematic contact cue which feet are level with the others; by
  ``cue_slope``: ``footholds`` (the default), a plane fitted to the filter's foot positions
  where it believed them down (:class:`mpc.tasks.ground.GroundFit`); ``chords``, the chords
  between feet standing together (:class:`hardware.estimation.stance_slope.StanceSlope`: the
  legs alone, so neither the height's drift nor a foot left behind at the top of a ramp tilts
  it), of the feet the slip cue, the innovation gate and the planned stance have down (not the
  height cue, which needs the slope). Down a 10° ramp the footholds' plane locked the uphill
  feet out (their footholds stayed on the plateau, the slope too shallow, the feet too high, so
  never believed down again); the chords keep them (docs/terrain.md, "The carried height"),
  but changed walking outcomes elsewhere both ways: the Go1's terrain config takes them, and
  the Go2's with the rolling foot and looser footholds (below; docs/terrain.md).
  A foot that has just come down is left to settle for ``settle_time``: its height is not
  held (its p_i,z takes process noise settle_noise^2 dt, so it follows the legs) and its
  vertical velocity row is left out; after that it holds the base. A landing compresses the
  contact (the A1's 2 cm foot sphere on its soft MuJoCo contact plunges to 1 mm above the
  floor under the impact and springs back to 9 mm over the next 0.1 s; a rubber pad less so),
  and the contact belief comes up while it springs back: a foot held from that moment rises
  under the base and carried the height down by 2-3 mm a step, 1.7 cm/s for the A1
  (docs/terrain.md, "The carried height"). How long is the robot's contact's: the A1's
  terrain config settles 0.06 s; the Go1's and Go2's feet rise and sink back within the
  belief (no net rise: 0, the default), where a settling time would keep the sinking half
  only and carry the height up.
- ``map`` (planning on a terrain map): the map says where the ground is. G(p_i) is the map
  under the foot (the planner's map, despeckled: ``map``, by default ``task.map``; a file:
  maps received while running reach the planner, not the filter;
  :mod:`hardware.estimation.map_height`), measured for each standing foot where the map is
  flat around it, so the height holds on stairs as on the level floor; a foot on or next to a
  riser is carried as above. foot_height defaults to the planning model's resting foot height
  (as ``level``), and at the start the lowest feet stand on the map. The kinematic cue takes
  each foot's height over the highest ground under its sphere: on a flight a front foot
  standing a tread above the hind ones is as down as they are; it measures from the lowest
  foot's height over the lowest ground within 10 cm, since the estimate's xy drifts against
  the map and a foot by a riser may be read on the level above it. (Carried, the Go2's height
  lost 2-4 cm with every 12 cm step down, 24 cm over the flight, and the controller stopped
  it at the foot of the flight for a base "below its fall height"; the cue, level with the
  lowest foot, believed down only the feet on the lowest tread: docs/terrain.md.) A map that
  is wrong moves the estimate with it: the planner reads the same map, so the two agree.
  With ``foot_roll`` a standing foot rolls on the ground's slope: the point that stays put is
  ``roll_radius`` (default the foot radius) along the ground's normal n (from the cue's
  slope), not below the centre, so the velocity rows take that point, and a held foot's
  centre moves along the ground at w_foot x r n (on a 10° slope that has a vertical part,
  down going down: a centre held still reads the base as rising, up going up). Off by
  default; ``ground: carried`` only: with another ground it, ``cue_slope`` and ``roll_radius``
  without it are refused (they would change nothing).

Contact belief c_i in [c_min, 1]: the product of
- a kinematic cue: the foot is within ``stance_band`` of the lowest foot (world-aligned; with
  ``ground: carried`` heights taken along the vertical less the ground's slope: on a 15° ramp
  a front foot stands 10 cm above a hind one; with ``ground: map`` heights over the map);
- a slip cue: the base velocity the foot implies, u_i = -J_i [0, w, dq], changes as the base
  accelerates, u_i' = a, while the foot stands; the leaky sum of the unexplained change
  r_i <- exp(-dt/0.02 s) r_i + (du_i - a dt) weighs the foot by exp(-|r_i|^2 / (2 slip_gate^2))
  (a landing, lifting or sliding foot accelerates relative to the base);
- an innovation gate: a foot whose u_i is further than ``innovation_gate`` from the predicted
  v is out (a foot sliding steadily), unless no foot has passed for 0.2 s;
- a belief under 0.5 counts as swing (contact_min): a half-trusted moving foot does more harm
  than the IMU alone through a transition of tens of milliseconds;
- with ``foot_force_weight`` w > 0, the foot-force sensor: c_ff from the reading above a
  slowly tracked per-foot baseline (the sensor's offset), blended as (1-w) c_kin + w c_ff.
A planned stance (the gait schedule, :meth:`set_planned_stance`) multiplies in where given.

The defaults trust the accelerometer over the legs' velocity (accel_noise 0.2 m/s^2/sqrt(s)
against kin_vel_noise 0.5 m/s): a stance foot on a compliant contact is not quite still (it
sinks and rolls as the load comes on), and with the legs trusted more (1.0 and 0.1) that
showed as a 2-5 Hz error in the vertical velocity, 0.06-0.09 m/s RMS in a lockstep trot on
realistic sensors, against 0.03 now; the accelerometer's bias and the attitude error stay
bounded by the legs at low frequency (docs/estimation.md).
"""

from __future__ import annotations

import math
from typing import ClassVar

import mujoco
import numpy as np

from hardware.estimation.base_state import GROUNDS, BaseState, BaseStateSource, ImuSample
from hardware.estimation.map_height import MapHeight, Under
from hardware.estimation.stance_slope import StanceSlope
from hardware.rotations import euler_zyx
from mpc.tasks.ground import GroundFit
from mpc.tasks.terrain_map import load
from robots.info import RobotInfo

GRAVITY = np.array([0.0, 0.0, -9.81])
#: Where the kinematic cue's slope comes from (``ground: carried``; module docstring).
CUE_SLOPES = ("footholds", "chords")
#: The filter's grounds: the leg estimators' and a terrain map (module docstring).
KALMAN_GROUNDS = (*GROUNDS, "map")

class LegKalman(BaseStateSource):
    """See the module docstring; options are the config's ``plant.base_state`` keys."""

    #: Bounds of the options, read by mpc.app.schema.check_kwargs (see mpc/app/schema.py).
    RANGES: ClassVar[dict[str, dict]] = {
        "accel_noise": {"min": 1e-3, "max": 100.0},
        "foot_drift": {"min": 1e-5, "max": 10.0},
        "kin_pos_noise": {"min": 1e-4, "max": 1.0},
        "kin_vel_noise": {"min": 1e-3, "max": 10.0},
        "height_noise": {"min": 1e-4, "max": 1.0},
        "stance_band": {"min": 1e-3, "max": 0.2},
        "slip_gate": {"min": 0.05, "max": 10.0},
        "foot_force_weight": {"min": 0.0, "max": 1.0},
        "contact_force": {"min": 1.0, "max": 2000.0},
        "contact_min": {"min": 1e-6, "max": 0.5},
        "innovation_gate": {"min": 0.05, "max": 10.0},
        "foot_height": {"min": -1.0, "max": 1.0},
        "initial_xy": {"min": -1000.0, "max": 1000.0},
        "ground": {"choices": KALMAN_GROUNDS},
        "cue_slope": {"choices": CUE_SLOPES},
        "settle_time": {"min": 0.0, "max": 0.5},
        "foot_roll": {"choices": (False, True)},
        "roll_radius": {"min": 0.0, "max": 0.2},
    }
    #: Process noise (m/sqrt(s)) of a settling foot's height: free to follow the legs.
    SETTLE_NOISE: ClassVar[float] = 1.0

    def __init__(self, model: mujoco.MjModel, robot: RobotInfo, accel_noise: float = 0.2,
                 foot_drift: float = 0.01, kin_pos_noise: float = 0.005,
                 kin_vel_noise: float = 0.5, height_noise: float = 0.005,
                 stance_band: float = 0.025, slip_gate: float = 0.1,
                 foot_force_weight: float = 0.0, contact_force: float = 40.0,
                 contact_min: float = 1e-4, innovation_gate: float = 0.3,
                 foot_height: float | None = None, zero_yaw: bool = True,
                 initial_xy: list[float] | None = None, ground: str = "level",
                 settle_time: float = 0.0, cue_slope: str = "footholds",
                 foot_roll: bool = False, roll_radius: float | None = None,
                 map: str | None = None):
        # the choices only: the map is read once, below (a bad one raises MapError there)
        self._check_choices({"ground": ground, "cue_slope": cue_slope, "map": map,
                             "foot_roll": foot_roll, "roll_radius": roll_radius})
        self.model = model
        self.data = mujoco.MjData(model)
        self.sites = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, f) for f in robot.feet]
        if min(self.sites) < 0:
            raise ValueError(f"{robot.name}: planning model lacks foot sites {robot.feet}")
        self.foot_bodies = model.site_bodyid[self.sites]
        self.roll_radius = robot.foot_radius if roll_radius is None else float(roll_radius)
        self.contact_offset = np.array([0.0, 0.0, robot.foot_radius])
        jnt = model.actuator_trnid[:, 0]
        self.qadr, self.vadr = model.jnt_qposadr[jnt], model.jnt_dofadr[jnt]
        self.n = n = len(self.sites)
        self.dim = 6 + 3 * n
        self.sigma_a, self.sigma_f = accel_noise, foot_drift
        self.sigma = np.array([kin_pos_noise, kin_vel_noise, height_noise])
        self.band, self.gate = stance_band, slip_gate
        self.innovation_gate = innovation_gate
        self.w_ff, self.f_contact, self.c_min = foot_force_weight, contact_force, contact_min
        self.level = ground == "level"
        #: ``ground: map``: the map under the feet (module docstring), else None.
        self.terrain = (MapHeight(load(map).despeckled(), robot.foot_radius)
                        if ground == "map" else None)
        #: ``ground: map``: the map under the feet at this update.
        self.under: Under | None = None
        carried = ground == "carried"
        if foot_height is not None:
            self.foot_height = float(foot_height)
        else:
            self.foot_height = (robot.foot_radius if carried
                                else resting_foot_height(model, robot))
        #: ``ground: carried``: the kinematic contact cue's slope, from a plane through the
        #: remembered footholds (``cue_slope: footholds``) or from the chords between feet
        #: standing together (``chords``); both None on the level floor and on a map.
        self.ground = GroundFit(n) if carried and cue_slope == "footholds" else None
        self.stance_slope = StanceSlope(n) if carried and cue_slope == "chords" else None
        self.zero_yaw, self.initial_xy = zero_yaw, list(initial_xy or (0.0, 0.0))
        self.yaw0: np.ndarray | None = None  # the quaternion removing the initial yaw
        self.x = np.zeros(self.dim)
        self.P = np.eye(self.dim)
        self.time: float | None = None
        self.last: BaseState | None = None
        self.contact = np.ones(n)
        self.slip_time = 0.02
        self.unsupported = 0.0
        #: ``ground: carried``: how long each foot has been believed down (s), and for how
        #: long a foot that has come down is left to settle (module docstring).
        self.stance_time = np.zeros(n)
        self.settle_time = float(settle_time)
        #: ``ground: carried``: a standing foot rolls on the ground's normal (module docstring).
        self.foot_roll = bool(foot_roll)
        self.roll_vel = np.zeros((n, 3))
        self.implied: np.ndarray | None = None
        self.unexplained = np.zeros((n, 3))
        self.accel_world = np.zeros(3)
        self.planned: np.ndarray | None = None
        self.force: np.ndarray | None = None
        self.baseline: np.ndarray | None = None
        self.jac = np.zeros((3, model.nv))
        # Measurement matrix: rows (3 pos, 3 vel, 1 height) per foot; fixed, only R changes.
        # The first ``used`` of each foot's rows are in use (the height row unless carried).
        H = np.zeros((7 * n, self.dim))
        for i in range(n):
            r, c = 7 * i, 6 + 3 * i
            H[r:r + 3, 0:3] = -np.eye(3)
            H[r:r + 3, c:c + 3] = np.eye(3)
            H[r + 3:r + 6, 3:6] = np.eye(3)
            H[r + 6, c + 2] = 1.0
        self.H = H
        self.used = 6 if carried else 7
        self.rows = np.arange(7 * n).reshape(n, 7)[:, :self.used]
        self.var = (np.repeat(self.sigma, (3, 3, 1)) ** 2)[:self.used]

    @staticmethod
    def check_options(options: dict) -> None:
        """ValueError naming the key unless the options that depend on each other fit (the
        single options' bounds are :attr:`RANGES`'); ``ground: map`` reads its map."""
        LegKalman._check_choices(options)
        if options.get("ground") == "map":
            load(options["map"])  # MapError (a ValueError) naming what is wrong

    @staticmethod
    def _check_choices(options: dict) -> None:
        """:meth:`check_options` without reading the map."""
        ground = options.get("ground", "level")
        if ground not in KALMAN_GROUNDS:
            raise ValueError(f"unknown ground {ground!r}; choose from "
                             f"{', '.join(KALMAN_GROUNDS)}")
        cue_slope = options.get("cue_slope", "footholds")
        if cue_slope not in CUE_SLOPES:
            raise ValueError(f"unknown cue_slope {cue_slope!r}; choose from "
                             f"{', '.join(CUE_SLOPES)}")
        if ground == "map" and not options.get("map"):
            raise ValueError("ground: map needs a terrain map file (task.map, or map)")
        if ground != "map" and options.get("map"):
            raise ValueError(f"map is read with ground: map only (ground is {ground!r})")
        # options of the carried height alone: elsewhere they would change nothing, silently
        if ground != "carried":
            for key, unset in (("cue_slope", "footholds"), ("foot_roll", False)):
                if options.get(key, unset) != unset:
                    raise ValueError(f"{key} is read with ground: carried only "
                                     f"(ground is {ground!r})")
        if options.get("roll_radius") is not None and not options.get("foot_roll"):
            raise ValueError("roll_radius is read with foot_roll: true only")

    # --- optional inputs ---------------------------------------------------------------------
    def observe_feet(self, foot_force: np.ndarray) -> None:
        """The foot-force readings (task foot order) that go with the next :meth:`update`."""
        self.force = np.asarray(foot_force, float)[:self.n]

    def set_planned_stance(self, stance: np.ndarray | None) -> None:
        """Which feet the gait schedule wants down now (None: no schedule)."""
        self.planned = None if stance is None else np.asarray(stance, bool)

    # --- filter --------------------------------------------------------------------------------
    def _kinematics(self, quat, gyro, q, dq) -> tuple[np.ndarray, np.ndarray]:
        """k_i (n, 3) and the feet's velocities relative to the base (n, 3), world axes."""
        m, d = self.model, self.data
        d.qpos[:] = 0.0
        d.qpos[3:7] = quat
        d.qpos[self.qadr] = q
        d.qvel[:] = 0.0
        d.qvel[3:6] = gyro
        d.qvel[self.vadr] = dq
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        rel = d.site_xpos[self.sites].copy()
        vel = np.empty((self.n, 3))
        offset = self.contact_offset
        if self.foot_roll:  # the ground's normal, from the slope the contact cue uses
            slope = (self.stance_slope.slope if self.stance_slope is not None
                     else self.ground.plane.slope)
            normal = np.array([-slope[0], -slope[1], 1.0])
            offset = self.roll_radius * normal / math.sqrt(normal @ normal)
        for i in range(self.n):
            # The point that stays put is where the foot touches, a radius below its centre
            # (a round foot rolls: its centre moves at w_foot x r while it stands).
            point = rel[i] - offset
            mujoco.mj_jac(m, d, self.jac, None, point, self.foot_bodies[i])
            vel[i] = self.jac @ d.qvel
            if self.foot_roll:  # the centre's velocity over the ground: w_foot x r n
                mujoco.mj_jac(m, d, self.jac, None, rel[i], self.foot_bodies[i])
                self.roll_vel[i] = self.jac @ d.qvel - vel[i]
        return rel, vel

    def _force_contact(self, dt: float) -> np.ndarray | None:
        """c_ff from the foot-force reading above its tracked baseline (the sensor's offset,
        which the reading approaches in swing): the baseline follows the reading down at once
        and creeps up at 2 N/s."""
        if self.force is None or self.w_ff == 0.0:
            return None
        f = self.force
        self.baseline = f.copy() if self.baseline is None else np.minimum(
            self.baseline + 2.0 * dt, f)
        return np.clip((f - self.baseline) / self.f_contact, 0.0, 1.0)

    def update(self, imu: ImuSample, joint_q: np.ndarray, joint_dq: np.ndarray) -> None:
        quat = np.asarray(imu.quat, float)
        quat = quat / math.sqrt(quat @ quat)
        if self.zero_yaw:
            if self.yaw0 is None:
                h = -0.5 * euler_zyx(quat)[2]
                self.yaw0 = np.array([math.cos(h), 0.0, 0.0, math.sin(h)])
            out = np.empty(4)
            mujoco.mju_mulQuat(out, self.yaw0, quat)
            quat = out
        gyro = np.asarray(imu.gyro, float)
        rel, rel_vel = self._kinematics(quat, gyro, joint_q, joint_dq)
        n = self.n
        if self.time is None:
            self._initialize(rel)
            self.time = imu.time
        dt = min(max(imu.time - self.time, 0.0), 0.02)
        self.time = imu.time
        # Predict.
        x, P = self.x, self.P
        R = _rotation(quat)
        a = R @ np.asarray(imu.accel, float) + GRAVITY
        self.accel_world = a
        x[0:3] += x[3:6] * dt + 0.5 * a * dt * dt
        x[3:6] += a * dt
        P[0:3, :] += dt * P[3:6, :]
        P[:, 0:3] += dt * P[:, 3:6]
        if self.terrain is not None:  # the map under the feet, where the legs put them
            self.under = self.terrain.read(x[0:3] + rel)
        c = self._contact(rel, rel_vel, dt)
        if self.foot_roll:  # a standing foot's centre rolls along the ground
            held = c > 0.5
            x[6:].reshape(n, 3)[held] += self.roll_vel[held] * dt
        q_diag = np.empty(self.dim)
        q_diag[0:3] = 1e-8 + (self.sigma_a * dt) ** 2 * dt
        q_diag[3:6] = self.sigma_a ** 2 * dt
        q_diag[6:] = np.repeat(self.sigma_f ** 2 * dt / c, 3)
        settling = self._settling(c, dt)
        q_diag[6 + 3 * np.flatnonzero(settling) + 2] += self.SETTLE_NOISE ** 2 * dt
        P[np.diag_indices(self.dim)] += q_diag
        # Correct, with the rows of the feet believed down (a swing foot's rows, at noise
        # divided by sqrt(contact_min), would carry nothing).
        down = np.flatnonzero(c > self.c_min)
        if down.size:
            z = np.empty((n, 7))
            z[:, 0:3], z[:, 3:6], z[:, 6] = rel, -rel_vel, self.foot_height
            z = z[:, :self.used]
            rows = self.rows[down].ravel()
            var = self.var[None, :] / c[down, None]
            if self.terrain is not None:  # the map's height where it is sure of it
                z[:, 6] += self.under.ground
                var[~self.under.flat[down], 6] /= self.c_min
            var[settling[down], 5] /= self.c_min  # a settling foot's vertical velocity: out
            var = var.ravel()
            H = self.H[rows]
            PHt = P @ H.T
            S = H @ PHt
            S[np.diag_indices(len(rows))] += var
            K = np.linalg.solve(S, PHt.T).T
            x += K @ (z[down].ravel() - H @ x)
            P -= K @ PHt.T
            self.P = 0.5 * (P + P.T)
        if self.ground is not None:
            self.ground.observe(x[6:].reshape(n, 3), c > 0.5)
        self.last = BaseState(imu.time, x[0:3].copy(), quat, x[3:6].copy(), gyro.copy())

    def _settling(self, c: np.ndarray, dt: float) -> np.ndarray:
        """The feet believed down for less than ``settle_time`` (``ground: carried``; none on
        the level floor, whose height row holds every standing foot)."""
        if self.level:
            return np.zeros(self.n, bool)
        self.stance_time = np.where(c > 0.5, self.stance_time + dt, 0.0)
        return (c > 0.5) & (self.stance_time < self.settle_time)

    def _initialize(self, rel: np.ndarray) -> None:
        """Standing still, the lowest feet touching the ground at ``foot_height`` (over the map
        under them with ``ground: map``)."""
        low = rel[:, 2] <= rel[:, 2].min() + self.band
        p = np.array([*self.initial_xy, self.foot_height - rel[low, 2].mean()])
        if self.terrain is not None:
            p[2] += float(self.terrain.read(p + rel[low]).ground.mean())
        self.x[0:3], self.x[3:6] = p, 0.0
        self.x[6:] = (p + rel).ravel()
        if self.stance_slope is not None:  # all four stand
            self.stance_slope.observe(rel, np.ones(self.n, bool), 0.0)
        self.P = np.diag(np.r_[np.full(3, 1e-4), np.full(3, 1e-2), np.full(3 * self.n, 1e-2)])

    def _contact(self, rel: np.ndarray, rel_vel: np.ndarray, dt: float) -> np.ndarray:
        """Contact belief per foot (see the module docstring)."""
        up = rel[:, 2]
        if self.terrain is not None:  # level with the others over the map?
            # over the highest ground under the foot, from the lowest over the lowest ground
            # around each (hardware/estimation/map_height.py: the xy drifts against the map)
            lowest = (up - self.under.low).min()
            up = up - self.under.top
        else:
            if self.ground is not None:  # level with the others along the ground?
                up = up - rel[:, 0:2] @ self.ground.plane.slope
            elif self.stance_slope is not None:
                up = up - rel[:, 0:2] @ self.stance_slope.slope
            lowest = up.min()
        c_kin = np.clip(1.0 - (up - lowest) / self.band, 0.0, 1.0)
        # Slip: a standing foot's implied base velocity changes only as fast as the base
        # accelerates, which the accelerometer measures; a landing, lifting or sliding foot's
        # changes faster. r_i, the last ~slip_time of that unexplained change (a leaky sum),
        # does not depend on the filter's state, so a bad estimate cannot vouch for itself.
        implied = -rel_vel
        if self.implied is not None:
            keep = math.exp(-dt / self.slip_time)
            self.unexplained = keep * self.unexplained + (implied - self.implied
                                                          - self.accel_world * dt)
        self.implied = implied
        slip2 = (self.unexplained ** 2).sum(axis=1) / self.gate ** 2
        c_still = np.exp(-0.5 * slip2)
        # A foot sliding steadily passes that test; it fails this one: its implied velocity
        # disagrees with the prediction by more than ``innovation_gate``. If no foot has
        # agreed for 0.2 s, the prediction is what is wrong: the test is suspended.
        far = ((implied - self.x[3:6]) ** 2).sum(axis=1) > self.innovation_gate ** 2
        if ((c_kin * c_still > 0.5) & ~far).any():
            self.unsupported = 0.0
        else:
            self.unsupported += dt
        if self.unsupported < 0.2:
            c_still = np.where(far, 0.0, c_still)
        prior = 1.0
        if self.planned is not None and len(self.planned) == self.n:
            prior = np.where(self.planned, 1.0, 0.1)
        if self.stance_slope is not None:
            # The slope from the feet that stand by every cue but the height one, which
            # needs the slope (see hardware/estimation/stance_slope.py).
            self.stance_slope.observe(rel, c_still * prior > 0.5, dt)
        c = c_kin * c_still
        c_ff = self._force_contact(dt)
        if c_ff is not None:
            c = (1.0 - self.w_ff) * c + self.w_ff * c_ff
        c = c * prior
        self.contact = c
        # A half-believed foot is more harmful than none: a moving foot weighted even by 0.2
        # pulls the velocity by tenths of m/s, while the IMU carries the filter through a
        # transition of tens of milliseconds at a few mm/s of error.
        return np.where(c > 0.5, c, self.c_min)

    def estimate(self) -> BaseState | None:
        return self.last

    def health(self) -> dict[str, float]:
        return {"stance_feet": float((self.contact > 0.5).sum())}


def resting_foot_height(model: mujoco.MjModel, robot: RobotInfo) -> float:
    """Height of the foot sites when the model stands at its home pose under its own weight
    for one second: the model's feet sink into its soft contacts (an A1's 2 cm foot spheres
    rest at 3 mm), and the planner expects heights in its model's terms."""
    d = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, d, mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY,
                                                            robot.home_key))
    for _ in range(int(1.0 / model.opt.timestep)):
        mujoco.mj_step(model, d)
    sites = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, f) for f in robot.feet]
    return float(d.site_xpos[sites, 2].mean())


def _rotation(quat: np.ndarray) -> np.ndarray:
    out = np.empty(9)
    mujoco.mju_quat2Mat(out, quat)
    return out.reshape(3, 3)
