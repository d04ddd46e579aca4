"""Terrain in the fake robots: ``mpc-fake-robot --terrain`` over UDP and DDS, the LCM fake robot,
and the lockstep FakeMotorPlant; bad terrain gets one line and exit code 2."""

from __future__ import annotations

import json
import math

import pytest
from unitree_helpers import domain_id, free_udp_port

import robots
from hardware.fake import cli, lcm_robot
from hardware.fake.motor_plant import FakeMotorPlant


def slope_start_x(height: float, degrees: float) -> float:
    """Where a base at ``height`` over the ground starts when the robot stands on a slope:
    turned with the ground about the point under it, it leans back uphill."""
    return -height * math.sin(math.radians(degrees))


@pytest.mark.parametrize("robot, transport", [("go1", "udp"), ("go2", "dds")])
def test_mpc_fake_robot_serves_on_the_terrain_it_is_given(robot, transport, capsys):
    where = (["--port", str(free_udp_port())] if transport == "udp"
             else ["--domain-id", str(domain_id()), "--interface", "lo"])
    base_z = robots.load_model(robot).key("home").qpos[2]
    for terrain, x in (("flat", 0.0), ("slope_up_8", slope_start_x(base_z, 8))):
        code = cli.main(["--robot", robot, "--transport", transport, *where, "--start",
                         "standing", "--duration", "0.05", "--quiet", "--terrain", terrain])
        assert code == 0
        summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        # 50 ms with no command: the base has barely moved from where it started
        assert summary["base_xyz"][0] == pytest.approx(x, abs=0.01), terrain


@pytest.mark.parametrize("terrain, key", [
    ("{kind: ramp, slope: 60}", "'terrain.slope' must be > 0.0 and <= 45.0, got 60"),
    ("{kind: slabs, max_size: -0.2}", "'terrain.max_size' must be > 0.0"),
    ("{kind: heightfield, file: h.npy, size: [-1, 1]}", "'terrain.size[0]' must be > 0.0"),
    ("{kind: ramp, slope: 45.5}", "'terrain.slope' must be > 0.0 and <= 45.0, got 45.5"),
    ("{kind: heightfield, file: /nonexistent.npy}", "'terrain.file': no such file"),
    ("{kind: volcano}", "'terrain.kind' must be one of"),
    ("{kind: step, hieght: 0.1}", "unknown key 'terrain.hieght'"),
    ("[{kind: step", "--terrain: not a terrain name nor YAML"),
])
def test_bad_terrain_exits_2_with_one_line(terrain, key, capsys):
    code = cli.main(["--robot", "go1", "--transport", "udp", "--port", str(free_udp_port()),
                     "--terrain", terrain])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.startswith("mpc-fake-robot: error: --terrain") and key in err, err
    assert len(err.splitlines()) == 1
    code = lcm_robot.main(["--robot", "a1", "--no-mocap", "--terrain", terrain])
    err = capsys.readouterr().err.strip()
    assert code == 2 and key in err and len(err.splitlines()) == 1, err


def test_the_lcm_fake_robot_simulates_the_terrain():
    sim = lcm_robot.simulated_robot(robots.info("a1"), terrain="slope_down_4")
    base_z = robots.load_model("a1").key("home").qpos[2]
    assert sim.data.qpos[0] == pytest.approx(slope_start_x(base_z, -4))
    assert sim.model.geom("floor").pos[2] < -0.2  # the ground falls away ahead
    sim.step(sim.data.time)
    assert sim.data.qpos[0] == pytest.approx(slope_start_x(base_z, -4), abs=1e-3)


def test_fake_motor_plant_on_slabs_reports_the_robot_only():
    """The fake robot's world holds loose slabs (free bodies after the robot's); the plant
    reports the planning model's layout, from the truth and from the estimator alike."""
    planning = robots.load_planning_model("go1")
    terrain = {"kind": "slabs", "count": 4, "seed": 1}
    for base_state in (None, {"type": "kalman"}):
        plant = FakeMotorPlant(robots.info("go1"), delay=0.006, base_state=base_state,
                               terrain=terrain)
        assert plant.sim.model.nq == planning.nq + 4 * 7
        for _ in range(5):
            plant.step()
        state = plant.read_state()
        assert state.qpos.shape == (planning.nq,) and state.qvel.shape == (planning.nv,)
        assert state.qpos[2] == pytest.approx(plant.sim.data.qpos[2], abs=0.05)


def test_fake_motor_plant_stands_on_a_ramp_start():
    plant = FakeMotorPlant(robots.info("a1"), terrain="slope_up_4")
    base_z = robots.load_model("a1").key("home").qpos[2]
    assert plant.sim.data.qpos[0] == pytest.approx(slope_start_x(base_z, 4))
    assert plant.sim.terrain.ground_height(1.0) == pytest.approx(
        math.tan(math.radians(4)))
