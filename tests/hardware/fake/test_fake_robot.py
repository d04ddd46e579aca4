"""The fake robot: the motors' PD law, motor modes, its command watchdog, and checksum checks
on both wires."""

import socket

import numpy as np
import pytest
from unitree_helpers import free_udp_port, wait_for

import robots
from hardware.fake.robot import FakeRobotSim
from hardware.lowlevel import POS_STOP, MotorCommand
from hardware.unitree import legacy_packets, sdk2_messages, sdk2_types
from hardware.unitree.dds_link import DdsLink


def servo(sim: FakeRobotSim, **per_slot) -> MotorCommand:
    cmd = MotorCommand()
    s = sim.slots
    cmd.mode[s] = sim.servo_mode
    cmd.q[s] = sim.data.qpos[sim.qadr]
    cmd.dq[s] = 0.0
    for field, values in per_slot.items():
        getattr(cmd, field)[s] = values
    return cmd


def test_pd_law_per_motor():
    sim = FakeRobotSim(robots.info("go1"), start="standing")
    q = sim.data.qpos[sim.qadr].copy()
    cmd = servo(sim, kp=0.0, kd=0.0)
    slot = sim.slots[4]
    cmd.q[slot] = q[4] + 0.1
    cmd.kp[slot] = 20.0
    cmd.tau[sim.slots[7]] = 1.5
    cmd.kp[sim.slots[9]] = 1000.0  # saturates at the motor's torque limit
    cmd.q[sim.slots[9]] = q[9] + 1.0
    sim.command(cmd, 0.0)
    sim.step(0.0)
    assert sim.tau[4] == pytest.approx(2.0, rel=1e-6)
    assert sim.tau[7] == pytest.approx(1.5)
    assert sim.tau[9] == pytest.approx(sim.limit[9])
    assert np.count_nonzero(sim.tau) == 3
    np.testing.assert_allclose(sim.state().tau_est[sim.slots], sim.tau)


def test_stop_sentinel_and_modes():
    sim = FakeRobotSim(robots.info("go2"), start="standing")
    cmd = servo(sim, kp=50.0, kd=1.0)
    cmd.q[sim.slots] = POS_STOP  # position term off: only damping acts
    sim.command(cmd, 0.0)
    sim.step(0.0)
    dq = sim.data.qvel[sim.vadr].copy()
    sim.step(0.0)
    # the velocity term on the speed at the step's instant: the mean of the speeds either side
    mean = (dq + sim.data.qvel[sim.vadr]) / 2
    np.testing.assert_allclose(sim.tau, np.clip(-1.0 * mean, -sim.limit, sim.limit))
    wrong = servo(sim, kp=50.0)
    wrong.mode[sim.slots] = 0x0A  # legacy servo mode: a Go2 motor does not servo in it
    sim.command(wrong, 0.0)
    sim.step(0.0)
    assert np.all(sim.tau == 0) and sim.wrong_mode == 12


def test_command_watchdog_falls_back_to_damping():
    sim = FakeRobotSim(robots.info("a1"), start="standing", command_timeout=0.1)
    sim.command(servo(sim, kp=60.0, kd=2.0), 0.0)
    sim.step(0.05)
    assert not sim.damping
    sim.step(0.2)
    assert sim.damping and sim.damping_events == 1
    dq = sim.data.qvel[sim.vadr].copy()
    sim.step(0.21)
    mean = (dq + sim.data.qvel[sim.vadr]) / 2
    np.testing.assert_allclose(sim.tau, np.clip(-3.0 * mean, -sim.limit, sim.limit))
    assert np.any(sim.tau != 0)


def test_udp_fake_drops_bad_checksums_and_answers_the_commander(fake_robot):
    fake = fake_robot("a1")
    client = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    client.bind(("127.0.0.1", free_udp_port()))
    client.settimeout(2.0)
    try:
        good = legacy_packets.encode_low_cmd(legacy_packets.A1, servo(fake.sim, kp=10.0))
        bad = bytearray(good)
        bad[30] ^= 0x20
        client.sendto(bytes(bad), ("127.0.0.1", fake.port))
        assert wait_for(lambda: fake.counts["bad_checksum"] == 1, 1.0)
        assert fake.counts["commands"] == 0 and fake.sim.cmd is None
        client.sendto(good, ("127.0.0.1", fake.port))
        state = legacy_packets.decode_low_state(legacy_packets.A1, client.recv(2048))
        assert fake.counts["commands"] == 1
        assert state.tick > 0
    finally:
        client.close()


def test_dds_fake_drops_bad_checksums(fake_robot):
    fake = fake_robot("go2", "dds")
    link = DdsLink(fake.link.dp.domain_id, "lo", "rt/lowstate", sdk2_types.LowState_,
                   "rt/lowcmd", sdk2_types.LowCmd_)
    try:
        sample = bytearray(sdk2_messages.encode_low_cmd(servo(fake.sim, kp=10.0)))
        sample[200] ^= 0x01
        assert wait_for(lambda: link.writer.get_matched_subscriptions() != [], 5.0)
        for _ in range(5):
            link.send(bytes(sample))
        assert wait_for(lambda: fake.counts["bad_checksum"] >= 1, 2.0)
        assert fake.counts["commands"] == 0
    finally:
        link.close()


