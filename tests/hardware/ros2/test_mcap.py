"""run.mcap of real runs read back by two independent readers, the ``mcap`` reader with
``mcap-ros2-support`` (decoding by the schemas in the file) and ``rosbags`` (decoding by the
ROS 2 definitions it ships): every topic present, one message per recorded sample with its
time, and decodes equal to the recorded arrays."""

from __future__ import annotations

import logging
import math
from collections import defaultdict

import numpy as np
import pytest
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
from rosbags.rosbag2 import Reader
from rosbags.typesys import Stores, get_typestore
from scipy.spatial.transform import Rotation

from mpc.app.observers.observer_base import Observer
from mpc.app.record.reader import load_run
from mpc.app.run import run

STORE = get_typestore(Stores.ROS2_HUMBLE)
STATE_TOPICS = {"/odom": "nav_msgs/msg/Odometry", "/tf": "tf2_msgs/msg/TFMessage",
                "/joint_states": "sensor_msgs/msg/JointState",
                "/mpc/joint_commands": "sensor_msgs/msg/JointState"}
PLAN_TOPICS = {"/mpc/planned_path": "nav_msgs/msg/Path",
               "/mpc/plan_markers": "visualization_msgs/msg/MarkerArray",
               "/diagnostics": "diagnostic_msgs/msg/DiagnosticArray"}


class Warner(Observer):
    """Logs a warning at 1 s of plant time, so that the run has an event."""

    def __init__(self):
        self.done = False

    def on_state(self, report) -> None:
        if report.time >= 1.0 and not self.done:
            self.done = True
            logging.getLogger("test").warning("a planted warning at %.2f s", report.time)


def read_mcap(path):
    """{topic: [(log_time, decoded)]} by the mcap reader, and {topic: schema name}."""
    out, types = defaultdict(list), {}
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        for schema, channel, message, decoded in reader.iter_decoded_messages():
            out[channel.topic].append((message.log_time, decoded))
            types[channel.topic] = schema.name
    return out, types


def read_rosbags(path):
    """{topic: [(time, message)]} by rosbags, decoded with its shipped Humble definitions."""
    out = defaultdict(list)
    with Reader(path) as reader:
        for connection, t, raw in reader.messages():
            out[connection.topic].append((t, STORE.deserialize_cdr(raw, connection.msgtype)))
    return out


@pytest.fixture(scope="module")
def velocity_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("mcap") / "run"
    run("a1_velocity", ["runtime.mode=lockstep", "runtime.duration=5.0",
                        "command.source={type: scripted, profile: [[0, 0, 0, 0], "
                        "[1, 0.4, 0, 0.3]]}"], out=out, observers=[lambda s: Warner()])
    return load_run(out)


def test_every_topic_with_a_message_per_recorded_sample_at_its_time(velocity_run):
    r = velocity_run
    path = r.dir / "run.mcap"
    by_mcap, types = read_mcap(path)
    by_rosbags = read_rosbags(path)
    expected = {**STATE_TOPICS, **PLAN_TOPICS, "/mpc/command": "geometry_msgs/msg/TwistStamped",
                "/rosout": "rcl_interfaces/msg/Log"}
    assert types == expected
    assert set(by_rosbags) == set(expected)
    start = r.summary["start_time_unix_ns"]
    t0 = r.series["state_time"][0]
    state_ns = start + np.round((r.series["state_time"] - t0) * 1e9).astype(np.int64)
    plan_ns = start + np.round((r.series["plan_time"] - t0) * 1e9).astype(np.int64)
    assert r.summary["sim_time_s"] == pytest.approx(5.0, abs=0.01)
    for topic in expected:
        times = np.array([t for t, _ in by_mcap[topic]])
        assert [t for t, _ in by_rosbags[topic]] == times.tolist(), topic
        if topic in STATE_TOPICS or topic == "/mpc/command":
            assert np.abs(times - state_ns).max() <= 1, topic
        elif topic in PLAN_TOPICS:
            assert np.abs(times - plan_ns).max() <= 1, topic
    assert len(by_mcap["/odom"]) == len(r.series["state_time"]) == 501
    assert len(by_mcap["/diagnostics"]) == len(r.series["plan_time"])
    events = [(t, m.msg) for t, m in by_rosbags["/rosout"]]
    assert any("a planted warning" in text for _, text in events)
    assert [text for _, text in events] == [str(m) for m in r.series["event_message"]]


