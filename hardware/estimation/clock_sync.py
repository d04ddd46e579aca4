"""Mapping this computer's monotonic clock to the robot's clock.

Robot state messages carry the robot's time; their local arrival time is later by the transport
delay d >= 0, so robot - local = offset - d. The largest value over a recent window comes from
the least-delayed message and is the best estimate of the offset; a sliding window (rather than
the maximum ever seen) follows a robot clock that runs at a slightly different rate, such as a
simulator slower than real time.
"""

from __future__ import annotations

from collections import deque


class ClockOffset:
    """Sliding-window maximum of (robot time - local arrival time)."""

    def __init__(self, window: float = 0.2):
        self.window = window
        # (local time, offset), offsets decreasing: the front is the window's maximum.
        self._candidates: deque[tuple[float, float]] = deque()

    def observe(self, robot_time: float, local_time: float) -> None:
        offset = robot_time - local_time
        while self._candidates and self._candidates[-1][1] <= offset:
            self._candidates.pop()
        self._candidates.append((local_time, offset))
        while self._candidates[0][0] < local_time - self.window:
            self._candidates.popleft()

    @property
    def ready(self) -> bool:
        return bool(self._candidates)

    def to_robot(self, local_time: float) -> float:
        """Robot time at local time ``local_time`` (needs one observation)."""
        return local_time + self._candidates[0][1]