def test_foot_forces_carry_the_robots_weight():
    sim = FakeRobotSim(robots.info("go1"), start="standing")
    sim.command(servo(sim, kp=60.0, kd=2.0), 0.0)
    for _ in range(500):  # settle for 1 s
        sim.step(0.0)
    weight = sim.model.body_subtreemass[1] * -sim.model.opt.gravity[2]
    forces = sim.foot_forces()  # the contact forces (the sensors report them imperfectly)
    assert np.all(forces > 0.1 * weight)
    assert forces.sum() == pytest.approx(weight, rel=0.05)


@pytest.mark.parametrize("name", ["a1", "h1"])
def test_the_lcm_robots_motors_have_finite_torque_limits(name):
    """H1's model leaves its motors unlimited: the simulated robot behind LCM still holds each
    to the robot's documented torque, never an infinite one."""
    from hardware.fake.lcm_robot import simulated_robot

    info = robots.info(name)
    sim = simulated_robot(info)
    joints = [sim.model.joint(j).name for j in sim.model.actuator_trnid[:, 0]]
    documented = dict(zip(info.motor_joints, info.torque_limit, strict=True))
    np.testing.assert_array_equal(sim.limit, [documented[j] for j in joints])


def test_the_lcm_robot_is_the_fake_robot_keeping_the_models_joint_damping():
    """Behind LCM the one simulated robot keeps the joints' damping (the LCM plant commands the
    position actuators' own gains on top of it); behind the Unitree wires the motor's Kd stands
    in for it, so the joint driven by a position servo has none."""
    from hardware.fake.lcm_robot import simulated_robot

    info = robots.info("a1")
    model = robots.load_model("a1")
    dofs = model.jnt_dofadr[model.actuator_trnid[:, 0]]
    lcm_sim = simulated_robot(info)
    assert isinstance(lcm_sim, FakeRobotSim)
    np.testing.assert_array_equal(lcm_sim.model.dof_damping[lcm_sim.vadr],
                                  model.dof_damping[dofs])
    assert np.all(model.dof_damping[dofs] > 0)
    unitree_sim = FakeRobotSim(info, start="standing")
    assert np.all(unitree_sim.model.dof_damping[unitree_sim.vadr] == 0)


def test_joint_damping_sets_the_simulated_joints_own_damping():
    """``joint_damping`` gives every motor joint that viscous damping on top of the motors' Kd,
    where the description's was taken as its servos' Kd (the project's Go2: none), and replaces
    a torque-motor description's own (the Menagerie Go2's 2 N m s/rad); out of range: refused."""
    from reference_models import reference_plant_spec

    info = robots.info("go2")
    sim = FakeRobotSim(info, start="standing", joint_damping=0.1)
    np.testing.assert_array_equal(sim.model.dof_damping[sim.vadr], 0.1)
    menagerie = FakeRobotSim(info, start="standing", spec=reference_plant_spec("go2"))
    np.testing.assert_array_equal(menagerie.model.dof_damping[menagerie.vadr], 2.0)
    undamped = FakeRobotSim(info, start="standing", spec=reference_plant_spec("go2"),
                            joint_damping=0.1)
    np.testing.assert_array_equal(undamped.model.dof_damping[undamped.vadr], 0.1)
    with pytest.raises(ValueError, match="joint_damping"):
        FakeRobotSim(info, start="standing", joint_damping=-1.0)


def test_the_lcm_robot_holds_home_then_latches_damping(udpm_url):
    """Before any command the LCM robot stands on its home pose; a damping command puts its
    motors in damping for good: a later valid command does not take them out of it."""
    import lcm

    from hardware.fake.lcm_robot import FakeLcmRobot, simulated_robot
    from hardware.lcm.lcm_types import joint_command_t

    sim = simulated_robot(robots.info("a1"))
    robot = FakeLcmRobot(sim, lcm.LCM(udpm_url), state_channel="HOLD_STATE")
    height = sim.data.qpos[2]
    for _ in range(250):  # 0.5 s without a command
        robot.step()
    assert sim.data.qpos[2] > height - 0.03 and not sim.damping  # settled on its feet

    def command(damping: int) -> bytes:
        msg = joint_command_t()
        msg.session, msg.num_joints, msg.damping = 7, sim.model.nu, damping
        msg.q = sim.data.qpos[sim.qadr].tolist()
        msg.dq = msg.tau = [0.0] * sim.model.nu
        msg.kp, msg.kd = [100.0] * sim.model.nu, [2.0] * sim.model.nu
        return msg.encode()

    robot._on_command("JOINT_COMMAND", command(1))
    robot.step()
    assert sim.damping and robot.damping
    robot._on_command("JOINT_COMMAND", command(0))
    for _ in range(5):
        robot.step()
    assert sim.damping and robot.commands == 2
    np.testing.assert_array_equal(sim._law[0], 0.0)  # Kp 0: damping only
