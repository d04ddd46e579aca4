"""Robot states over real LCM are taken in order: replayed old states, a state whose sequence
number leaps a million ahead of its clock, and the robot's last state repeated while the robot
itself is frozen are refused and counted; the plant's state never goes back in time, and the
repeated state does not keep the stale-state watchdog quiet."""

from __future__ import annotations

import os
import re
import signal
import threading
import time

import lcm
import numpy as np
from test_lcm_plant import FakeRobotProcess
from test_lcm_trips import close_robot, drive_until_tripped

from hardware.lcm.lcm_types import robot_state_t
from hardware.refusals import DUPLICATE, IMPLAUSIBLE, OUT_OF_ORDER


class Tap:
    """Every message on ``channel`` (raw bytes), in order of arrival."""

    def __init__(self, url: str, channel: str):
        self.got: list[bytes] = []
        self.lc = lcm.LCM(url)
        self.lc.subscribe(channel, lambda _c, data: self.got.append(data))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._listen, daemon=True)
        self._thread.start()

    def _listen(self) -> None:
        while not self._stop.is_set():
            self.lc.handle_timeout(10)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=1.0)


def test_replayed_and_leaping_states_are_refused_and_time_never_goes_back(udpm_url):
    robot = FakeRobotProcess(udpm_url, False)
    plant = robot.plant(state_timeout=0.3, max_pose_age=1.0)
    tap = Tap(udpm_url, robot.channels["STATE"])
    sender = lcm.LCM(udpm_url)
    times: list[float] = []
    stop = threading.Event()

    def watch():  # the plant's state time as a controller sees it
        while not stop.is_set():
            times.append(plant.read_state().time)
            time.sleep(0.0005)

    watcher = threading.Thread(target=watch, daemon=True)
    try:
        plant.read_state()
        time.sleep(0.3)
        old = list(tap.got[:30])
        watcher.start()
        for data in old:
            sender.publish(robot.channels["STATE"], data)
            time.sleep(0.002)
        leap = robot_state_t.decode(tap.got[-1])
        # a million states in the robot's next 2 s; 2 s ahead of the last state the tap saw,
        # since a tap held up on a loaded machine may lag the plant by more than 200 ms
        leap.seq += 1_000_000
        leap.utime += 2_000_000
        sender.publish(robot.channels["STATE"], leap.encode())
        assert drive_until_tripped(plant, 0.3) == np.inf
        stop.set()
        watcher.join()
        refused = plant.stats()["states_refused"]
    finally:
        stop.set()
        tap.close()
        plant.close()
        robot.close()
    assert len(times) > 100 and np.all(np.diff(times) >= 0), "the state went back in time"
    assert refused.get(OUT_OF_ORDER, 0) == len(old) and refused.get(IMPLAUSIBLE) == 1, refused


def test_a_repeated_state_does_not_keep_the_stale_state_watchdog_quiet(udpm_url):
    """The robot process freezes, and its last state goes on arriving (a bridge stuck
    re-sending it): refused as duplicates, and the plant trips on stale state, saying so."""
    robot = FakeRobotProcess(udpm_url, False)
    plant = robot.plant(state_timeout=0.2, max_pose_age=2.0)  # this test is not about mocap
    tap = Tap(udpm_url, robot.channels["STATE"])
    sender = lcm.LCM(udpm_url)
    stop = threading.Event()
    try:
        plant.read_state()
        assert drive_until_tripped(plant, 0.3) == np.inf
        os.kill(robot.proc.pid, signal.SIGSTOP)
        time.sleep(0.05)
        last = tap.got[-1]

        def repeat():
            while not stop.is_set():
                sender.publish(robot.channels["STATE"], last)
                time.sleep(0.002)

        threading.Thread(target=repeat, daemon=True).start()
        assert drive_until_tripped(plant, 2.0) < np.inf, plant.health()
        assert re.fullmatch(r"stale state: none for \d+ ms \(limit 200 ms\); \d+ refused "
                            r"meanwhile, the last as duplicate", plant.damping_reason), \
            plant.damping_reason
        assert plant.stats()["states_refused"][DUPLICATE] > 20
    finally:
        stop.set()
        os.kill(robot.proc.pid, signal.SIGCONT)
        tap.close()
        plant.close()
        close_robot(robot)
