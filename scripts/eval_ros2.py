"""What the ROS 2 interface costs and how fast /cmd_vel reaches the planner, in real time.

    .venv/bin/python scripts/eval_ros2.py [--config a1_velocity] [--duration 20]
        [--rate 20] [--domain 77]

One realtime run of the simulated robot with ``command.source.type: ros2`` (which turns the
ROS 2 interface on with its default rates) on loopback, driven by a publisher in another
process (cyclonedds only) that sends a new ``geometry_msgs/Twist`` on /cmd_vel every
1/``--rate`` s (forward speeds stepping between 0.2 and 0.5 m/s). Reported:

- latency from /cmd_vel to the planner's command: from each message's DDS source timestamp
  (the publisher's write, same clock on loopback) to the planner's first read of it (the
  source's ``latency_ms_median`` / ``_p95``); the planner reads the command at the start of
  each iteration, so the wait for the next iteration (about half a planning period on
  average) is part of it;
- CPU of the publishers: the thread CPU time (``time.thread_time``) spent in the interface's
  hooks (state at ``ros2.state_rate``, plan at ``ros2.path_rate``, status at
  ``ros2.status_rate``), over the run's wall time, as % of one core;
- the time to write run.mcap at the end, per second of run.

Timings on a shared, loaded machine are comparable only as ratios measured in one run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

PUBLISHER = textwrap.dedent('''
    import sys, time
    from dataclasses import dataclass
    import cyclonedds.idl as idl
    import cyclonedds.idl.annotations as annotate
    import cyclonedds.idl.types as types
    from cyclonedds.domain import DomainParticipant
    from cyclonedds.pub import DataWriter
    from cyclonedds.qos import Policy, Qos
    from cyclonedds.topic import Topic

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

    domain, period, stop = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    dp = DomainParticipant(domain)
    qos = Qos(Policy.Reliability.Reliable(max_blocking_time=100_000_000),
              Policy.Durability.Volatile, Policy.History.KeepLast(10))
    w = DataWriter(dp, Topic(dp, "rt/cmd_vel", Twist), qos=qos)
    import os
    k = 0
    while not os.path.exists(stop):
        k += 1
        w.write(Twist(Vector3(0.2 + 0.1 * (k % 4), 0.0, 0.0), Vector3(0.0, 0.0, 0.0)))
        time.sleep(period)
''')


def loopback_uri(domain: int) -> str:
    return (f'<CycloneDDS><Domain Id="{domain}"><General><Interfaces><NetworkInterface '
            f'name="lo"/></Interfaces></General><Discovery><Peers><Peer address="127.0.0.1"/>'
            f'</Peers></Discovery></Domain></CycloneDDS>')


class CpuMeter:
    """Wraps the interface's hooks and adds up the CPU time of the threads that call them."""

    def __init__(self, interface):
        self.seconds = {"on_state": 0.0, "on_plan": 0.0, "tick": 0.0}
        for name in self.seconds:
            setattr(interface, name, self._timed(name, getattr(interface, name)))

    def _timed(self, name, hook):
        def timed(*args):
            start = time.thread_time()
            try:
                return hook(*args)
            finally:
                self.seconds[name] += time.thread_time() - start
        return timed


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", default="a1_velocity")
    p.add_argument("--duration", type=float, default=20.0, help="run length (s)")
    p.add_argument("--rate", type=float, default=20.0, help="/cmd_vel messages per second")
    p.add_argument("--domain", type=int, default=77, help="DDS domain id")
    args = p.parse_args()
    os.environ["CYCLONEDDS_URI"] = loopback_uri(args.domain)

    from mpc.app.record.reader import load_run
    from mpc.app.run import run

    meters = []

    def meter(session):
        interface = next(o for o in session.observers if type(o).__name__ == "Ros2Interface")
        meters.append(CpuMeter(interface))
        from mpc.app.observers.observer_base import Observer

        return Observer()

    with tempfile.TemporaryDirectory() as tmp:
        stop = Path(tmp) / "stop"
        script = Path(tmp) / "publisher.py"
        script.write_text(PUBLISHER)
        publisher = subprocess.Popen([sys.executable, str(script), str(args.domain),
                                      str(1.0 / args.rate), str(stop)])
        try:
            out = Path(tmp) / "run"
            summary = run(args.config, ["runtime.mode=realtime",
                                        f"runtime.duration={args.duration}",
                                        "command.source={type: ros2}",
                                        f"ros2.domain_id={args.domain}"],
                          out=out, observers=[meter])
            mcap_start = time.perf_counter()
            from hardware.ros2.mcap_log import write_mcap

            write_mcap(load_run(out), summary["start_time_unix_ns"],
                       load_run(out).series["state_time"][0])
            mcap_s = time.perf_counter() - mcap_start
        finally:
            stop.touch()
            publisher.wait(10)
    source = summary["command_source"]
    wall = summary["loop_wall_time_s"]
    cpu = meters[0].seconds
    print(f"config {args.config}, realtime {args.duration:g} s, planning "
          f"{summary['planning_rate_hz']} Hz, iteration median "
          f"{summary['iteration_ms_median']:.1f} ms, fell: {summary['fell']}")
    print(f"/cmd_vel -> planner: median {source['latency_ms_median']:.1f} ms, p95 "
          f"{source['latency_ms_p95']:.1f} ms ({source['accepted']} messages, refused "
          f"{source['refused'] or 'none'})")
    total = sum(cpu.values())
    print(f"publishers' CPU: {100 * total / wall:.2f} % of a core over {wall:.1f} s "
          f"(state {100 * cpu['on_state'] / wall:.2f} %, plan {100 * cpu['on_plan'] / wall:.2f}"
          f" %, status {100 * cpu['tick'] / wall:.2f} %); published "
          f"{summary['ros2']['published']}")
    print(f"run.mcap: {mcap_s:.2f} s to write, {mcap_s / summary['sim_time_s']:.3f} s per s "
          f"of run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
