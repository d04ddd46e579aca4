"""Motion-capture poses over LCM: ``mocap_pose_t`` messages of the configured rigid body,
stamped and handed to the estimator like NatNet's (:mod:`hardware.mocap.pose_input`)."""

from __future__ import annotations

import logging
import time

import numpy as np

from hardware.lcm import DECODE_ERRORS
from hardware.lcm.lcm_types import mocap_pose_t
from hardware.mocap.pose_input import MocapOptions, PoseStamper
from hardware.refusals import UNDECODABLE, Refusals, counter_order

log = logging.getLogger(__name__)


class LcmPoseInput:
    """An LCM subscription callback for ``mocap_pose_t`` messages of the configured body: each
    goes to the stamper unless it does not decode or its frame number is not newer than the
    last taken pose's (a repeated or reordered message), which is refused and counted."""

    def __init__(self, options: MocapOptions, stamper: PoseStamper):
        self.options = options
        self.stamper = stamper
        self.decode = mocap_pose_t.decode
        self.refused = Refusals(f"LCM {options.pose_channel}", log)
        self._last_frame: int | None = None

    def __call__(self, channel: str, data: bytes) -> None:
        received = time.monotonic()
        try:
            msg = self.decode(data)
        except DECODE_ERRORS as e:
            self.refused.refuse(UNDECODABLE, f"{len(data)} B, {e}")
            return
        if msg.body_id != self.options.rigid_body:
            return  # another body on the channel: not ours, not bad
        reason = counter_order(msg.frame, self._last_frame)
        if reason is not None:
            self.refused.refuse(reason, f"frame {msg.frame} after {self._last_frame}")
            return
        if self.stamper(np.array(msg.pos), np.array(msg.quat), bool(msg.tracking_valid),
                        received, msg.latency, msg.utime * 1e-6 - msg.latency):
            self._last_frame = msg.frame  # only a pose taken moves the order on
