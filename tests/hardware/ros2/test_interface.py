"""The ROS 2 interface's publishers and goal subscription over real DDS on loopback: every
published message is byte for byte what rosbags' serializer makes of the values a ROS 2 node
should see (computed here independently: scipy's rotations, REP-105 frames), at the
configured rates; goals from /goal_pose move the task's goal, bad ones are refused and
counted."""

from __future__ import annotations

import math
import time

import mujoco
import numpy as np
import pytest
from rosbags.typesys import Stores, get_typestore
from scipy.spatial.transform import Rotation
from unitree_helpers import wait_for

import robots
from common.trajectory import Trajectory
from hardware.ros2 import dds
from hardware.ros2 import messages as m
from hardware.ros2.interface import Ros2Interface
from mpc.app.observers.observer_base import PlanReport, StateReport, Status
from mpc.app.plants.plant_base import PlantState
from mpc.planner.planner_base import IterationStats
from mpc.tasks import make_task

STORE = get_typestore(Stores.ROS2_HUMBLE)
T = STORE.types
EPOCH = 1_700_000_000_000_000_000


def clock(t: float) -> int:
    return EPOCH + round(t * 1e9)


def ros_time(ns: int):
    return T["builtin_interfaces/msg/Time"](ns // 10**9, ns % 10**9)


def vec(cls, v):
    return T[f"geometry_msgs/msg/{cls}"](*map(float, v))


@pytest.fixture
def interface(ros2_settings):
    made = []

    def make(mode: str = "goal", **settings):
        for k, v in settings.items():
            setattr(ros2_settings, k, v)
        task = make_task("quadruped_flat", robots.info("a1"), mode=mode, goal=[1.0, 0.0])
        model = task.planning_model(0.01, False, 1.0)
        ros = Ros2Interface(ros2_settings, task, model, clock)
        made.append(ros)
        return ros, task, model

    yield make
    for ros in made:
        ros.close({})


@pytest.fixture
def readers(ros2_settings):
    dp = dds.participant(ros2_settings.domain_id, "lo")

    def make(topic: str, cls) -> dds.Reader:
        return dds.Reader(dp, topic, cls, depth=100)

    return make


def take_all(reader: dds.Reader, n: int, timeout: float = 3.0) -> list[bytes]:
    got: list[bytes] = []
    deadline = time.monotonic() + timeout
    while len(got) < n and time.monotonic() < deadline:
        got += [data for data, _, _ in reader.take(0.05)]
    return got


def state_report(model, t: float, seed: int = 0) -> StateReport:
    rng = np.random.default_rng(seed)
    qpos = model.key_qpos[0].copy()
    qpos[:3] = rng.normal(size=3)
    quat = rng.normal(size=4)
    qpos[3:7] = quat / np.linalg.norm(quat)
    qvel = rng.normal(size=model.nv)
    return StateReport(t, qpos, qvel, np.zeros(model.nu), np.zeros(4, bool),
                       actuator_force=rng.normal(size=model.nu))


def test_odometry_tf_and_joint_states_are_what_ros_expects(interface, readers):
    ros, _, model = interface()
    odom = readers("/odom", m.Odometry)
    tf = readers("/tf", m.TFMessage)
    joints = readers("/joint_states", m.JointState)
    assert wait_for(lambda: ros.odom.matched() and ros.tf.matched() and ros.joints.matched(),
                    3.0)
    report = state_report(model, 2.5)
    ros.on_state(report)
    q, v = report.qpos, report.qvel
    # independently: scipy's rotation (x, y, z, w), the twist in the child frame (REP-105)
    rot = Rotation.from_quat([q[4], q[5], q[6], q[3]])
    linear = rot.inv().apply(v[:3])
    ns = clock(2.5)
    header = T["std_msgs/msg/Header"](ros_time(ns), "odom")
    quat = T["geometry_msgs/msg/Quaternion"](q[4], q[5], q[6], q[3])
    expected_odom = T["nav_msgs/msg/Odometry"](
        header, "base_link",
        T["geometry_msgs/msg/PoseWithCovariance"](
            T["geometry_msgs/msg/Pose"](vec("Point", q[:3]), quat), np.zeros(36)),
        T["geometry_msgs/msg/TwistWithCovariance"](
            T["geometry_msgs/msg/Twist"](vec("Vector3", linear), vec("Vector3", v[3:6])),
            np.zeros(36)))
    got = take_all(odom, 1)
    assert len(got) == 1
    theirs = bytes(STORE.serialize_cdr(expected_odom, "nav_msgs/msg/Odometry"))
    assert len(got[0]) == len(theirs)
    # equal up to the last bit of the rotated twist (two rotation codes may round apart)
    decoded = STORE.deserialize_cdr(got[0], "nav_msgs/msg/Odometry")
    assert decoded.header.stamp.sec == ns // 10**9 and decoded.header.frame_id == "odom"
    assert decoded.child_frame_id == "base_link"
    lin = decoded.twist.twist.linear
    assert [lin.x, lin.y, lin.z] == pytest.approx(linear, abs=1e-12)
    decoded.twist.twist.linear = expected_odom.twist.twist.linear
    assert bytes(STORE.serialize_cdr(decoded, "nav_msgs/msg/Odometry")) == theirs
    expected_tf = T["tf2_msgs/msg/TFMessage"]([T["geometry_msgs/msg/TransformStamped"](
        header, "base_link", T["geometry_msgs/msg/Transform"](vec("Vector3", q[:3]), quat))])
    assert take_all(tf, 1) == [bytes(STORE.serialize_cdr(expected_tf, "tf2_msgs/msg/TFMessage"))]
    ids = model.actuator_trnid[:, 0]
    names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) for j in ids]
    assert names[0].startswith("FR") or names[0].startswith("FL")
    expected_js = T["sensor_msgs/msg/JointState"](
        T["std_msgs/msg/Header"](ros_time(ns), ""), names, q[model.jnt_qposadr[ids]],
        v[model.jnt_dofadr[ids]], report.actuator_force)
    assert take_all(joints, 1) == [bytes(STORE.serialize_cdr(expected_js,
                                                             "sensor_msgs/msg/JointState"))]


