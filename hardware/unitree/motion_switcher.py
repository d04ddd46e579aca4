"""Release a Go2/H1's built-in motion service before low-level control.

The robot's "motion_switcher" service answers requests on rt/api/motion_switcher/request with
responses on rt/api/motion_switcher/response (``unitree_api`` Request_/Response_, matched by
the request identity). CheckMode (api 1001) answers JSON ``{"form": ..., "name": ...}``; a
non-empty name is an active motion mode, which ReleaseMode (api 1003) stops.
"""

from __future__ import annotations

import json
import logging
import time as _time

from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

from hardware.unitree import sdk2_types as st
from hardware.unitree.udp_link import LinkError

log = logging.getLogger(__name__)

REQUEST_TOPIC = "rt/api/motion_switcher/request"
RESPONSE_TOPIC = "rt/api/motion_switcher/response"
CHECK_MODE, RELEASE_MODE = 1001, 1003


class MotionSwitcherClient:
    def __init__(self, dp: DomainParticipant, timeout: float = 5.0):
        self.writer = DataWriter(dp, Topic(dp, REQUEST_TOPIC, st.Request_))
        self.reader = DataReader(dp, Topic(dp, RESPONSE_TOPIC, st.Response_))
        self.timeout = timeout

    def call(self, api_id: int, parameter: str = "") -> tuple[int, str]:
        """(status code, data) of one request; :class:`LinkError` without an answer."""
        ident = _time.time_ns()
        req = st.Request_()
        req.header.identity.id = ident
        req.header.identity.api_id = api_id
        req.parameter = parameter
        deadline = _time.monotonic() + self.timeout
        next_write = 0.0
        while _time.monotonic() < deadline:
            if _time.monotonic() >= next_write:  # the first write may precede discovery
                self.writer.write(req)
                next_write = _time.monotonic() + 0.5
            for resp in self.reader.take(N=16):
                if getattr(resp, "header", None) and resp.header.identity.id == ident:
                    return resp.header.status.code, resp.data
            _time.sleep(0.01)
        raise LinkError(f"no answer from the robot's motion_switcher service within "
                        f"{self.timeout:g} s (fake robots have none: release_motion_service "
                        f"false)")

    def active_mode(self) -> str:
        code, data = self.call(CHECK_MODE)
        if code != 0:
            raise LinkError(f"motion_switcher CheckMode failed with code {code}")
        return json.loads(data or "{}").get("name", "")


def release_motion_service(dp: DomainParticipant, attempts: int = 10) -> None:
    """Release the active motion mode, if any, and wait until none is active."""
    client = MotionSwitcherClient(dp)
    for _ in range(attempts):
        mode = client.active_mode()
        if not mode:
            return
        log.warning("releasing the robot's motion mode %r", mode)
        client.call(RELEASE_MODE)
        _time.sleep(1.0)
    raise LinkError("the robot's motion service did not release")