def test_decodes_equal_the_recorded_arrays(velocity_run):
    r = velocity_run
    s = r.series
    path = r.dir / "run.mcap"
    by_mcap, _ = read_mcap(path)
    by_rosbags = read_rosbags(path)
    joints = r.joints()
    for reader in (by_mcap, by_rosbags):
        odom = [m for _, m in reader["/odom"]]
        pos = np.array([[o.pose.pose.position.x, o.pose.pose.position.y,
                         o.pose.pose.position.z] for o in odom])
        assert np.array_equal(pos, s["state_qpos"][:, :3])
        quat = np.array([[o.pose.pose.orientation.w, o.pose.pose.orientation.x,
                          o.pose.pose.orientation.y, o.pose.pose.orientation.z] for o in odom])
        assert np.array_equal(quat, s["state_qpos"][:, 3:7])
        rot = Rotation.from_quat(s["state_qpos"][:, [4, 5, 6, 3]])
        body = np.einsum("nji,nj->ni", rot.as_matrix(), s["state_qvel"][:, :3])
        twist = np.array([[o.twist.twist.linear.x, o.twist.twist.linear.y,
                           o.twist.twist.linear.z] for o in odom])
        assert np.abs(twist - body).max() < 1e-12
        assert all(o.header.frame_id == "odom" and o.child_frame_id == "base_link"
                   for o in odom)
        js = [m for _, m in reader["/joint_states"]]
        assert list(js[0].name) == joints.names
        assert np.array_equal(np.array([list(m.position) for m in js]),
                              s["state_qpos"][:, joints.qpos])
        assert np.array_equal(np.array([list(m.velocity) for m in js]),
                              s["state_qvel"][:, joints.qvel])
        assert np.array_equal(np.array([list(m.effort) for m in js]), s["state_actuator_force"])
        ctrl = np.array([list(m.position) for _, m in reader["/mpc/joint_commands"]])
        assert np.array_equal(ctrl, s["state_ctrl"])
        cmd = np.array([[m.twist.linear.x, m.twist.linear.y, m.twist.angular.z]
                        for _, m in reader["/mpc/command"]])
        assert np.array_equal(cmd, s["state_command"])
        paths = [m for _, m in reader["/mpc/planned_path"]]
        base = np.array([[[p.pose.position.x, p.pose.position.y, p.pose.position.z]
                          for p in m.poses] for m in paths])
        assert np.array_equal(base, s["plan_base_path"].astype(float))
        markers = [m for _, m in reader["/mpc/plan_markers"]]
        feet = np.array([[[[p.x, p.y, p.z] for p in mk.points] for mk in m.markers
                          if mk.ns == "feet"] for m in markers])
        assert np.array_equal(feet, s["plan_foot_paths"].astype(float))
        diag = [m.status[0] for _, m in reader["/diagnostics"]]
        for name, key in (("cost", "plan_cost"), ("mu", "plan_mu"),
                          ("stage_cost", "plan_stage_cost")):
            got = np.array([float(next(kv.value for kv in d.values if kv.key == name))
                            for d in diag])
            assert np.array_equal(got, s[key], equal_nan=True), name
        phases = [str(p) for p in s["phase_names"]]
        timings = np.array([[float(next(kv.value for kv in d.values if kv.key == f"ms_{p}"))
                             for p in phases] for d in diag])
        assert np.array_equal(timings, s["plan_timings"], equal_nan=True)


@pytest.mark.slow
def test_goal_mode_has_the_goal_and_mpc_replay_and_plot_still_read_the_directory(tmp_path):
    out = tmp_path / "run"
    run("a1_trot", ["runtime.mode=lockstep", "runtime.duration=0.5"], out=out)
    r = load_run(out)
    by_rosbags = read_rosbags(r.dir / "run.mcap")
    goals = np.array([[m.pose.position.x, m.pose.position.y] for _, m in by_rosbags["/mpc/goal"]])
    assert np.array_equal(goals, r.series["plan_goal"])
    spheres = [mk for _, m in by_rosbags["/mpc/plan_markers"] for mk in m.markers
               if mk.ns == "goal"]
    assert len(spheres) == len(r.series["plan_time"])
    assert math.isfinite(spheres[0].pose.position.x)
    from mpc.app.plots.cli import main as plot_main

    assert plot_main([str(out), "--out", str(tmp_path / "plots")]) == 0