def test_the_state_is_published_at_its_rate_in_plant_time(interface, readers):
    ros, _, model = interface(state_rate=50.0)
    odom = readers("/odom", m.Odometry)
    assert wait_for(lambda: ros.odom.matched(), 3.0)
    for k in range(101):  # 1 s of reports at 100 Hz
        ros.on_state(state_report(model, k * 0.01))
    stamps = [STORE.deserialize_cdr(d, "nav_msgs/msg/Odometry").header.stamp
              for d in take_all(odom, 51)]
    assert len(stamps) == 51
    times = [(s.sec * 10**9 + s.nanosec - EPOCH) / 1e9 for s in stamps]
    assert np.diff(times) == pytest.approx(0.02, abs=1e-6)


def test_the_planned_path_and_the_status(interface, readers):
    ros, task, model = interface()
    path = readers("/mpc/planned_path", m.Path)
    status = readers("/diagnostics", m.DiagnosticArray)
    assert wait_for(lambda: ros.path.matched() and ros.status.matched(), 3.0)
    knots = 5
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    mujoco.mj_forward(model, data)
    nominal = Trajectory(np.arange(knots) * 0.01 + 1.0, np.tile(data.qpos, (knots, 1)),
                         np.zeros((knots, model.nv)), np.zeros((knots, model.na)),
                         np.zeros((knots, model.nu)), np.tile(data.sensordata, (knots, 1)),
                         np.zeros((knots, model.nv)))
    stats = IterationStats(7, 1.0, "ok", cost=3.5, timings={"total": 12.5, "derivatives": 4.0})
    ros.on_plan(PlanReport(stats, nominal, 1.0, 7, 100, 0.02))
    got = take_all(path, 1)
    msg = STORE.deserialize_cdr(got[0], "nav_msgs/msg/Path")
    base = data.sensordata[task.sensor("base_pos")]
    assert msg.header.frame_id == "odom" and len(msg.poses) == knots
    assert [msg.poses[0].pose.position.x, msg.poses[0].pose.position.y,
            msg.poses[0].pose.position.z] == pytest.approx(base)
    assert (msg.poses[4].header.stamp.sec * 10**9 + msg.poses[4].header.stamp.nanosec
            == clock(1.04))
    ros.on_plan(PlanReport(stats, nominal, 1.0, 8, 100, 0.02))  # within 1/path_rate: skipped
    assert take_all(path, 1, timeout=0.3) == []
    st = Status(PlantState(1.0, data.qpos, data.qvel, data.act), 7, 100, 0.02, stats, nominal,
                0.8, None, "tilt 0.9 rad", command=None)
    assert ros.tick(st)
    diag = STORE.deserialize_cdr(take_all(status, 1)[0], "diagnostic_msgs/msg/DiagnosticArray")
    entry = diag.status[0]
    assert entry.level == m.DIAGNOSTIC_ERROR and "tilt" in entry.message
    values = {kv.key: kv.value for kv in entry.values}
    assert float(values["iteration_ms"]) == 12.5 and values["status"] == "ok"
    assert float(values["goal_distance_m"]) == 0.8


