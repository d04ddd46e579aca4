"""Velocity commands from ROS 2's ``/cmd_vel`` over DDS (``command.source.type: ros2``).

Reads ``geometry_msgs/Twist`` (or, with ``stamped``, ``geometry_msgs/TwistStamped``, where
recent ROS 2 releases are moving) on ``topic`` through the run's ROS 2 participant (the
``ros2:`` section: domain, interface), with rclcpp's default QoS (reliable, volatile,
keep-last 10) or, with ``qos: sensor_data``, best effort (which also hears best-effort
publishers). Of a twist in the base frame (REP-103: x forward, y left, z up) the command is
(linear.x, linear.y, angular.z); a legged base cannot follow the other three components,
which are ignored (but must be finite).

A background thread takes the messages; each accepted one is stamped on arrival, and
:meth:`Ros2Command.read` at plant time t reports it with stamp t − (its age on this machine's
monotonic clock), so the command filter's dead man sees how long the publishers have been
silent, in lockstep and in real time alike (as :mod:`hardware.lcm.command`). Refused and
counted (:meth:`Ros2Command.stats`, a warning at most once a second, see
:mod:`hardware.refusals`), the previous command staying in force until the dead man retires it:

- ``undecodable``: bytes that do not decode as the type;
- ``invalid``: a non-finite component, or one beyond ``max_value`` (no robot command is
  10 m/s; a publisher sending it is broken, and clipping would hand the robot its maximum);
- ``stale``: written more than ``max_age`` s before it arrived (its ``header.stamp`` when
  stamped and set, else the DDS source timestamp: both on the publisher's clock, so clocks
  must agree to ``max_age``, as ROS's tf needs anyway); also stamped more than ``max_age`` s
  in the future;
- ``out_of_order``: older than the last accepted message of the same publisher;
- ``wrong_type`` / ``incompatible_qos``: a publisher on the topic whose type is another
  (e.g. ``TwistStamped`` where ``Twist`` is read) or that is best effort where the reader is
  reliable: DDS never delivers its messages, so it is counted once per publisher, with a
  warning naming the type and the option that would hear it.

Latency (:meth:`Ros2Command.stats`): from each message's source timestamp to the first
:meth:`read` that hands it to the planner (the median is what ``scripts/eval_ros2.py``
reports).
"""

from __future__ import annotations

import logging
import math
import threading
import time as _time
from typing import ClassVar

import numpy as np

from hardware.refusals import INVALID, OUT_OF_ORDER, UNDECODABLE, Refusals
from hardware.ros2 import dds
from hardware.ros2.messages import Twist, TwistStamped, nanoseconds
from mpc.app.commands.command_base import CommandSource, VelocityCommand

log = logging.getLogger(__name__)

#: Refusal reasons of this source beyond those of :mod:`hardware.refusals`.
STALE = "stale"
WRONG_TYPE = "wrong_type"
INCOMPATIBLE_QOS = "incompatible_qos"
#: Latencies kept for the statistics (the latest ones).
_LATENCY_WINDOW = 10_000


