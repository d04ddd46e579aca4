"""The link process's shared memory and the bridge's logs: a control is never read half
written, and the logs stay bounded however long a run lasts."""

from __future__ import annotations

import subprocess
import sys
import time
from multiprocessing.shared_memory import SharedMemory

import numpy as np
from unitree_helpers import ROOT, wait_for

from hardware.safety.layer import SafetyConfig
from hardware.unitree.bridge import UnitreeBridge
from hardware.unitree.shared_block import MUTEX_BYTES, Lifeline, SharedBlock

#: A wide control block: the copy takes microseconds, so a concurrent write lands inside it
#: often; every value a writer puts in one control is the same number, so a mix shows.
NQ, NV, NU = 1, 1, 50_000

WRITER = """
import sys, time
import numpy as np
from multiprocessing import resource_tracker
from multiprocessing.shared_memory import SharedMemory
from hardware.unitree.shared_block import MUTEX_BYTES, Lifeline, SharedBlock
shm = SharedMemory(name=sys.argv[1])
resource_tracker.unregister(shm._name, "shared_memory")  # the test owns (and unlinks) it
block = SharedBlock(shm, {nq}, {nv}, {nu})
print("writing", flush=True)
k, end = 0, time.monotonic() + float(sys.argv[2])
ctrl = np.empty({nu})
rng = np.random.default_rng(0)
while time.monotonic() < end:
    k += 1
    ctrl[:] = k
    block.write_control(ctrl, float(k), k)
    pause = time.perf_counter() + rng.uniform(0.0, 1e-4)  # gaps in which a read can be whole
    while time.perf_counter() < pause:
        pass
del block
shm.close()
"""


class Recorder:
    """Stands in for the bridge: records what :meth:`SharedBlock.poll` hands over."""

    def __init__(self):
        self.torn = 0
        self.accepted = 0

    def accept(self, ctrl: np.ndarray, receipt: float, tick: int) -> None:
        self.accepted += 1
        if not (np.all(ctrl == ctrl[0]) and ctrl[0] == receipt == tick):
            self.torn += 1

    def damp(self, reason: str) -> None:
        raise AssertionError(f"unexpected damping request: {reason}")


def test_a_control_written_during_the_read_is_never_accepted():
    """A writer process rewrites the control block as fast as it can while this process
    polls it: every control handed to the bridge is one whole control."""
    shm = SharedMemory(create=True, size=SharedBlock.size(NQ, NV, NU))
    block = SharedBlock(shm, NQ, NV, NU)
    block.state[:] = block.control[:] = block.damp_seq[:] = 0.0
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER.format(nq=NQ, nv=NV, nu=NU), shm.name, "20"], cwd=ROOT,
        stdout=subprocess.PIPE, text=True)
    recorder = Recorder()
    try:
        assert writer.stdout.readline().strip() == "writing"
        deadline = time.monotonic() + 8.0  # a loaded machine gets fewer reads, not a failure
        while writer.poll() is None and recorder.accepted < 2000 and time.monotonic() < deadline:
            block.poll(recorder)
    finally:
        writer.kill()
        writer.wait()
        del block
        shm.close()
        shm.unlink()
    assert recorder.accepted >= 200, recorder.accepted
    assert recorder.torn == 0, f"{recorder.torn} torn controls of {recorder.accepted} accepted"


class StanceRecorder:
    """Stands in for the bridge: keeps the last control and planned stance handed over."""

    def accept(self, ctrl: np.ndarray, receipt: float, tick: int) -> None:
        self.ctrl = ctrl.copy()

    def set_planned_stance(self, stance: np.ndarray | None) -> None:
        self.stance = stance


