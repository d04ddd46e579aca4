"""Leg odometry against the simulation's truth: a Go1 held standing by its motors, swayed by a
push on its base."""

import numpy as np

import robots
from hardware.estimation.base_state import ImuSample
from hardware.estimation.sources import make_source
from hardware.fake.robot import FakeRobotSim
from hardware.fake.sensors import SensorSpec
from hardware.lowlevel import MotorCommand


def test_height_and_velocity_follow_the_truth():
    info = robots.info("go1")
    sim = FakeRobotSim(info, start="standing", sensors=SensorSpec(enabled=False))  # the math
    model = robots.load_planning_model("go1")
    odo = make_source({"type": "leg_odometry", "velocity_filter": 0.5}, model, info)
    m = sim.map
    cmd = MotorCommand()
    cmd.mode[m.used] = m.servo_mode[m.used]
    cmd.q[m.used] = m.home[m.used]
    cmd.dq[m.used] = 0.0
    cmd.kp[m.used], cmd.kd[m.used] = m.hold_kp[m.used], m.hold_kd[m.used]
    base = sim.model.body(info.base_body).id
    errors_z, errors_v, speeds = [], [], []
    for k in range(1500):
        t = k * sim.timestep
        sim.command(cmd, t)
        # a sideways and forward sway between 1 and 2 s
        sim.data.xfrc_applied[base, :2] = [25.0, 15.0] if 1.0 < t < 2.0 else [0.0, 0.0]
        sim.step(t)
        st = sim.state()
        odo.update(ImuSample(t, st.quat, st.gyro, st.accel), st.q[m.actuator_slots],
                   st.dq[m.actuator_slots])
        est = odo.estimate()
        if t > 0.5:
            errors_z.append(est.pos[2] - sim.data.qpos[2])
            errors_v.append(est.linvel[:2] - sim.data.qvel[:2])
            speeds.append(np.linalg.norm(sim.data.qvel[:2]))
    assert max(speeds) > 0.1  # the push did move the base
    # Height: a constant offset (the simulated feet sink into the floor by the contact's
    # softness; foot_height sets it) and no more than a few millimetres beyond it.
    assert abs(np.mean(errors_z)) < 0.02
    assert np.max(np.abs(errors_z - np.mean(errors_z))) < 0.005
    assert np.sqrt(np.mean(np.square(errors_v))) < 0.05
    np.testing.assert_allclose(est.quat, sim.data.qpos[3:7], atol=1e-3)
    np.testing.assert_allclose(est.angvel, sim.data.qvel[3:6], atol=1e-6)