class Ros2Command(CommandSource):
    name = "ros2"

    #: Bounds of the options, read by mpc.app.schema.check_kwargs (see mpc/app/schema.py).
    RANGES: ClassVar[dict[str, dict[str, float]]] = {
        "max_age": {"gt": 0.0, "max": 60.0}, "max_value": {"gt": 0.0, "max": 1000.0}}

    def __init__(self, topic: str = "/cmd_vel", stamped: bool = False, qos: str = "default",
                 max_age: float = 0.5, max_value: float = 10.0, ros2=None):
        """``ros2``: the config's ``ros2`` section (domain, interface); None: its defaults."""
        self.check_options({"topic": topic, "qos": qos})
        domain_id = getattr(ros2, "domain_id", 0)
        interface = getattr(ros2, "interface", "")
        dds.check_domain(domain_id, interface)
        self.topic = topic
        self.cls = TwistStamped if stamped else Twist
        self.max_age_ns = int(max_age * 1e9)
        self.max_value = float(max_value)
        dp = dds.participant(domain_id, interface)
        self.reader = dds.Reader(dp, topic, self.cls, qos)
        self.publications = dds.Publications(dp, topic, self.cls, qos)
        #: Messages refused, by reason.
        self.refused = Refusals(f"command.source ros2 {topic}", log)
        self.accepted = 0
        self._hint = ("set command.source.stamped: " + ("false" if stamped else "true"))
        self._qos_hint = "set command.source.qos: sensor_data to hear it"
        # (vx, vy, wz, monotonic arrival, source time ns, message number)
        self._latest: tuple[float, float, float, float, int, int] | None = None
        self._last_by_writer: dict[int, int] = {}
        self._handed = -1
        self._latency_ms: list[float] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._receive, name="ros2-command", daemon=True)
        self._thread.start()

    @classmethod
    def check_options(cls, options: dict) -> None:
        dds.check_topic(options.get("topic", "/cmd_vel"))
        dds.qos(options.get("qos", "default"))

    def _receive(self) -> None:
        polled = 0.0
        while not self._stop.is_set():
            try:
                for data, source_ns, writer in self.reader.take(0.05):
                    self.handle(data, source_ns, writer)
            except Exception as e:  # a bug or a failing take: counted and logged, never fatal
                self.refused.refuse("handler_error", f"{type(e).__name__}: {e}")
                _time.sleep(0.05)
            now = _time.monotonic()
            if now - polled >= 0.5:  # discovery of publishers DDS will not match
                polled = now
                self._check_publications()

    def _check_publications(self) -> None:
        try:
            found = self.publications.poll()
        except Exception as e:  # discovery data this version cannot read: not fatal
            self.refused.refuse("handler_error", f"{type(e).__name__}: {e}")
            return
        for reason, detail in found:
            hint = self._hint if reason == WRONG_TYPE else self._qos_hint
            self.refused.refuse(reason, f"a publisher on {self.topic} offers {detail}; {hint}")

    def handle(self, data: bytes, source_ns: int, writer: int = 0,
               now_ns: int | None = None) -> None:
        """Take one sample (its CDR bytes, DDS source timestamp and writer handle), as the
        receiving thread does; ``now_ns`` (wall clock, ns) for tests."""
        now_ns = _time.time_ns() if now_ns is None else now_ns
        try:
            msg = self.cls.deserialize(data)
        except Exception as e:  # any decoding failure of foreign bytes
            self.refused.refuse(UNDECODABLE, f"{len(data)} B, {type(e).__name__}")
            return
        written = source_ns
        if isinstance(msg, TwistStamped):
            stamp = nanoseconds(msg.header.stamp)
            written = stamp if stamp > 0 else source_ns  # an unset stamp: the DDS one
            twist = msg.twist
        else:
            twist = msg
        values = (twist.linear.x, twist.linear.y, twist.linear.z, twist.angular.x,
                  twist.angular.y, twist.angular.z)
        if not all(math.isfinite(v) for v in values):
            self.refused.refuse(INVALID, "non-finite velocity")
            return
        if max(abs(v) for v in values) > self.max_value:
            self.refused.refuse(INVALID, f"a component beyond {self.max_value:g}: "
                                f"{[round(v, 3) for v in values]}")
            return
        age = now_ns - written
        if abs(age) > self.max_age_ns:
            self.refused.refuse(STALE, f"written {age / 1e9:+.3f} s before it arrived "
                                "(a stale publisher, or clocks that disagree)")
            return
        last = self._last_by_writer.get(writer)
        if last is not None and written < last:
            self.refused.refuse(OUT_OF_ORDER, "older than this publisher's last message")
            return
        self._last_by_writer[writer] = written
        with self._lock:
            self.accepted += 1
            self._latest = (twist.linear.x, twist.linear.y, twist.angular.z, _time.monotonic(),
                            source_ns, self.accepted)

    def read(self, time: float) -> VelocityCommand | None:
        with self._lock:
            latest = self._latest
            if latest is None:
                return None
            vx, vy, wz, arrival, source_ns, number = latest
            if number != self._handed:  # first handed to the planner now
                self._handed = number
                self._latency_ms.append((_time.time_ns() - source_ns) / 1e6)
                del self._latency_ms[:-_LATENCY_WINDOW]
        return VelocityCommand(vx, vy, wz, time - (_time.monotonic() - arrival))

    def stats(self) -> dict:
        """Commands taken, messages refused by reason, and the latency from a message's
        writing to the planner's first read of it (ms; the latest commands)."""
        with self._lock:
            latency = np.array(self._latency_ms)
        return {"accepted": self.accepted, "refused": self.refused.as_dict(),
                "latency_ms_median": float(np.median(latency)) if latency.size else None,
                "latency_ms_p95": float(np.percentile(latency, 95)) if latency.size else None,
                "matched_publishers": self.reader.matched() if self.reader.reader else None}

    def close(self) -> None:
        self._stop.set()
        self._thread.join(1.0)
        self.reader.close()
