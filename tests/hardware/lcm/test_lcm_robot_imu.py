"""The fake LCM robot's state is all of one instant: MuJoCo's step computes the accelerometer
at the step's start, so the robot reports that state (pose, speeds, joints) with it, stamped
with that instant. Reported at the step's end with that acceleration, the IMU was one step
(2 ms) inconsistent, and the mocap closed loop's velocity error rose from 0.011 to 0.016 m/s
RMS (``scripts/mocap_closed_loop.py --mode lockstep``)."""

from __future__ import annotations

import lcm
import mujoco
import numpy as np

import robots
from hardware.fake.lcm_robot import FakeLcmRobot, simulated_robot


def test_the_reported_acceleration_is_that_of_the_reported_state(udpm_url):
    sim = simulated_robot(robots.info("a1"))  # ideal sensors: the reading is the truth
    robot = FakeLcmRobot(sim, lcm.LCM(udpm_url), state_channel="IMU_STATE",
                         command_channel="IMU_COMMAND", step_channel="IMU_STEP")
    sim.data.qpos[2] += 0.03  # dropped from 3 cm: a fall, then the landing's jolt
    mujoco.mj_forward(sim.model, sim.data)
    check = mujoco.MjData(sim.model)
    seen = []
    for k in range(150):
        robot.step()
        snap = robot.last
        assert abs(snap.time - (k * sim.timestep)) < 1e-9  # the step's start
        # MuJoCo's accelerometer of the reported state, under the step's torques
        check.qpos[:], check.qvel[:] = snap.qpos, snap.qvel
        check.ctrl[:], check.time = sim.data.ctrl, snap.time
        check.qacc_warmstart[:] = sim.data.qacc_warmstart  # the solver converges alike
        mujoco.mj_forward(sim.model, check)
        accel = check.sensordata[sim.acc_adr:sim.acc_adr + 3]
        # within the contact solver's convergence (m/s^2)
        np.testing.assert_allclose(snap.accel, accel, atol=1e-3, err_msg=f"step {k}")
        seen.append(snap.accel.copy())
        np.testing.assert_allclose(snap.gyro, snap.qvel[3:6], atol=1e-12)
        np.testing.assert_allclose(snap.q, snap.qpos[sim.qadr], atol=1e-12)
    jolt = np.abs(np.diff(seen, axis=0)).max()
    assert jolt > 1.0, jolt  # one step's change the check above would see (m/s^2)