def test_the_planned_stance_travels_with_the_control():
    """The gait schedule's planned stance (the estimator's contact prior in the link process)
    is written with each control and handed to the bridge with it; no schedule stays None."""
    shm = SharedMemory(create=True, size=SharedBlock.size(NQ, NV, NU, 4))
    block = SharedBlock(shm, NQ, NV, NU, 4)
    block.state[:] = block.control[:] = block.damp_seq[:] = 0.0
    got = StanceRecorder()
    try:
        block.write_control(np.full(NU, 1.5), 1.0, 1, np.array([1.0, 0.0, 0.0, 1.0]))
        block.poll(got)
        np.testing.assert_array_equal(got.ctrl, np.full(NU, 1.5))
        np.testing.assert_array_equal(got.stance, [True, False, False, True])
        block.write_control(np.full(NU, 2.5), 2.0, 2)
        block.poll(got)
        np.testing.assert_array_equal(got.ctrl, np.full(NU, 2.5))
        assert got.stance is None
    finally:
        del block
        shm.close()
        shm.unlink()


def test_bridge_logs_keep_only_the_newest_rows(fake_robot, udp_bridge, monkeypatch, tmp_path):
    """With ``log_file`` set the bridge logs every state and command; the log keeps the newest
    ``log_rows`` of each, in order, and the file written at the end has them."""
    monkeypatch.setattr(UnitreeBridge, "log_rows", 200)
    fake = fake_robot("a1")
    path = tmp_path / "bridge.npz"
    plant = udp_bridge(fake, log_file=str(path),
                       safety=SafetyConfig(ramp_time=0.2, state_timeout=0.5))
    assert wait_for(lambda: plant.counts["commands"] > 1000 and plant.counts["states"] > 1000,
                    20.0, 0.05)
    for column in plant.log.values():
        assert len(column) == 200
    t = np.array(plant.log["cmd_t"])
    assert np.all(np.diff(t) >= 0) and time.monotonic() - t[-1] < 1.0
    plant.close()
    saved = np.load(path)
    assert all(len(saved[k]) == 200 for k in saved.files if k != "slots")
    assert saved["cmd_q"].shape == (200, 12) and saved["state_q"].shape == (200, 12)


HOLDER = """
import sys, time
from multiprocessing import resource_tracker
from multiprocessing.shared_memory import SharedMemory
from hardware.unitree.shared_block import Lifeline
shm = SharedMemory(name=sys.argv[1])
resource_tracker.unregister(shm._name, "shared_memory")  # the test owns (and unlinks) it
lifeline = Lifeline(shm, 0)
lifeline.initialize()
lifeline.hold()
print("holding", flush=True)
if sys.argv[2] == "release":
    lifeline.release()
    print("released", flush=True)
time.sleep(60)
"""


def test_lifeline_reports_the_death_of_the_controllers_process_not_its_release():
    """A process holds the lifeline and is killed: the watcher hears of it within
    milliseconds; a process that lets go of it in the ordinary way raises no alarm."""
    results = {}
    for how in ("release", "kill"):
        shm = SharedMemory(create=True, size=MUTEX_BYTES)
        holder = subprocess.Popen([sys.executable, "-c", HOLDER, shm.name, how], cwd=ROOT,
                                  stdout=subprocess.PIPE, text=True)
        died: list[float] = []
        lifeline = Lifeline(shm, 0)
        try:
            assert holder.stdout.readline().strip() == "holding"
            lifeline.watch(lambda d=died: d.append(time.monotonic()))
            if how == "release":
                assert holder.stdout.readline().strip() == "released"
                time.sleep(0.3)
                results[how] = died
            else:
                time.sleep(0.1)
                assert not died
                killed = time.monotonic()
                holder.kill()
                assert wait_for(lambda d=died: bool(d), 2.0)
                results[how] = died[0] - killed
        finally:
            holder.kill()
            holder.wait()
            time.sleep(0.05)  # the watching thread is done with the mutex
            shm.close()
            shm.unlink()
    assert results["release"] == []
    print(f"\nlifeline: death noticed {results['kill'] * 1e3:.1f} ms after the kill")
    assert results["kill"] < 0.05
