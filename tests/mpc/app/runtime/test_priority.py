"""``runtime.nice`` and ``runtime.realtime_priority``: the controller's niceness on every thread,
the feedback law's thread under SCHED_FIFO, or one line if not permitted."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mpc.app.run import run
from mpc.app.runtime.priority import autogroups
from mpc.app.runtime.session import Session
from tests.cli_checks import assert_one_line

REPO = Path(__file__).resolve().parents[4]
#: linux/prctl.h and linux/capability.h.
PR_CAPBSET_DROP, CAP_SYS_NICE = 24, 23

#: In a process of its own (niceness never goes back down without privilege): a thread
#: started before the option is applied and one started after must both run at it.
SCRIPT = """
import os, threading
from pathlib import Path

import pytest
from mpc.app.runtime.priority import set_niceness
def nice_of_this_thread(out):
    out.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
go, before, after = threading.Event(), [], []
early = threading.Thread(target=lambda: (go.wait(), nice_of_this_thread(before)))
early.start()
set_niceness(7)
go.set(); early.join()
late = threading.Thread(target=nice_of_this_thread, args=(after,))
late.start(); late.join()
main = []
nice_of_this_thread(main)
group = Path("/proc/self/autogroup")
print(main[0], before[0], after[0], group.read_text().split()[-1] if group.is_file() else 0)
"""


def test_every_thread_and_the_session_s_group_run_at_the_niceness_asked_for():
    """In a session of its own (its own scheduling group, where the kernel groups sessions:
    the group's niceness is what the scheduler weighs against other sessions)."""
    res = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         cwd=REPO, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)},
                         start_new_session=True)
    assert res.returncode == 0, res.stderr
    group = "7" if autogroups() else "0"
    assert res.stdout.split() == ["7", "7", "7", group]


def _unprivileged() -> None:
    """The child without the right to raise a priority: as root, CAP_SYS_NICE dropped from
    the capability bounding set (root's capabilities after exec are that set); an ordinary
    user has not got it."""
    if os.geteuid() == 0 and ctypes.CDLL(None, use_errno=True).prctl(
            PR_CAPBSET_DROP, CAP_SYS_NICE, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP, CAP_SYS_NICE)")


@pytest.mark.parametrize(("mode", "setting", "line"), [
    ("lockstep", "runtime.nice=-5",
     "runtime.nice -5: not permitted to raise the controller's priority"),
    ("realtime", "runtime.realtime_priority=20",
     "runtime.realtime_priority 20: not permitted to run under SCHED_FIFO"),
])
def test_a_raised_priority_that_is_not_permitted_is_one_line(tmp_path, mode, setting, line):
    """An unprivileged run asking for a negative niceness or SCHED_FIFO: exit 2, one line
    naming the key, before anything is built (no summary: not refused by a thread later)."""
    res = subprocess.run(
        [sys.executable, "-m", "mpc.app.cli", "configs/a1_trot.yaml", "--mode", mode,
         "--duration", "0.1", "--quiet", "--out", str(tmp_path / "run"), "--set", setting],
        capture_output=True, text=True, cwd=REPO, timeout=120, preexec_fn=_unprivileged,
        env={**os.environ, "PYTHONPATH": str(REPO)})
    assert_one_line(res, line)
    assert not (tmp_path / "run" / "summary.json").exists()


def test_the_feedback_thread_runs_under_sched_fifo_and_the_planner_does_not(tmp_path,
                                                                           monkeypatch):
    """A realtime run with ``runtime.realtime_priority``: every feedback step runs under
    SCHED_FIFO at that priority, every planner iteration as an ordinary thread, and the
    calling thread is ordinary again after the run's check."""
    seen: dict[str, set] = {"act": set(), "plan": set()}
    act, plan = Session.act, Session.plan

    def policy() -> tuple[int, int]:
        return os.sched_getscheduler(0), os.sched_getparam(0).sched_priority

    def recording_act(self, state):
        seen["act"].add(policy())
        return act(self, state)

    def recording_plan(self, state):
        seen["plan"].add(policy())
        return plan(self, state)

    monkeypatch.setattr(Session, "act", recording_act)
    monkeypatch.setattr(Session, "plan", recording_plan)
    run("configs/a1_trot.yaml", ["runtime.mode=realtime", "runtime.duration=0.5",
                                 "runtime.realtime_priority=20"], out=tmp_path / "run")
    assert seen["act"] == {(os.SCHED_FIFO, 20)}
    assert seen["plan"] and all(p == os.SCHED_OTHER for p, _ in seen["plan"])
    assert os.sched_getscheduler(0) == os.SCHED_OTHER
