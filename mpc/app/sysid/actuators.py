"""The joints' actuation from gantry runs: armature, damping, dry friction, the motors'
effective position gain, and the loop's delay.

On a gantry the base is held and the feet are free, so each joint obeys

    τ_m(t) = M_j(q) q̈ + c_j(q, q̇) + a_j q̈_j + f_j sign(q̇_j)                      (1)
    τ_m(t) = kp_j / kp⁰_j · Kp(t−δ) (q*(t−δ) − q_j) + d_j / d⁰_j · Kd(t−δ) (q̇*(t−δ) − q̇_j)
             + τ_ff(t−δ)

with M, c the rigid-body dynamics of the nominal model without armature (row j; the other
joints' motion enters through them and is measured), Kp, Kd, q*, q̇*, τ_ff the logged commands
and kp⁰, d⁰ the nominal model's position gain and joint damping (the gains the bridge
commands: :mod:`robots.overlay`). The unknowns of joint j, θ_j = (kp_j, d_j, f_j, a_j), enter
linearly: for a delay δ, (1) is a linear least-squares problem per joint,

    y_j − τ_ff(t−δ) = [P_j(δ), D_j(δ), −sign(q̇_j), −q̈_j] θ_j,   y_j = M_j q̈ + c_j,

the inverse-dynamics identification model of robotics (Gautier and Khalil's IDIM-LS): the
equation error of (1) rather than the output error of a simulation. It is equivalent where the
regressors are measured well, which the filtering ensures (:mod:`mpc.app.sysid.data`: q, q̇, q̈
from encoders low-passed without phase lag, every column through the same filter), and it is
fast: no simulation per parameter guess, one small solve per joint. The simulation through the
logged commands (:mod:`mpc.app.sysid.simulate`) then checks the result as an output error.

The delay is common to all joints: the total residual over joints is evaluated on a grid of
delays (every ``DELAY_STEP``) and its minimum refined by a parabola through its neighbours. At
the delay found, each joint's θ_j is solved with θ ≥ 0 (all four are physical magnitudes).

Samples used: those whose |q̇_j| stays above ``MIN_SPEED`` within half a filter time
constant (0.5 / cutoff) either side (below it dry friction is anywhere within ±f_j, a
stiction the sign cannot state, and the filter spreads that over its neighbours), whose
commanded torque stays below 90 % of the motor's limit (beyond, the motor clips: (1) no
longer holds), clear of the stretches where the log shows the link's timing broken (a gap in
the commands, a late or missing state: (1) with the logged commands at t − δ does not hold
there; :mod:`mpc.app.sysid.data`) for every delay tried, decimated to 2.5 times the filter's
cutoff.

Uncertainty: the delete-a-block jackknife (:mod:`mpc.app.sysid.uncertainty`): the delay found
again without each of ten stretches of the runs in turn (from the blocks' normal equations at
every delay tried), each joint's fit again at that delay without that stretch, and the spread of
those fits. It counts what the model leaves out as well as the sensors' noise: the statistical
σ² (AᵀA)⁻¹, even with the residuals' correlation counted, was 3 to 5 times smaller than the
errors measured against the fake robots. The delay's adds the log's sampling: a delay is
resolved to within one sample period, a spread of dt/√12.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import mujoco
import numpy as np
from scipy.ndimage import minimum_filter1d
from scipy.optimize import lsq_linear

import robots
from mpc.app.sysid import uncertainty
from mpc.app.sysid.data import RunData, SysidError
from robots.overlay import Overlay

#: Parameters per joint, in the regression's column order.
PARAMS = ("kp", "damping", "frictionloss", "armature")
#: Delays tried (s): 0 .. MAX_DELAY by DELAY_STEP.
MAX_DELAY = 0.04
DELAY_STEP = 0.0005
#: Slowest joint speed (rad/s) whose sample enters the fit.
MIN_SPEED = 0.1
#: Share of the torque limit above which a sample counts as clipped.
CLIP_SHARE = 0.9


@dataclass
class JointFit:
    joint: str
    values: dict[str, float]
    std: dict[str, float]
    #: RMS of the torque residual and of the torque explained (N m); samples used.
    residual_rms: float
    torque_rms: float
    samples: int


@dataclass
class ActuatorFit:
    delay: float
    delay_std: float
    joints: list[JointFit]
    #: The total residual over joints at each delay tried (for the report).
    delays: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))
    cost: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))
    #: The jackknife's fits (:mod:`mpc.app.sysid.uncertainty`): per left-out block, the delay
    #: and every joint's values, which the trunk's uncertainty carries on.
    without: list[tuple[float, dict[str, dict[str, float]]]] = field(repr=False,
                                                                     default_factory=list)
    #: The delay's uncertainty from the log's sampling alone (s; within ``delay_std``).
    delay_sampling: float = 0.0

    def overlay_joints(self) -> dict[str, dict[str, float]]:
        return {j.joint: dict(j.values) for j in self.joints}


def inverse_dynamics(data: RunData, model: mujoco.MjModel, sample: np.ndarray,
                     base: bool = False) -> np.ndarray:
    """y = M(q) q̈ + c(q, q̇) of the actuated joints (with ``base``: of the floating base's six
    dofs instead) at the samples ``sample`` of a run, the
    base moving as its IMU reports: orientation, angular velocity and acceleration (the gyro
    and its derivative), linear acceleration R f + g from the specific force f (the IMU taken
    at the base frame's origin). On a gantry the base barely moves, but the legs' swinging
    shakes it, and the legs feel that."""
    d = mujoco.MjData(model)
    cols = _columns(data, model)
    qadr, dadr = model.jnt_qposadr[cols], model.jnt_dofadr[cols]
    rows = np.arange(6) if base else dadr
    out = np.empty((len(sample), len(rows)))
    rot = np.empty(9)
    d.qpos[2] = 1.0
    for row, k in enumerate(sample):
        d.qpos[3:7] = data.quat[k]
        mujoco.mju_quat2Mat(rot, data.quat[k])
        d.qpos[qadr], d.qvel[:], d.qacc[:] = data.q[k], 0.0, 0.0
        d.qvel[3:6], d.qacc[3:6] = data.gyro[k], data.dgyro[k]
        d.qacc[0:3] = rot.reshape(3, 3) @ data.accel[k] + model.opt.gravity
        d.qvel[dadr], d.qacc[dadr] = data.dq[k], data.ddq[k]
        mujoco.mj_inverse(model, d)
        out[row] = d.qfrc_inverse[rows]
    return out


def rigid_body_model(robot: str) -> mujoco.MjModel:
    """The nominal planning model with the actuated joints' armature, damping and friction
    removed (they are the unknowns) and constraints off (feet in the air, joints inside their
    limits)."""
    model = robots.load_planning_model(robot)
    act = model.jnt_dofadr[model.actuator_trnid[:, 0]]
    model.dof_armature[act] = 0.0
    model.dof_damping[act] = 0.0
    model.dof_frictionloss[act] = 0.0
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    return model


def _columns(data: RunData, model: mujoco.MjModel) -> np.ndarray:
    """Joint ids of the data's columns in ``model``."""
    return np.array([model.joint(j).id for j in data.joints])


@dataclass
class _Prepared:
    """One run's fixed parts of the regression, at its decimated samples."""

    data: RunData
    t: np.ndarray
    y: np.ndarray
    q: np.ndarray
    dq: np.ndarray
    ddq: np.ndarray
    sign: np.ndarray
    #: The slowest speed within REVERSAL / cutoff seconds of each sample (per joint).
    floor: np.ndarray


#: Samples this many filter time constants (1 / cutoff) from a speed below MIN_SPEED are left
#: out: the filter spreads what happens as a joint sticks at a reversal over them. Half a time
#: constant: two leave out most of the fastest sweeps (at 8 Hz a reversal every 62 ms), whose
#: accelerations are what make the armature observable (measured on the
#: evaluation's gantry runs: worst armature error 15 % at 2, 8 % at 0.5).
REVERSAL = 0.5


def speed_floor(dq: np.ndarray, dt: float, cutoff: float) -> np.ndarray:
    """The slowest |q̇| within REVERSAL / ``cutoff`` seconds of each sample of ``dq``
    (samples, joints) sampled every ``dt``, a reversal (a change of sign between two samples,
    which a fast joint passes between samples) counting as 0: a sample enters the fit if it
    is above MIN_SPEED."""
    width = max(1, int(REVERSAL / (cutoff * dt)))
    speed = np.abs(dq)
    flips = np.zeros(dq.shape, bool)
    flips[1:] = np.signbit(dq[1:]) != np.signbit(dq[:-1])
    speed[flips] = 0.0
    return minimum_filter1d(speed, size=2 * width + 1, axis=0, mode="nearest")


def _prepare(data: RunData, model: mujoco.MjModel, cutoff: float) -> _Prepared:
    every = max(1, int(1.0 / (data.dt * 2.5 * cutoff)))
    # leave the filter's edges out
    edge = int(0.2 / data.dt)
    sample = np.arange(edge, len(data.t) - edge, every)
    floor = speed_floor(data.dq, data.dt, cutoff)
    return _Prepared(data, data.t[sample], inverse_dynamics(data, model, sample),
                     data.q[sample], data.dq[sample], data.ddq[sample], data.sign[sample],
                     floor[sample])


def _regression(p: _Prepared, j: int, delay: float, kp0: float, d0: float
                ) -> tuple[np.ndarray, np.ndarray]:
    """(A, b) of joint column ``j`` at ``delay``: A θ = b with θ = PARAMS."""
    c, when = p.data.commands, p.t - delay
    P = (c.at("kpq", when)[:, j] - c.at("kp", when)[:, j] * p.q[:, j]) / kp0
    D = (c.at("kddq", when)[:, j] - c.at("kd", when)[:, j] * p.dq[:, j]) / d0
    A = np.column_stack([P, D, -p.sign[:, j], -p.ddq[:, j]])
    return A, p.y[:, j] - c.at("tau", when)[:, j]


def _mask(p: _Prepared, j: int, limit: float, kp0: float, d0: float) -> np.ndarray:
    A, _ = _regression(p, j, 0.0, kp0, d0)
    nominal_torque = np.abs(A[:, 0] * kp0 + A[:, 1] * d0)
    return ((p.floor[:, j] > MIN_SPEED) & (nominal_torque < CLIP_SHARE * limit)
            & p.data.clear(p.t, MAX_DELAY))


def identify(runs: list[RunData], nominal: Overlay, cutoff: float) -> ActuatorFit:
    """Fit every joint of the gantry ``runs`` (module docstring); ``nominal`` holds the nominal
    model's figures (:func:`robots.overlay.nominal`)."""
    robot = runs[0].robot.name
    model = rigid_body_model(robot)
    joints = runs[0].joints
    prepared = [_prepare(r, model, cutoff) for r in runs]
    # every sample's block of the jackknife: the runs' samples in order, cut into BLOCKS
    total = sum(len(p.t) for p in prepared)
    ids = np.zeros(total, int)
    for k, part in enumerate(uncertainty.blocks(total)):
        ids[part] = k
    starts = np.cumsum([0] + [len(p.t) for p in prepared])
    block_of = [ids[a:b] for a, b in itertools.pairwise(starts)]
    nblocks = int(ids.max()) + 1
    delays = np.arange(0.0, MAX_DELAY + DELAY_STEP / 2, DELAY_STEP)
    masks, cost = [], np.zeros(len(delays))
    cost_without = np.zeros((nblocks, len(delays)))  # the total cost without each block
    figures = []
    for j, joint in enumerate(joints):
        p0 = nominal.joints[joint]
        kp0, d0 = p0.kp or 1.0, p0.damping or 1.0
        figures.append((kp0, d0, p0.torque_limit or np.inf))
        masks.append([_mask(p, j, figures[-1][2], kp0, d0) for p in prepared])
        if sum(int(m.sum()) for m in masks[-1]) < 50:
            raise SysidError(f"{joint}: fewer than 50 samples moving faster than {MIN_SPEED} "
                             f"rad/s: not a gantry excitation run")
        rows = np.concatenate([run[m] for run, m in zip(block_of, masks[-1], strict=True)])
        parts = [np.flatnonzero(rows == k) for k in range(nblocks)]
        for i, delay in enumerate(delays):
            A, b = _stack(prepared, masks[-1], j, delay, kp0, d0)
            ata, atb, btb = uncertainty.normal_equations(A, b, parts)
            theta = np.linalg.lstsq(ata.sum(axis=0), atb.sum(axis=0), rcond=None)[0]
            cost[i] += float(btb.sum() - theta @ atb.sum(axis=0))
            cost_without[:, i] += uncertainty.leave_one_out(ata, atb, btb)[1]
    best = int(np.argmin(cost))
    delay, _ = _parabola(delays, cost, best)
    # the jackknife: the delay, and each joint's fit at it, without each block in turn
    delay_without = [_parabola(delays, c, int(np.argmin(c)))[0] for c in cost_without]
    # the log resolves a delay to within its sample period (a command, and the motors' answer
    # to it, are seen at the samples only): that spread, uniform over one period, adds
    sampling = runs[0].dt / np.sqrt(12.0)
    delay_std = float(np.hypot(uncertainty.jackknife_std(np.array(delay_without)[:, None])[0],
                               sampling))
    fits = []
    without_all: list[tuple[float, dict[str, dict[str, float]]]] = [
        (d, {}) for d in delay_without]
    for j, joint in enumerate(joints):
        kp0, d0, _ = figures[j]
        A, b = _stack(prepared, masks[j], j, delay, kp0, d0)
        sol = lsq_linear(A, b, bounds=(0.0, np.inf))
        residual = A @ sol.x - b
        rows = np.concatenate([run[m] for run, m in zip(block_of, masks[j], strict=True)])
        without = []
        for k, delay_k in enumerate(delay_without):
            A_k, b_k = _stack(prepared, masks[j], j, delay_k, kp0, d0)
            keep = rows != k
            without.append(lsq_linear(A_k[keep], b_k[keep], bounds=(0.0, np.inf)).x)
            without_all[k][1][joint] = dict(zip(PARAMS, without[-1].tolist(), strict=True))
        std = uncertainty.jackknife_std(np.array(without))
        fits.append(JointFit(joint, dict(zip(PARAMS, sol.x.tolist(), strict=True)),
                             dict(zip(PARAMS, std.tolist(), strict=True)),
                             float(np.sqrt(np.mean(residual ** 2))),
                             float(np.sqrt(np.mean(b ** 2))), len(b)))
    return ActuatorFit(delay, delay_std, fits, delays, cost, without_all, sampling)


def _stack(prepared: list[_Prepared], masks: list[np.ndarray], j: int, delay: float,
           kp0: float, d0: float) -> tuple[np.ndarray, np.ndarray]:
    parts = [_regression(p, j, delay, kp0, d0) for p in prepared]
    return (np.concatenate([A[m] for (A, _), m in zip(parts, masks, strict=True)]),
            np.concatenate([b[m] for (_, b), m in zip(parts, masks, strict=True)]))


def _parabola(x: np.ndarray, y: np.ndarray, i: int) -> tuple[float, float]:
    """The minimum of the parabola through the grid's minimum ``i`` and its neighbours, and
    the parabola's second derivative (0 at the grid's edge)."""
    if i == 0 or i == len(x) - 1:
        return float(x[i]), 0.0
    h = x[1] - x[0]
    y0, y1, y2 = y[i - 1], y[i], y[i + 1]
    second = (y0 - 2 * y1 + y2) / h ** 2
    if second <= 0:
        return float(x[i]), 0.0
    return float(x[i] - h * (y2 - y0) / (2 * (y0 - 2 * y1 + y2))), float(second)
