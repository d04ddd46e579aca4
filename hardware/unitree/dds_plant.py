"""Hardware plant for the Go2 and H1 over Unitree SDK2 (``unitree_go`` LowCmd_/LowState_ on
rt/lowcmd and rt/lowstate) with cyclonedds 11.0.1 and the project's own types.

Defaults are a real robot's: domain 0 on the wired interface (this PC at 192.168.123.99/24).
Before low-level control the robot's motion service must be released
(``release_motion_service: true``); a fake robot has no such service. Any participant on the
domain may publish rt/lowstate: the bridge follows the writer of the first sample it takes (by
the writer's instance handle in the sample info; its GUID is logged) and refuses and counts
every other writer's samples (``refused_packets``); a robot whose DDS writer restarts is
refused too, and the stale-state watchdog trips. The link runs in a
process of its own unless ``link_process`` is false, as for the UDP bridge:
:class:`UnitreeDdsPlant` (``plant.type: unitree_dds``) runs :class:`DdsBridge` there.
"""

from __future__ import annotations

import logging
from typing import ClassVar

from hardware.estimation.sources import check_spec
from hardware.lowlevel import LowState, MotorCommand
from hardware.safety.layer import SafetyConfig
from hardware.unitree import sdk2_messages, sdk2_types
from hardware.unitree.bridge import UnitreeBridge
from hardware.unitree.dds_link import DdsLink, check_domain
from hardware.unitree.plant_base import UnitreePlant
from robots.info import RobotInfo

log = logging.getLogger(__name__)

FAMILIES = {"go2": "go2", "h1": "h1"}


class UnitreeDdsPlant(UnitreePlant):
    """``plant.type: unitree_dds``: :class:`DdsBridge` in a child process, or with
    ``link_process`` false in this one."""

    @staticmethod
    def check_options(robot: str, options: dict) -> None:
        """What can be checked before connecting: the robot speaks this protocol, the network
        interface exists, the domain id is valid."""
        if robot not in FAMILIES:
            raise ValueError(f"the SDK2 DDS bridge speaks {', '.join(FAMILIES)}; {robot} needs "
                             f"plant type unitree_udp")
        check_domain(options.get("domain_id", 0), options.get("interface", "eth0"))
        check_spec(options.get("base_state"))

    @classmethod
    def simulated_robot(cls, options: dict) -> str | None:
        """No robot's traffic comes in on the loopback interface: a fake robot."""
        if options.get("interface", "eth0") == "lo":
            return "plant.interface lo carries no robot's traffic: a fake robot"
        return None

    #: Bounds of the options, read by mpc.app.schema.check_kwargs (see mpc/app/schema.py).
    RANGES: ClassVar[dict[str, dict[str, float]]] = {
        **UnitreePlant.RANGES,
        "domain_id": {"min": 0, "max": 232},
    }

    def __init__(self, robot: RobotInfo, seed: int = 0, interface: str = "eth0",
                 domain_id: int = 0, rate: float = 500.0, connect_timeout: float = 3.0,
                 release_motion_service: bool = False, kp: list[float] | None = None,
                 kd: list[float] | None = None, base_state: dict | None = None,
                 log_file: str = "", link_process: bool = True, link_nice: int = -10,
                 link_priority: int = 0,
                 safety: SafetyConfig | None = None):
        options = dict(interface=interface, domain_id=domain_id, rate=rate,
                       connect_timeout=connect_timeout,
                       release_motion_service=release_motion_service, kp=kp, kd=kd,
                       base_state=base_state, log_file=log_file, safety=safety)
        super().__init__(DdsBridge, robot, options, link_process, link_nice,
                         link_priority)


class DdsBridge(UnitreeBridge):
    """The SDK2 DDS bridge, its link thread in the process that builds it; the options are
    :class:`UnitreeDdsPlant`'s (the common ones go to :class:`UnitreeBridge`)."""

    def __init__(self, robot: RobotInfo, *, interface: str, domain_id: int,
                 release_motion_service: bool, **common):
        UnitreeDdsPlant.check_options(robot.name, {"domain_id": domain_id,
                                                   "interface": interface})
        safety = common.get("safety")
        dry_run = bool(safety and safety.dry_run)
        self.where = f"DDS domain {domain_id} on {interface}"
        #: Instance handle of the rt/lowstate writer followed (None: none heard yet).
        self.writer: int | None = None
        self._guids: dict[int, str] = {}
        self.link = DdsLink(domain_id, interface, "rt/lowstate", sdk2_types.LowState_,
                            None if dry_run else "rt/lowcmd", sdk2_types.LowCmd_)
        try:
            if release_motion_service and not dry_run:
                from hardware.unitree.motion_switcher import release_motion_service as release

                release(self.link.dp)
            super().__init__(robot, servo_family=FAMILIES[robot.name],
                             send_while_connecting=False, **common)
        except Exception:
            self.link.close()
            raise

    def describe_peer(self) -> str:
        return f"rt/lowstate ({self.where})"

    def _encode(self, cmd: MotorCommand) -> bytes | None:
        if self.link.writer is None:  # dry run: no writer exists
            return None
        return sdk2_messages.encode_low_cmd(cmd)

    def _write(self, packet: bytes) -> None:
        self.link.send(packet)

    def _packet_crc(self, packet: bytes) -> int:
        return sdk2_messages.LOW_CMD_LAYOUT.stored_crc(packet)

    def _receive(self, timeout: float) -> list[bytes]:
        """The samples of the robot's writer: the first one heard (see the module docstring)."""
        out = []
        for data, writer in self.link.receive_from(timeout):
            if self.writer is None:
                self.writer = writer
                others = self.link.matched_writers() - 1
                log.info("following rt/lowstate writer %s%s", self._guid(writer),
                         f" ({others} other writer(s) matched: refused)" if others > 0 else "")
            if writer == self.writer:
                out.append(data)
            else:
                self.refused.refuse("refused_packets", f"rt/lowstate writer "
                                    f"{self._guid(writer)}, not the robot's "
                                    f"{self._guid(self.writer)}")
        return out

    def stats(self) -> dict:
        """The bridge's counts, and the GUID of the rt/lowstate writer it followed."""
        out = super().stats()
        out["lowstate_writer"] = self._guid(self.writer) if self.writer is not None else None
        return out

    def _guid(self, writer: int) -> str:
        if writer not in self._guids:
            self._guids[writer] = self.link.writer_guid(writer)
        return self._guids[writer]

    def _decode(self, raw: bytes) -> LowState:
        return sdk2_messages.decode_low_state(raw)

    def _close_link(self) -> None:
        self.link.close()