def pose_stamped_bytes(x: float, y: float, frame: str = "odom") -> bytes:
    msg = T["geometry_msgs/msg/PoseStamped"](
        T["std_msgs/msg/Header"](ros_time(time.time_ns()), frame),
        T["geometry_msgs/msg/Pose"](vec("Point", (x, y, 0.0)),
                                    T["geometry_msgs/msg/Quaternion"](0.0, 0.0, 0.0, 1.0)))
    return bytes(STORE.serialize_cdr(msg, "geometry_msgs/msg/PoseStamped"))


def test_goals_from_goal_pose_move_the_task_goal_and_bad_ones_are_counted(interface,
                                                                           ros2_settings):
    ros, task, model = interface()
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    task.update(0.0, data.qpos, data.qvel)  # the stages are made at the first update
    dp = dds.participant(ros2_settings.domain_id, "lo")
    w = dds.Writer(dp, "/goal_pose", m.PoseStamped)
    assert wait_for(lambda: ros.goal_reader.matched(), 3.0)
    status = Status(PlantState(0.0, data.qpos, data.qvel, data.act), 0, 0, 0.0, None, None,
                    1.0, None, None)
    w.write_bytes(pose_stamped_bytes(2.0, -1.5))
    assert wait_for(lambda: ros.goals_accepted == 1, 3.0)
    ros.tick(status)
    assert task.goal.tolist() == [2.0, -1.5]
    for bad in (pose_stamped_bytes(1.0, 1.0, "map"), pose_stamped_bytes(math.nan, 0.0),
                pose_stamped_bytes(5000.0, 0.0)):
        w.write_bytes(bad)
    assert wait_for(lambda: ros.refused.total() == 3, 3.0)
    ros.tick(status)
    assert task.goal.tolist() == [2.0, -1.5]
    assert ros.stats()["goals_refused"] == {"foreign_frame": 1, "invalid": 2}


def test_velocity_mode_takes_no_goals_and_bad_topic_names_are_errors(interface):
    ros, _, _ = interface(mode="velocity")
    assert ros.goal_reader is None
    with pytest.raises(ValueError, match=r"ros2\.odom_topic"):
        interface(odom_topic="odom")


def test_a_fake_robot_with_its_estimator_publishes_its_estimate(ros2_settings, readers,
                                                                 tmp_path):
    """On a hardware config (the fake robot's motors and sensors, the config's own base-state
    estimator) /odom carries the estimate the controller runs on, as on a robot."""
    from hardware.fake.motor_plant import FakeMotorPlant
    from mpc.app.config import load_config
    from mpc.app.record.reader import load_run
    from mpc.app.run import run

    cfg = load_config("a1_hw", ["runtime.mode=lockstep", "runtime.duration=0.6",
                                "ros2.enabled=true", "ros2.interface=lo",
                                f"ros2.domain_id={ros2_settings.domain_id}"])
    plant = FakeMotorPlant(robots.info("a1"), base_state=cfg.plant["base_state"])
    odom = readers("/odom", m.Odometry)
    summary = run(cfg, out=tmp_path / "run", plant=plant)
    got = [STORE.deserialize_cdr(d, "nav_msgs/msg/Odometry") for d in take_all(odom, 31)]
    assert summary["ros2"]["published"]["/odom"] == len(got) == 31  # 0.6 s at 50 Hz, both ends
    s = load_run(tmp_path / "run").series
    x = np.array([o.pose.pose.position.x for o in got])
    assert np.array_equal(x, s["state_qpos"][::2, 0][:len(x)])  # every other 100 Hz sample
