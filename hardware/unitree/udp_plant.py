"""Hardware plant for the A1 and Go1 over the legacy low-level UDP protocol (pure Python).

Defaults are the robots' wired low-level addresses: robot 192.168.123.10:8007, this PC's
local port 8080 (the PC at 192.168.123.x). The robot must be in low-level mode (remote).
:class:`UnitreeUdpPlant` (``plant.type: unitree_udp``) runs the bridge, :class:`UdpBridge`, in a
process of its own unless ``link_process`` is false (tests), at niceness ``link_nice`` where the
system allows it; see :mod:`hardware.unitree.bridge` and :mod:`hardware.unitree.link_process`.
"""

from __future__ import annotations

import ipaddress
from typing import ClassVar

from hardware.estimation.sources import check_spec
from hardware.lowlevel import LowState, MotorCommand
from hardware.safety.layer import SafetyConfig
from hardware.unitree import legacy_packets
from hardware.unitree.bridge import UnitreeBridge
from hardware.unitree.plant_base import UnitreePlant
from hardware.unitree.udp_link import UdpLink, check_addresses
from robots.info import RobotInfo


class UnitreeUdpPlant(UnitreePlant):
    """``plant.type: unitree_udp``: :class:`UdpBridge` in a child process, or with
    ``link_process`` false in this one."""

    @staticmethod
    def check_options(robot: str, options: dict) -> None:
        """What can be checked before connecting: the robot speaks this protocol, addresses."""
        if robot not in legacy_packets.FORMATS:
            raise ValueError(f"the legacy UDP bridge speaks {', '.join(legacy_packets.FORMATS)}; "
                             f"{robot} needs plant type unitree_dds")
        check_addresses(options.get("robot_ip", "192.168.123.10"),
                        options.get("robot_port", 8007), options.get("local_port", 8080),
                        options.get("local_ip", "0.0.0.0"))
        check_spec(options.get("base_state"))

    @classmethod
    def simulated_robot(cls, options: dict) -> str | None:
        """A robot at a loopback address is a fake one on this machine."""
        ip = options.get("robot_ip", "192.168.123.10")
        if ipaddress.IPv4Address(ip).is_loopback:
            return f"plant.robot_ip {ip} is this machine: a fake robot"
        return None

    #: Bounds of the options, read by mpc.app.schema.check_kwargs (see mpc/app/schema.py).
    RANGES: ClassVar[dict[str, dict[str, float]]] = {
        **UnitreePlant.RANGES,
        "robot_port": {"min": 1, "max": 65535},
        "local_port": {"min": 0, "max": 65535},
    }

    def __init__(self, robot: RobotInfo, seed: int = 0, robot_ip: str = "192.168.123.10",
                 robot_port: int = 8007, local_port: int = 8080, local_ip: str = "0.0.0.0",
                 rate: float = 500.0, connect_timeout: float = 2.0,
                 kp: list[float] | None = None, kd: list[float] | None = None,
                 base_state: dict | None = None, log_file: str = "",
                 link_process: bool = True, link_nice: int = -10,
                 link_priority: int = 0,
                 safety: SafetyConfig | None = None):
        options = dict(robot_ip=robot_ip, robot_port=robot_port, local_port=local_port,
                       local_ip=local_ip, rate=rate, connect_timeout=connect_timeout, kp=kp,
                       kd=kd, base_state=base_state, log_file=log_file, safety=safety)
        super().__init__(UdpBridge, robot, options, link_process, link_nice,
                         link_priority)


class UdpBridge(UnitreeBridge):
    """The legacy UDP bridge, its link thread in the process that builds it; the options are
    :class:`UnitreeUdpPlant`'s (the common ones go to :class:`UnitreeBridge`)."""

    WIRE_LIMITS = (legacy_packets.TAU_WIRE[1], legacy_packets.KP_WIRE[1],
                   legacy_packets.KD_WIRE[1])

    def __init__(self, robot: RobotInfo, *, robot_ip: str, robot_port: int, local_port: int,
                 local_ip: str, **common):
        UnitreeUdpPlant.check_options(robot.name, {"robot_ip": robot_ip,
                                                   "robot_port": robot_port,
                                                   "local_port": local_port,
                                                   "local_ip": local_ip})
        self.fmt = legacy_packets.FORMATS[robot.name]
        safety = common.get("safety")
        self.dry_run = bool(safety and safety.dry_run)
        self.link = UdpLink(robot_ip, robot_port, local_port, local_ip, only_peer=True)
        try:
            super().__init__(robot, servo_family="legacy", send_while_connecting=True, **common)
        except Exception:
            self.link.close()
            raise

    def describe_peer(self) -> str:
        return f"{self.link.peer[0]}:{self.link.peer[1]} (UDP, {self.fmt.name} packets)"

    def _encode(self, cmd: MotorCommand) -> bytes:
        # A dry run still keeps the robot streaming state, with every motor off.
        return legacy_packets.encode_low_cmd(self.fmt, MotorCommand() if self.dry_run else cmd)

    def _write(self, packet: bytes) -> None:
        self.link.send(packet)

    def _receive(self, timeout: float) -> list[bytes]:
        """The datagrams the robot sent: the link's connected socket is given no one else's."""
        return [data for data, _ in self.link.receive(timeout)]

    def _decode(self, raw: bytes) -> LowState:
        return legacy_packets.decode_low_state(self.fmt, raw)

    def _close_link(self) -> None:
        self.link.close()
