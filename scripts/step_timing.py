"""Time ``mj_step`` while each robot stands, project models against the reference descriptions.

    python scripts/step_timing.py [--runs 10] [--seconds 1.0]

Each run starts from the home pose and simulates ``seconds`` of standing; only the ``mj_step``
call is timed, one step at a time, single-threaded. Position-actuated models hold their home
ctrl. Torque-actuated ones (reference Go2, H1) get their controller computed outside the timed
call: reference Go2 a joint PD equal to the project's position actuators (kp 100); H1 (project
and reference) the project's home torques plus the hardware joint PD (it stands for about 1-2 s,
enough for a 1 s run). Prints a Markdown table: median and 90th percentile step time, mean
number of contacts.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

import robots

# The reference descriptions are test data (tests/reference/), loaded by the tests' helper.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from reference_models import load_reference

Controller = Callable[[mujoco.MjData], None]


@dataclass
class Timing:
    label: str
    median_us: float
    p90_us: float
    mean_contacts: float


def _home_qpos_by_joint(robot: str) -> dict[str, float]:
    model = robots.load_model(robot)
    qpos = model.key(robots.info(robot).home_key).qpos
    return {model.joint(j).name: qpos[model.jnt_qposadr[j]] for j in range(1, model.njnt)}


def _home_ctrl_by_joint(robot: str) -> dict[str, float]:
    model = robots.load_model(robot)
    ctrl = model.key(robots.info(robot).home_key).ctrl
    return {model.joint(model.actuator_trnid[a, 0]).name: ctrl[a] for a in range(model.nu)}


def _setup(model: mujoco.MjModel, robot: str) -> tuple[np.ndarray, Controller]:
    """Initial qpos (the project's home pose, joint by joint) and a controller for ``model``."""
    info = robots.info(robot)
    home = _home_qpos_by_joint(robot)
    qpos0 = model.qpos0.copy()
    qpos0[:7] = robots.load_model(robot).key(info.home_key).qpos[:7]
    for j in range(1, model.njnt):
        qpos0[model.jnt_qposadr[j]] = home[model.joint(j).name]
    joints = [model.joint(model.actuator_trnid[a, 0]).name for a in range(model.nu)]
    qadr = model.jnt_qposadr[model.actuator_trnid[:, 0]]
    vadr = model.jnt_dofadr[model.actuator_trnid[:, 0]]
    q_home = np.array([home[j] for j in joints])
    if np.all(model.actuator_biastype == mujoco.mjtBias.mjBIAS_AFFINE):
        def hold(data: mujoco.MjData) -> None:
            data.ctrl[:] = q_home
        return qpos0, hold
    if info.control == "position":  # a torque-driven reference of a position-actuated robot
        kp = robots.load_model(robot).actuator_gainprm[0, 0]

        def pd(data: mujoco.MjData) -> None:
            data.ctrl[:] = kp * (q_home - data.qpos[qadr])
        return qpos0, pd
    tau = np.array([_home_ctrl_by_joint(robot)[j] for j in joints])
    kp = np.array([info.hw_kp[info.motor_joints.index(j)] for j in joints])
    kd = np.array([info.hw_kd[info.motor_joints.index(j)] for j in joints])

    def pd_ff(data: mujoco.MjData) -> None:
        data.ctrl[:] = tau + kp * (q_home - data.qpos[qadr]) - kd * data.qvel[vadr]
    return qpos0, pd_ff


def time_standing(model: mujoco.MjModel, robot: str, label: str, runs: int,
                  seconds: float) -> Timing:
    qpos0, control = _setup(model, robot)
    data = mujoco.MjData(model)
    steps_per_run = round(seconds / model.opt.timestep)
    times = np.empty(runs * steps_per_run)
    contacts = np.empty_like(times)
    k = 0
    for _ in range(runs):
        mujoco.mj_resetData(model, data)
        data.qpos[:] = qpos0
        mujoco.mj_forward(model, data)
        for _ in range(steps_per_run):
            control(data)
            start = time.perf_counter_ns()
            mujoco.mj_step(model, data)
            times[k] = time.perf_counter_ns() - start
            contacts[k] = data.ncon
            k += 1
    return Timing(label, np.median(times) / 1e3, np.percentile(times, 90) / 1e3,
                  float(contacts.mean()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=1.0)
    args = parser.parse_args()
    print(f"mujoco {mujoco.__version__}, {args.runs} runs x {args.seconds} s of standing")
    print("| model | median µs/step | p90 µs/step | mean contacts | median vs reference |")
    print("|---|---|---|---|---|")
    for robot in robots.available():
        ref = time_standing(load_reference(robot), robot, f"{robot} reference", args.runs,
                            args.seconds)
        rows = [ref, time_standing(robots.load_model(robot), robot,
                                   robots.info(robot).model_file, args.runs, args.seconds)]
        if robots.info(robot).planning_model_file:
            rows.append(time_standing(robots.load_planning_model(robot), robot,
                                      robots.info(robot).planning_model_file, args.runs,
                                      args.seconds))
        for t in rows:
            print(f"| {t.label} | {t.median_us:.1f} | {t.p90_us:.1f} | {t.mean_contacts:.1f} | "
                  f"{t.median_us / ref.median_us:.2f} |")


if __name__ == "__main__":
    main()
