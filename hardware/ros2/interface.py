"""The run as a ROS 2 participant (``ros2.enabled``, or a ``ros2`` command source).

Publishes, with rclcpp's default QoS (reliable, volatile, keep-last 10; /tf keep-last 100 as
tf2_ros' broadcaster), which both reliable and best-effort (sensor-data) subscribers match:

==========================  =============================  =================================
topic (``ros2.*_topic``)    type                           rate
==========================  =============================  =================================
``/odom``                   nav_msgs/Odometry              ``ros2.state_rate`` (50 Hz)
``/joint_states``           sensor_msgs/JointState         ``ros2.state_rate``
``/tf``                     tf2_msgs/TFMessage             ``ros2.state_rate``
``/mpc/planned_path``       nav_msgs/Path                  ``ros2.path_rate`` (10 Hz)
``/diagnostics``            diagnostic_msgs/DiagnosticArr  ``ros2.status_rate`` (1 Hz)
==========================  =============================  =================================

(rates in plant time for the state, wall time for the plan and status; frames and twist as
:mod:`hardware.ros2.convert` says), and in goal mode takes goals from ``/goal_pose``
(geometry_msgs/PoseStamped, the topic RViz's and Foxglove's "2D Goal Pose" tools publish):
the goal moves to the pose's x, y as a viewer's drag moves it, applied in the run's main
thread. A goal is refused and counted (``summary["ros2"]``) if it does not decode, is not
finite or is beyond ±1000 m (the task's own bound), or is in a frame other than
``ros2.odom_frame`` (or the empty frame): nothing here knows where ``map`` is.

Everything is published from the thread that reports it (the state from the loop's thread at
the recording rate, the plan from the planner's thread) and costs that thread the
serialization: ``scripts/eval_ros2.py`` measures it (the docs give the figure).
"""

from __future__ import annotations

import logging
import math
import threading
import time as _time
from collections.abc import Callable

import mujoco
import numpy as np

from hardware.refusals import INVALID, UNDECODABLE, Refusals
from hardware.ros2 import convert, dds
from hardware.ros2.messages import (
    DiagnosticArray,
    JointState,
    Odometry,
    Path,
    PoseStamped,
    TFMessage,
)
from mpc.app.observers.observer_base import Observer, PlanReport, StateReport, Status
from mpc.tasks.task_base import Task

log = logging.getLogger(__name__)

#: Largest goal coordinate taken (m): the task's own bound on goals.
MAX_GOAL = 1000.0
FOREIGN_FRAME = "foreign_frame"


