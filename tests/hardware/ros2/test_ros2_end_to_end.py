"""A ROS 2 machine drives the simulated A1: a second process that knows nothing of this project
(cyclonedds and its own IDL of geometry_msgs/Twist and nav_msgs/Odometry, written below)
publishes /cmd_vel at 0.5 m/s forward and reads /odom, while ``mpc-run`` takes its DDS
configuration from ``CYCLONEDDS_URI`` (``ros2.interface`` empty). The odometry it reads agrees
with the simulator's truth (the recorded state) within 0.05 m/s, and the robot walks at the
commanded speed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from unitree_helpers import domain_id

from mpc.app.record.reader import load_run
from mpc.tasks.task_base import body_velocity

TELEOP = textwrap.dedent('''
    """A ROS 2 teleop and odometry reader with nothing but cyclonedds."""
    import json, sys, time
    from dataclasses import dataclass, field
    import cyclonedds.idl as idl
    import cyclonedds.idl.annotations as annotate
    import cyclonedds.idl.types as types
    from cyclonedds.domain import DomainParticipant
    from cyclonedds.pub import DataWriter
    from cyclonedds.sub import DataReader
    from cyclonedds.topic import Topic
    from cyclonedds.qos import Policy, Qos

    @dataclass
    @annotate.final
    class Vector3(idl.IdlStruct, typename="geometry_msgs::msg::dds_::Vector3_"):
        x: types.float64
        y: types.float64
        z: types.float64

    @dataclass
    @annotate.final
    class Twist(idl.IdlStruct, typename="geometry_msgs::msg::dds_::Twist_"):
        linear: Vector3
        angular: Vector3

    @dataclass
    @annotate.final
    class Time(idl.IdlStruct, typename="builtin_interfaces::msg::dds_::Time_"):
        sec: types.int32
        nanosec: types.uint32

    @dataclass
    @annotate.final
    class Header(idl.IdlStruct, typename="std_msgs::msg::dds_::Header_"):
        stamp: Time
        frame_id: str

    @dataclass
    @annotate.final
    class Point(idl.IdlStruct, typename="geometry_msgs::msg::dds_::Point_"):
        x: types.float64
        y: types.float64
        z: types.float64

    @dataclass
    @annotate.final
    class Quaternion(idl.IdlStruct, typename="geometry_msgs::msg::dds_::Quaternion_"):
        x: types.float64
        y: types.float64
        z: types.float64
        w: types.float64

    @dataclass
    @annotate.final
    class Pose(idl.IdlStruct, typename="geometry_msgs::msg::dds_::Pose_"):
        position: Point
        orientation: Quaternion

    @dataclass
    @annotate.final
    class PoseWithCovariance(idl.IdlStruct,
                             typename="geometry_msgs::msg::dds_::PoseWithCovariance_"):
        pose: Pose
        covariance: types.array[types.float64, 36]

    @dataclass
    @annotate.final
    class TwistWithCovariance(idl.IdlStruct,
                              typename="geometry_msgs::msg::dds_::TwistWithCovariance_"):
        twist: Twist
        covariance: types.array[types.float64, 36]

    @dataclass
    @annotate.final
    class Odometry(idl.IdlStruct, typename="nav_msgs::msg::dds_::Odometry_"):
        header: Header
        child_frame_id: str
        pose: PoseWithCovariance
        twist: TwistWithCovariance

    domain, out, stop = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    dp = DomainParticipant(domain)  # configured by CYCLONEDDS_URI
    qos = Qos(Policy.Reliability.Reliable(max_blocking_time=100_000_000),
              Policy.Durability.Volatile, Policy.History.KeepLast(10))
    cmd = DataWriter(dp, Topic(dp, "rt/cmd_vel", Twist), qos=qos)
    odom = DataReader(dp, Topic(dp, "rt/odom", Odometry), qos=qos)
    import os
    with open(out, "w") as f:
        deadline = time.monotonic() + 600
        while not os.path.exists(stop) and time.monotonic() < deadline:
            cmd.write(Twist(Vector3(0.5, 0.0, 0.0), Vector3(0.0, 0.0, 0.0)))
            for o in odom.take(100):
                t = o.twist.twist
                f.write(json.dumps([o.header.stamp.sec * 10**9 + o.header.stamp.nanosec,
                                    o.header.frame_id, o.child_frame_id, t.linear.x,
                                    t.linear.y, t.angular.z]) + "\\n")
            time.sleep(0.05)
''')


def loopback_uri(domain: int) -> str:
    return (f'<CycloneDDS><Domain Id="{domain}"><General><Interfaces><NetworkInterface '
            f'name="lo"/></Interfaces></General><Discovery><Peers><Peer address="127.0.0.1"/>'
            f'</Peers></Discovery></Domain></CycloneDDS>')


@pytest.mark.slow
def test_a_ros2_teleop_drives_the_simulated_a1_and_reads_odometry_back(tmp_path):
    domain = domain_id()
    env = {**os.environ, "CYCLONEDDS_URI": loopback_uri(domain)}
    script, out, stop = tmp_path / "teleop.py", tmp_path / "odom.jsonl", tmp_path / "stop"
    script.write_text(TELEOP)
    teleop = subprocess.Popen([sys.executable, str(script), str(domain), str(out), str(stop)],
                              env=env)
    run_dir = tmp_path / "run"
    try:
        done = subprocess.run(
            [str(Path(sys.executable).parent / "mpc-run"), "a1_velocity", "--mode", "lockstep",
             "--duration", "6", "--quiet", "--out", str(run_dir),
             "--set", "command.source={type: ros2}", "--set", f"ros2.domain_id={domain}"],
            env=env, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr
    finally:
        stop.touch()
        teleop.wait(30)
    run = load_run(run_dir)
    assert not run.summary["fell"]
    source = run.summary["command_source"]
    assert source["accepted"] > 0 and source["refused"] == {}
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and all(frame == "odom" and child == "base_link" for _, frame, child, *_ in rows)
    # each odometry sample against the recorded (true) state at its time
    start, t0 = run.summary["start_time_unix_ns"], run.series["state_time"][0]
    times = t0 + (np.array([r[0] for r in rows]) - start) / 1e9
    index = np.searchsorted(run.series["state_time"], times - 1e-6)
    assert np.allclose(run.series["state_time"][index], times, atol=1e-6)
    truth = np.array([body_velocity(run.series["state_qpos"][i], run.series["state_qvel"][i])
                      for i in index])
    odom = np.array([r[3:] for r in rows])
    assert np.abs(odom - truth).max() < 0.05
    # walking at the commanded 0.5 m/s over the last 3 s
    late = times - t0 > 3.0
    assert late.sum() > 100
    assert abs(odom[late, 0].mean() - 0.5) < 0.1, odom[late, 0].mean()
    assert abs(odom[late, 0].mean() - truth[late, 0].mean()) < 0.05
