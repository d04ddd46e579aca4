"""Velocity commands from lab software over LCM (``command.source.type: lcm``).

Messages are ``lcm_types.velocity_command_t`` (hardware/lcm/lcm_types/velocity_command_t.lcm)
on ``channel``. A background thread receives them; each is stamped on arrival, and
:meth:`LcmCommand.read` at plant time t reports it with stamp t − (its age on this machine's
monotonic clock), so the command filter's dead-man rule sees how long the sender has been
silent, in lockstep and in real time alike. A URL that LCM cannot open is a one-line error at
start; a sender that never speaks leaves the robot standing (the dead-man rule). A message that
does not decode or carries a non-finite value is refused and counted (:meth:`LcmCommand.stats`,
a warning at most once a second) and the previous command stays in force until the dead-man
rule retires it; nothing a message holds ends the receiving thread.
"""

from __future__ import annotations

import logging
import math
import threading
import time as _time

from hardware.lcm import DECODE_ERRORS, DEFAULT_URL, subscription
from hardware.lcm.lcm_types import velocity_command_t
from hardware.refusals import INVALID, UNDECODABLE, Refusals
from mpc.app.commands.command_base import CommandSource, VelocityCommand

log = logging.getLogger(__name__)


class LcmCommand(CommandSource):
    name = "lcm"

    def __init__(self, lcm_url: str = DEFAULT_URL, channel: str = "MPC_VELOCITY_COMMAND"):
        self.check_options({"lcm_url": lcm_url, "channel": channel})
        self._latest: tuple[float, float, float, float] | None = None  # vx, vy, wz, arrival
        self._lock = threading.Lock()
        #: Messages refused (undecodable, non-finite), and errors of the LCM handler.
        self.refused = Refusals(f"command.source lcm {channel}", log)
        self.accepted = 0
        self._subscription = subscription.Subscription(
            lcm_url, channel, self._on_message, self.refused, "command.source", "lcm-command")

    @classmethod
    def check_options(cls, options: dict) -> None:
        subscription.check_options(options, "command.source")

    def _on_message(self, data: bytes) -> None:
        try:
            msg = velocity_command_t.decode(data)
        except DECODE_ERRORS as e:
            self.refused.refuse(UNDECODABLE, f"{len(data)} B, {e}")
            return
        if not all(math.isfinite(v) for v in (msg.vx, msg.vy, msg.yaw_rate)):
            self.refused.refuse(INVALID, "non-finite velocity")
            return
        with self._lock:
            self._latest = (msg.vx, msg.vy, msg.yaw_rate, _time.monotonic())
            self.accepted += 1

    def read(self, time: float) -> VelocityCommand | None:
        with self._lock:
            latest = self._latest
        if latest is None:
            return None
        vx, vy, wz, arrival = latest
        return VelocityCommand(vx, vy, wz, time - (_time.monotonic() - arrival))

    def stats(self) -> dict:
        """Commands taken, and messages refused by reason."""
        return {"accepted": self.accepted, "refused": self.refused.as_dict()}

    def close(self) -> None:
        self._subscription.close()
