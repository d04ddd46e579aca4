"""The run's quantities as ROS 2 messages: what the live publishers send and run.mcap holds.

Frames (REP-105): the pose of the base in ``odom`` (the plant's floating base: the simulator's
truth, or on a robot the state estimator's), ``odom -> base_link`` on /tf, the twist in
``base_link`` (REP-103: x forward, y left, z up; SI units). MuJoCo's free joint gives the
linear velocity in the world frame and the angular velocity in the body frame, so the
twist's linear part is Rᵀ v (R the base's orientation) and its angular part is qvel[3:6] as
it is. Quaternions are reordered from MuJoCo's (w, x, y, z) to ROS's (x, y, z, w).
Covariances are zero ("not estimated"): the estimators here do not report one.

Times are nanoseconds on the run's clock (``Session.time_ns``: the wall clock at the start plus
plant time since).
"""

from __future__ import annotations

from collections.abc import Sequence

import mujoco
import numpy as np

from hardware.ros2.messages import (
    DIAGNOSTIC_ERROR,
    DIAGNOSTIC_OK,
    DIAGNOSTIC_WARN,
    MARKER_ADD,
    MARKER_DELETEALL,
    MARKER_LINE_STRIP,
    MARKER_SPHERE,
    ColorRGBA,
    DiagnosticArray,
    DiagnosticStatus,
    Header,
    JointState,
    KeyValue,
    Log,
    Marker,
    MarkerArray,
    Odometry,
    Path,
    Point,
    Pose,
    PoseStamped,
    PoseWithCovariance,
    Quaternion,
    TFMessage,
    Transform,
    TransformStamped,
    Twist,
    TwistStamped,
    TwistWithCovariance,
    Vector3,
    quaternion,
    stamp,
)

#: Name of the planner's entry in diagnostic_msgs (``ros2 topic echo /diagnostics``).
STATUS_NAME = "legged_mpc: planner"
#: Levels of the status.
LEVELS = {"ok": DIAGNOSTIC_OK, "warn": DIAGNOSTIC_WARN, "error": DIAGNOSTIC_ERROR}


def rotation(qpos: np.ndarray) -> np.ndarray:
    """R (3, 3) of the base's quaternion qpos[3:7] (world from body)."""
    R = np.empty(9)
    mujoco.mju_quat2Mat(R, np.asarray(qpos[3:7], dtype=float))
    return R.reshape(3, 3)


def odometry(ns: int, qpos: np.ndarray, qvel: np.ndarray, odom_frame: str,
             base_frame: str) -> Odometry:
    """nav_msgs/Odometry: pose in ``odom_frame``, twist in ``base_frame``."""
    v = rotation(qpos).T @ np.asarray(qvel[:3], dtype=float)
    w = qvel[3:6]
    return Odometry(
        Header(stamp(ns), odom_frame), base_frame,
        PoseWithCovariance(Pose(Point(*map(float, qpos[:3])), quaternion(qpos[3:7]))),
        TwistWithCovariance(Twist(Vector3(*map(float, v)), Vector3(*map(float, w)))))


def transforms(ns: int, qpos: np.ndarray, odom_frame: str, base_frame: str) -> TFMessage:
    """tf2_msgs/TFMessage with ``odom_frame -> base_frame``."""
    return TFMessage([TransformStamped(
        Header(stamp(ns), odom_frame), base_frame,
        Transform(Vector3(*map(float, qpos[:3])), quaternion(qpos[3:7])))])


def joint_state(ns: int, names: Sequence[str], position: np.ndarray, velocity: np.ndarray,
                effort: np.ndarray | None = None) -> JointState:
    """sensor_msgs/JointState (effort empty when not known)."""
    return JointState(Header(stamp(ns), ""), list(names), [float(v) for v in position],
                      [float(v) for v in velocity],
                      [] if effort is None else [float(v) for v in effort])


