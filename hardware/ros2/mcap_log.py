"""``run.mcap``: the run directory as ROS 2 messages in an MCAP file (Foxglove, ``ros2 bag``).

Written when the run ends, from the run directory the recorder has just written
(``timeseries.npz``, :mod:`mpc.app.record`), so it holds exactly the recorded samples: one
message per recorded state, plan and event, stamped with the run's clock (``Session.time_ns``:
the wall clock at the start plus plant time since; header stamps, log and publish times
alike). The file uses MCAP's ``ros2`` profile: ``ros2msg`` schemas (the message definitions,
:func:`hardware.ros2.messages.msgdef`) and ``cdr`` messages (the bytes a ROS 2 node would
have sent, :mod:`hardware.ros2.cdr`), zstd-compressed chunks.

=========================  =================================  ============================
topic                      type                               per
=========================  =================================  ============================
``/odom``                  nav_msgs/Odometry                  recorded state
``/tf``                    tf2_msgs/TFMessage                 recorded state
``/joint_states``          sensor_msgs/JointState             recorded state (effort: the
                                                              actuator forces, if known)
``/mpc/joint_commands``    sensor_msgs/JointState             recorded state: the control
                                                              in force (position targets,
                                                              or torques as effort)
``/mpc/command``           geometry_msgs/TwistStamped         recorded state (velocity
                                                              mode): the tracked command
``/mpc/planned_path``      nav_msgs/Path                      plan (every other knot)
``/mpc/plan_markers``      visualization_msgs/MarkerArray     plan: base and foot paths,
                                                              the goal
``/mpc/goal``              geometry_msgs/PoseStamped          plan (goal mode)
``/diagnostics``           diagnostic_msgs/DiagnosticArray    plan: status, costs, timings
``/rosout``                rcl_interfaces/Log                 event (warnings, errors)
=========================  =================================  ============================

Frames as the live publishers' (:mod:`hardware.ros2.convert`): ``odom`` and ``base_link``.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
from mcap.writer import CompressionType, Writer

from hardware.ros2 import cdr, convert
from hardware.ros2.messages import msgdef, ros_type
from mpc.app.observers.observer_base import Observer
from mpc.app.record.reader import Run, RunDirError, load_run

log = logging.getLogger(__name__)

FILE_NAME = "run.mcap"
ODOM, BASE = "odom", "base_link"


class McapLog(Observer):
    """Writes ``run.mcap`` into the run directory once the recorder has written it."""

    def __init__(self, run_dir: Path, epoch_ns: int, time_start: float):
        self.dir = Path(run_dir)
        self.epoch_ns = epoch_ns
        self.time_start = time_start

    def close(self, summary: dict) -> None:
        try:
            run = load_run(self.dir)
        except RunDirError as e:  # a run that failed before recording: nothing to convert
            log.debug("run.mcap is not written: %s", e)
            return
        try:
            path = write_mcap(run, self.epoch_ns, self.time_start)
        except Exception:  # the run's own results are written; this file is a view of them
            log.exception("run.mcap could not be written")
            return
        log.debug("wrote %s", path)


class _Channels:
    """An MCAP writer's schemas and channels, registered on first use."""

    def __init__(self, writer: Writer):
        self.writer = writer
        self.schemas: dict[type, int] = {}
        self.channels: dict[str, int] = {}
        self.counts: dict[str, int] = {}

    def add(self, topic: str, ns: int, message) -> None:
        cls = type(message)
        if cls not in self.schemas:
            self.schemas[cls] = self.writer.register_schema(
                ros_type(cls), "ros2msg", msgdef(cls).encode())
        if topic not in self.channels:
            self.channels[topic] = self.writer.register_channel(topic, "cdr", self.schemas[cls])
        n = self.counts.get(topic, 0)
        self.counts[topic] = n + 1
        self.writer.add_message(self.channels[topic], ns, cdr.encode(message), ns, n)