def actuated_joints(model: mujoco.MjModel) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Names, qpos and qvel indices of the joints the actuators drive, in actuator order."""
    ids = model.actuator_trnid[:, 0]
    names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) for j in ids]
    return names, model.jnt_qposadr[ids], model.jnt_dofadr[ids]


class Ros2Interface(Observer):
    """Publishers of the run's state, plan and status, and the goal subscription."""

    def __init__(self, settings, task: Task, model: mujoco.MjModel,
                 clock: Callable[[float], int]):
        """``settings``: the config's ``ros2`` section; ``model``: the planning model (joint
        names and order); ``clock``: plant time to ns on the run's clock."""
        self.settings = s = settings
        for name in ("odom_topic", "joint_states_topic", "tf_topic", "path_topic",
                     "status_topic", "goal_topic"):
            try:
                dds.check_topic(getattr(s, name))
            except ValueError as e:
                raise ValueError(f"ros2.{name}: {e}") from None
        for name in ("odom_frame", "base_frame"):
            if not getattr(s, name):
                raise ValueError(f"ros2.{name} must not be empty")
        self.task = task
        self.clock = clock
        self.joint_names, self.qpos_index, self.qvel_index = actuated_joints(model)
        self.base_rows = _sensor(task, "base_pos")
        dp = dds.participant(s.domain_id, s.interface)
        self.odom = dds.Writer(dp, s.odom_topic, Odometry)
        self.joints = dds.Writer(dp, s.joint_states_topic, JointState)
        self.tf = dds.Writer(dp, s.tf_topic, TFMessage, depth=100)
        self.path = dds.Writer(dp, s.path_topic, Path)
        self.status = dds.Writer(dp, s.status_topic, DiagnosticArray)
        self._next_state = -math.inf  # plant time
        self._next_path = self._next_status = -math.inf  # wall time
        self._last_plan: PlanReport | None = None
        #: Goals refused, by reason.
        self.refused = Refusals(f"ros2 {s.goal_topic}", log)
        self.goals_accepted = 0
        self._goal: np.ndarray | None = None  # received, not yet handed to the task
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.goal_reader = None
        if task.goal is not None:  # goal mode
            self.goal_reader = dds.Reader(dp, s.goal_topic, PoseStamped)
            self._thread = threading.Thread(target=self._receive_goals, name="ros2-goal",
                                            daemon=True)
            self._thread.start()

    # --- publishing ---------------------------------------------------------------------
    def on_state(self, report: StateReport) -> None:
        if report.time + 1e-9 < self._next_state:  # 1 ns: sums of record periods round
            return
        self._next_state = max(self._next_state, report.time) + 1.0 / self.settings.state_rate
        s = self.settings
        ns = self.clock(report.time)
        q, v = report.qpos, report.qvel
        self.odom.write(convert.odometry(ns, q, v, s.odom_frame, s.base_frame))
        self.tf.write(convert.transforms(ns, q, s.odom_frame, s.base_frame))
        self.joints.write(convert.joint_state(ns, self.joint_names, q[self.qpos_index],
                                              v[self.qvel_index], report.actuator_force))

    def on_plan(self, report: PlanReport) -> None:
        self._last_plan = report
        now = _time.monotonic()
        nominal = report.nominal
        if now < self._next_path or nominal is None or self.base_rows is None:
            return
        self._next_path = now + 1.0 / self.settings.path_rate
        times = [self.clock(t) for t in nominal.time]
        self.path.write(convert.base_path(times[0], times, nominal.sensordata[:,
                                          self.base_rows], self.settings.odom_frame,
                                          nominal.qpos[:, 3:7]))

    def tick(self, status: Status) -> bool:
        goal = None
        with self._lock:
            goal, self._goal = self._goal, None
        if goal is not None:
            self.task.set_goal(goal)
            log.info("ros2: goal set to (%.3f, %.3f) from %s", *goal, self.settings.goal_topic)
        now = _time.monotonic()
        if now >= self._next_status:
            self._next_status = now + 1.0 / self.settings.status_rate
            self.status.write(self.status_message(status))
        return True

    def status_message(self, status: Status) -> DiagnosticArray:
        """The planner's status: error once the run is stopping (a fall, a trip), warning
        while the last iteration was discarded, else ok."""
        last = status.last
        level, message = "ok", "planning"
        if status.stopped is not None:
            level, message = "error", f"stopping: {status.stopped}"
        elif last is not None and last.status != "ok":
            level, message = "warn", f"iteration discarded: {last.status}"
        values: dict[str, object] = {
            "iterations": status.iterations, "feedback_steps": status.feedback_steps,
            "policy_age_ms": status.policy_age * 1e3}
        if last is not None:
            values.update({"iteration": last.iteration, "status": last.status,
                           "cost": last.cost, "iteration_ms": last.timings.get("total", math.nan),
                           "derivative_ms": last.timings.get("derivatives", math.nan)})
        if math.isfinite(status.goal_distance):
            values["goal_distance_m"] = status.goal_distance
        if status.command is not None:
            values.update(zip(("command_vx", "command_vy", "command_yaw_rate"),
                              map(float, status.command), strict=True))
        return convert.status(self.clock(status.state.time), level, message, values)

    # --- goals ----------------------------------------------------------------------------
    def _receive_goals(self) -> None:
        self.goal_reader.serve(self.handle_goal, self._stop, self.refused, 0.1)

    def handle_goal(self, data: bytes) -> None:
        """Take one goal message (CDR bytes), as the receiving thread does."""
        try:
            msg = PoseStamped.deserialize(data)
        except Exception as e:  # any decoding failure of foreign bytes
            self.refused.refuse(UNDECODABLE, f"{len(data)} B, {type(e).__name__}")
            return
        frame = msg.header.frame_id
        if frame not in ("", self.settings.odom_frame):
            self.refused.refuse(FOREIGN_FRAME, f"goal in frame {frame!r}; goals are taken in "
                                f"{self.settings.odom_frame!r}")
            return
        xy = np.array([msg.pose.position.x, msg.pose.position.y])
        if not (np.all(np.isfinite(xy)) and np.all(np.abs(xy) <= MAX_GOAL)):
            self.refused.refuse(INVALID, f"goal {xy.tolist()}")
            return
        with self._lock:
            self._goal = xy
            self.goals_accepted += 1

    def stats(self) -> dict:
        return {"published": {w.topic: w.published for w in
                              (self.odom, self.joints, self.tf, self.path, self.status)},
                "goals_accepted": self.goals_accepted, "goals_refused": self.refused.as_dict()}

    def close(self, summary: dict) -> None:
        """Stop taking goals; the counts go to the summary as ``ros2`` (observers close before
        the recorder writes it)."""
        self._stop.set()
        if self.goal_reader is not None:
            self._thread.join(1.0)
            self.goal_reader.close()
        summary["ros2"] = self.stats()


def _sensor(task: Task, name: str) -> slice | None:
    try:
        return task.sensor(name)
    except KeyError:
        return None