def command(ns: int, value: np.ndarray, base_frame: str) -> TwistStamped:
    """geometry_msgs/TwistStamped of a velocity command (v_x, v_y, ω_z) in the base frame."""
    vx, vy, wz = (float(v) for v in value)
    return TwistStamped(Header(stamp(ns), base_frame),
                        Twist(Vector3(vx, vy, 0.0), Vector3(0.0, 0.0, wz)))


def base_path(ns: int, times_ns: Sequence[int], positions: np.ndarray, frame: str,
              orientations: np.ndarray | None = None) -> Path:
    """nav_msgs/Path of the planned base: one pose per knot, stamped with the knot's time;
    the orientations (MuJoCo quaternions, (T, 4)) or the identity."""
    poses = []
    for i, (t, p) in enumerate(zip(times_ns, positions, strict=True)):
        q = Quaternion() if orientations is None else quaternion(orientations[i])
        poses.append(PoseStamped(Header(stamp(int(t)), frame),
                                 Pose(Point(*map(float, p)), q)))
    return Path(Header(stamp(ns), frame), poses)


def status(ns: int, level: str, message: str, values: dict[str, object]) -> DiagnosticArray:
    """diagnostic_msgs/DiagnosticArray with the planner's one status; numbers are written
    with ``repr`` (exactly as they were: ``float(value)`` gives them back)."""
    return DiagnosticArray(Header(stamp(ns), ""), [DiagnosticStatus(
        LEVELS[level], STATUS_NAME, message, "",
        [KeyValue(k, _text(v)) for k, v in values.items()])])


def _text(value) -> str:
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    return str(value)


_GOAL_COLOR = ColorRGBA(0.1, 0.8, 0.2, 0.9)
_FOOT_COLOR = ColorRGBA(1.0, 0.5, 0.0, 0.9)
_BASE_COLOR = ColorRGBA(0.2, 0.4, 1.0, 0.9)


def plan_markers(ns: int, frame: str, base: np.ndarray | None, feet: Sequence[np.ndarray],
                 goal: np.ndarray | None, ground: float = 0.0) -> MarkerArray:
    """visualization_msgs/MarkerArray of a plan: first DELETEALL (the previous plan's markers
    go), then the base path and each foot's path as line strips (namespaces ``base`` and
    ``feet``, ids by foot) and the goal as a sphere on the ground (namespace ``goal``)."""
    header = Header(stamp(ns), frame)
    markers = [Marker(header, action=MARKER_DELETEALL)]
    strips = ([] if base is None else [("base", 0, base, _BASE_COLOR)]) + [
        ("feet", i, path, _FOOT_COLOR) for i, path in enumerate(feet)]
    for name, ident, path, color in strips:
        markers.append(Marker(header, name, ident, MARKER_LINE_STRIP, MARKER_ADD,
                              scale=Vector3(0.01, 0.0, 0.0), color=color,
                              points=[Point(*map(float, p)) for p in path]))
    if goal is not None:
        markers.append(Marker(header, "goal", 0, MARKER_SPHERE, MARKER_ADD,
                              Pose(Point(float(goal[0]), float(goal[1]), ground)),
                              Vector3(0.1, 0.1, 0.1), _GOAL_COLOR))
    return MarkerArray(markers)


def goal_pose(ns: int, goal: np.ndarray, frame: str) -> PoseStamped:
    """geometry_msgs/PoseStamped of a goal (xy) on the ground."""
    return PoseStamped(Header(stamp(ns), frame), Pose(Point(float(goal[0]), float(goal[1]))))


#: Python logging levels to rcl_interfaces/Log levels.
_LOG_LEVELS = {"DEBUG": 10, "INFO": 20, "WARNING": 30, "ERROR": 40, "CRITICAL": 50}


def log_entry(ns: int, level: str, message: str, name: str = "legged_mpc") -> Log:
    """rcl_interfaces/Log (what /rosout carries) of an event of the run."""
    return Log(stamp(ns), _LOG_LEVELS.get(level, 30), name, message)
