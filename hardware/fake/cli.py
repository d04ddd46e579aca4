"""``mpc-fake-robot``: a MuJoCo-simulated Unitree robot serving the real low-level protocol.

    mpc-fake-robot --robot {a1,go1,go2,h1} --transport {udp,dds} [--host IP] [--port N]
                   [--domain-id N] [--interface NAME] [--truth-port N] [--start lying|standing]
                   [--controller IP:PORT]
                   [--gantry [--gantry-release S] [--gantry-lift M]] [--overlay FILE]
                   [--duration S] [--command-timeout S]
                   [--log FILE.npz]
                   [--stop-state-at S] [--corrupt-state-every N] [--estop-at S]
                   [--sticks "T:LX,LY,RX;..."]
                   [--net-faults SPEC [--proxy-port N]]
                   [--joint-speed-at S [--joint-speed RAD_S]] [--nan-state-at S]
                   [--tilt-at S [--tilt-roll DEG] [--tilt-pitch DEG]]
                   [--sensors realistic|ideal] [--sensor KEY=VALUE ...] [--seed N]
                   [--terrain NAME|YAML] [--events]

Runs until --duration, SIGINT or SIGTERM; then prints a one-line JSON summary (counts, rates,
final base position, whether it fell). With ``--events`` it first prints a line
``event NAME TIME`` (TIME: CLOCK_MONOTONIC, s) as each milestone of a run is first reached:
``serving`` (it listens, and stops cleanly on a signal from now on), ``connected`` (a command
arrived), ``ramp`` (a command drives the motors: not damping, not off),
``stood``, ``walking`` (the base moved 5 cm from where it stood), so that a test can act at a
given stage. Bad input prints one line and exits with code 2.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import signal
import sys
import time as _time

EXIT_OK, EXIT_USAGE = 0, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        self.exit(EXIT_USAGE, f"mpc-fake-robot: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="mpc-fake-robot", description="A simulated Unitree robot on loopback.")
    p.add_argument("--robot", required=True, help="a1, go1 (udp); go2, h1 (dds)")
    p.add_argument("--transport", required=True, choices=("udp", "dds"))
    p.add_argument("--host", default="127.0.0.1", help="UDP address to serve on")
    p.add_argument("--port", type=int, default=8007, help="UDP port to serve on")
    p.add_argument("--domain-id", type=int, default=1, help="DDS domain id (robot: 0)")
    p.add_argument("--interface", default="lo", help="DDS network interface")
    p.add_argument("--truth-port", type=int, help="stream the simulated base state to "
                   "127.0.0.1:PORT (test only)")
    p.add_argument("--start", choices=("lying", "standing"), default="lying",
                   help="lying: motors off, folded on the floor (as a robot at rest)")
    p.add_argument("--gantry", action="store_true",
                   help="hang the base from a stiff spring at its home pose")
    p.add_argument("--gantry-release", type=float, metavar="S",
                   help="with --gantry: let go S seconds after the first command (lowered "
                        "onto its feet once the controller holds the pose)")
    p.add_argument("--gantry-lift", type=float, default=0.0, metavar="M",
                   help="with --gantry: hang the base this much higher than its home pose "
                        "(0.3: a quadruped's feet swing free, for system identification)")
    p.add_argument("--overlay", metavar="FILE",
                   help="a model overlay (robots/overlay.py): this robot differs from the "
                        "nominal model as the file states (joints, motors, delay, payload)")
    p.add_argument("--controller", metavar="IP:PORT",
                   help="UDP: obey only commands from this address (others refused, counted)")
    p.add_argument("--duration", type=float, default=float("inf"), metavar="S")
    p.add_argument("--command-timeout", type=float, default=0.1, metavar="S",
                   help="no valid command for this long: motors to damping")
    p.add_argument("--log", metavar="FILE.npz", help="write everything received and sent")
    p.add_argument("--stop-state-at", type=float, metavar="S",
                   help="fault: stop publishing state S seconds after start")
    p.add_argument("--corrupt-state-every", type=int, default=0, metavar="N",
                   help="fault: corrupt the checksum of every N-th state")
    p.add_argument("--estop-at", type=float, metavar="S",
                   help="fault: hold the remote's L2+B from S seconds after start")
    p.add_argument("--sticks", type=sticks_profile, default=[], metavar='"T:LX,LY,RX;..."',
                   help="the remote's sticks: from T seconds after start hold the left stick "
                        "at (LX, LY) and the right stick's x at RX, each in [-1, 1] (up and "
                        "right positive), e.g. \"2:0,0.5,0;8:0,0,0\"")
    p.add_argument("--net-faults", metavar="SPEC", default="",
                   help="test only: faults on the wire, e.g. loss=0.3,delay=0.02,jitter=0.01,"
                   "duplicate=0.05,reorder=0.1,corrupt=0.01,silence_at=5,silence_for=1,seed=1 "
                   "(see hardware/fake/netfaults.py); DDS: on this robot's samples both ways; "
                   "UDP: through a relay on --proxy-port, where the bridge must send")
    p.add_argument("--proxy-port", type=int, default=0, metavar="N",
                   help="UDP port of the fault relay (with --net-faults and transport udp)")
    p.add_argument("--joint-speed-at", type=float, metavar="S",
                   help="fault: from S seconds after start, the first motor reports "
                        "--joint-speed rad/s")
    p.add_argument("--joint-speed", type=float, default=60.0, metavar="RAD_S")
    p.add_argument("--nan-state-at", type=float, metavar="S",
                   help="fault: from S seconds after start, the first motor reports a NaN angle")
    p.add_argument("--tilt-at", type=float, metavar="S",
                   help="fault: from S seconds after start, the IMU reports the base turned by "
                        "--tilt-roll and --tilt-pitch")
    p.add_argument("--tilt-roll", type=float, default=0.0, metavar="DEG")
    p.add_argument("--tilt-pitch", type=float, default=0.0, metavar="DEG")
    p.add_argument("--sensors", choices=("realistic", "ideal"), default="realistic",
                   help="realistic (default): the robot's sensor noise, bias, quantization and "
                        "latency (hardware.fake.sensors); ideal: the simulation's exact values")
    p.add_argument("--sensor", action="append", default=[], metavar="KEY=VALUE",
                   help="override one sensor figure (a field of hardware.fake.sensors.SensorSpec)")
    p.add_argument("--seed", type=int, default=0, help="sensor noise seed")
    p.add_argument("--terrain", metavar="NAME|YAML",
                   help="the ground ahead (mpc.app.plants.terrain): a shipped name (ramp_up_10, "
                        "step_up_8cm, slabs_5cm, ...) or a YAML/JSON mapping or list, e.g. "
                        "\"{kind: ramp, direction: up, slope: 10, start: 0.5, length: 1.5}\"")
    p.add_argument("--quiet", action="store_true", help="no log lines, only the summary")
    p.add_argument("--events", action="store_true",
                   help="print 'event NAME TIME' as the run reaches each milestone")
    return p


class Milestones:
    """The stages a run reaches at the robot, each printed once (see ``--events``)."""

    def __init__(self, fake):
        self.fake = fake
        self.seen: set[str] = set()
        self.stood_at = None

    def check(self) -> None:
        from hardware.fake.server import FakeRobot

        fake = self.fake
        xy = fake.sim.data.qpos[:2].copy()
        if fake.stood and self.stood_at is None:
            self.stood_at = xy
        reached = {
            "connected": bool(fake.log["cmd_t"]),
            "ramp": FakeRobot._active(fake.sim),
            "stood": fake.stood,
            "walking": self.stood_at is not None and math.dist(xy, self.stood_at) > 0.05,
        }
        for name, now in reached.items():
            if now and name not in self.seen:
                self.seen.add(name)
                when = fake.log["cmd_t"][0] if name == "connected" else _time.monotonic()
                print(f"event {name} {when:.6f}", flush=True)


def sticks_profile(text: str) -> list[tuple[float, float, float, float]]:
    """``"T:LX,LY,RX;..."`` as [(T, LX, LY, RX), ...]; ArgumentTypeError (one line) if not."""
    rows = []
    try:
        for item in filter(None, (part.strip() for part in text.split(";"))):
            at, _, sticks = item.partition(":")
            lx, ly, rx = (float(v) for v in sticks.split(","))
            rows.append((float(at), lx, ly, rx))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected T:LX,LY,RX[;T:LX,LY,RX...], got {text!r}") from None
    if any(not -1.0 <= v <= 1.0 for row in rows for v in row[1:]):
        raise argparse.ArgumentTypeError(f"stick values must be in [-1, 1], got {text!r}")
    return rows


def _address(text: str | None) -> tuple[str, int] | None:
    """``IP:PORT`` as a socket address; ValueError if it is not one."""
    if text is None:
        return None
    ip, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--controller {text!r} is not IP:PORT")
    return ip, int(port)


def _sensor_options(args) -> dict:
    """``--sensors``/``--sensor KEY=VALUE`` as SensorSpec fields; ValueError names the key."""
    from common import yamlfile

    out: dict = {"enabled": args.sensors == "realistic"}
    for item in args.sensor:
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"--sensor {item!r}: expected KEY=VALUE")
        out[key.strip()] = yamlfile.loads(value)
    return out


def terrain_option(text: str | None, option: str = "--terrain"):
    """``--terrain``'s value: a shipped terrain name or YAML (JSON) text, checked; ValueError
    with one line naming the key if it makes no sense."""
    import yaml

    from common import yamlfile
    from mpc.app.plants import terrain

    if text is None:
        return None
    try:
        value = yamlfile.loads(text)
    except yaml.YAMLError:
        raise ValueError(f"{option}: not a terrain name nor YAML: {text!r}") from None
    try:
        terrain.parse(value)
    except terrain.TerrainError as e:
        raise ValueError(f"{option}: {e}") from None
    return value


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO,
                        format="fake-robot %(levelname)s: %(message)s")
    import robots
    from hardware.fake import netfaults
    from hardware.fake.robot import default_sensors
    from hardware.fake.server import FakeRobot

    try:
        robot = robots.info(args.robot)
        overlay = robots.load_overlay(args.overlay, robot.name) if args.overlay else None
        sensors = default_sensors(robot.name, _sensor_options(args))
        ground = terrain_option(args.terrain)
        fake = FakeRobot(robot, args.transport, host=args.host, port=args.port,
                         domain_id=args.domain_id, interface=args.interface,
                         truth_port=args.truth_port, start=args.start,
                         command_timeout=args.command_timeout, gantry=args.gantry,
                         gantry_release=args.gantry_release,
                         controller=_address(args.controller),
                         sensors=sensors, seed=args.seed, terrain=ground, overlay=overlay,
                         gantry_lift=args.gantry_lift)
        faults = netfaults.Faults.parse(args.net_faults) if args.net_faults else None
        if faults is not None and args.transport == "udp" and not args.proxy_port:
            raise ValueError("--net-faults over UDP needs --proxy-port")
    except (ValueError, OSError) as e:
        print(f"mpc-fake-robot: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    faulty: netfaults.UdpFaultProxy | netfaults.FaultyDdsLink | None = None
    if faults is not None and args.transport == "udp":
        faulty = netfaults.UdpFaultProxy((args.host, args.port), faults, faults,
                                         port=args.proxy_port).start()
    elif faults is not None:
        faulty = fake.link = netfaults.FaultyDdsLink(fake.link, faults, faults)
    # A signal handler may run while the main thread holds a lock (an Event's, say), so it
    # only appends to a list: setting an Event from it can deadlock the program.
    stopping: list[bool] = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopping.append(True))
    fake.corrupt_every = args.corrupt_state_every
    logging.getLogger("fake").info("serving %s over %s", robot.name, args.transport)
    fake.start()
    t0 = _time.monotonic()
    events = [(args.stop_state_at, fake.stop_publishing),
              (args.estop_at, lambda: fake.press(["L2", "B"])),
              (args.joint_speed_at, lambda: fake.report_joint_speed(args.joint_speed)),
              (args.nan_state_at, fake.report_nan_angle),
              (args.tilt_at, lambda: fake.report_tilt(math.radians(args.tilt_roll),
                                                      math.radians(args.tilt_pitch)))]
    events += [(at, lambda lx=lx, ly=ly, rx=rx: fake.set_sticks(lx, ly, rx))
               for at, lx, ly, rx in args.sticks]
    milestones = Milestones(fake) if args.events else None
    if milestones is not None:
        print(f"event serving {_time.monotonic():.6f}", flush=True)
    while not stopping and fake.thread.is_alive() and _time.monotonic() - t0 < args.duration:
        if milestones is not None:
            milestones.check()
        for i, (at, action) in enumerate(events):
            if at is not None and _time.monotonic() - t0 >= at:
                action()
                events[i] = (None, action)
        _time.sleep(0.005)
    fake.stop()
    if isinstance(faulty, netfaults.UdpFaultProxy):
        faulty.stop()
    if args.log:
        fake.write_log(args.log)
    summary = fake.summary()
    if faulty is not None:
        summary["net_faults"] = faulty.counts()
    print(json.dumps(summary), flush=True)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