def write_mcap(run: Run, epoch_ns: int, time_start: float) -> Path:
    """Write ``run.mcap`` of loaded run directory ``run``; plant time t is stamped
    ``epoch_ns + (t − time_start)`` ns. Returns the file's path."""
    def ns(t: float) -> int:
        return epoch_ns + round((float(t) - time_start) * 1e9)

    series = run.series
    joints = run.joints()
    position_control = run.robot.control == "position"
    path = run.dir / FILE_NAME
    with open(path, "wb") as f:
        writer = Writer(f, compression=CompressionType.ZSTD)
        writer.start(profile="ros2", library="legged-mpc")
        out = _Channels(writer)
        force = series.get("state_actuator_force")
        command = series.get("state_command")
        for i, t in enumerate(series["state_time"]):
            stamp = ns(t)
            q, v, u = series["state_qpos"][i], series["state_qvel"][i], series["state_ctrl"][i]
            out.add("/odom", stamp, convert.odometry(stamp, q, v, ODOM, BASE))
            out.add("/tf", stamp, convert.transforms(stamp, q, ODOM, BASE))
            out.add("/joint_states", stamp, convert.joint_state(
                stamp, joints.names, q[joints.qpos], v[joints.qvel],
                None if force is None else force[i]))
            zeros = np.zeros(0)
            out.add("/mpc/joint_commands", stamp, convert.joint_state(
                stamp, joints.names, u if position_control else zeros, zeros,
                None if position_control else u))
            if command is not None and len(command):
                out.add("/mpc/command", stamp, convert.command(stamp, command[i], BASE))
        _write_plans(out, run, ns)
        for t, level, message in zip(series.get("event_time", []),
                                     series.get("event_level", []),
                                     series.get("event_message", []), strict=True):
            t = float(t) if np.isfinite(t) else float(series["state_time"][0])
            out.add("/rosout", ns(t), convert.log_entry(ns(t), str(level), str(message)))
        writer.finish()
    return path


def _write_plans(out: _Channels, run: Run, ns) -> None:
    """Path, markers, goal and status of every planner iteration."""
    s = run.series
    step = 2 * float(run.config.get("planner", {}).get("timestep", 0.01))  # every other knot
    base = s.get("plan_base_path")
    feet = s.get("plan_foot_paths")
    goal = s.get("plan_goal")
    phases = [str(p) for p in s["phase_names"]]
    terms = [str(t) for t in s["term_names"]]
    has_paths = base is not None and len(base) == len(s["plan_time"])
    has_goal = goal is not None and len(goal) == len(s["plan_time"])
    for i, t in enumerate(s["plan_time"]):
        stamp = ns(t)
        if has_paths:
            knots = [ns(t + k * step) for k in range(base.shape[1])]
            out.add("/mpc/planned_path", stamp, convert.base_path(stamp, knots, base[i], ODOM))
            out.add("/mpc/plan_markers", stamp, convert.plan_markers(
                stamp, ODOM, base[i], list(feet[i]), goal[i] if has_goal else None))
        if has_goal:
            out.add("/mpc/goal", stamp, convert.goal_pose(stamp, goal[i], ODOM))
        ok = bool(s["plan_ok"][i])
        values: dict[str, object] = {
            "ok": ok, "cost": float(s["plan_cost"][i]),
            "stage_cost": float(s["plan_stage_cost"][i]), "mu": float(s["plan_mu"][i]),
            "alpha": float(s["plan_alpha"][i]), "simulations": int(s["plan_simulations"][i]),
            "wall_time": float(s["plan_wall_time"][i])}
        values.update({f"ms_{p}": float(v) for p, v in zip(phases, s["plan_timings"][i],
                                                            strict=True)})
        values.update({f"cost_{n}": float(v) for n, v in zip(terms, s["plan_term_costs"][i],
                                                              strict=True)})
        out.add("/diagnostics", stamp, convert.status(
            stamp, "ok" if ok else "warn", "planned" if ok else "iteration discarded", values))
