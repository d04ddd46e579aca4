"""The controller's scheduling priority: ``runtime.nice`` and ``runtime.realtime_priority``.

A robot's computer runs other work beside the controller (the vendor's services, a camera
driver, a ROS 2 stack). The controller's deadlines are short: the bridge refuses a command
computed from a state older than ``safety.max_command_age`` (20 ms), damps when no state came
for ``safety.state_timeout`` (30 ms), and the feedback law damps when the policy is older than
``runtime.policy_timeout``; a controller held off the processor for tens of milliseconds ends
the run.

``runtime.nice: N`` sets the niceness of the controller's process to N before anything is
built: a negative N is a larger share of the processor (Linux weighs a task of niceness N by
1024 / 1.25^N: at -10 it outweighs a task at 0 about 9 to 1, one at 10 about 87 to 1). Linux
keeps the niceness per thread, and a new thread takes its creator's: every thread the process
has is set (``/proc/self/task``), and every thread started later inherits it, as does the robot
link's process (which then adds its own ``link_nice``). Where the kernel groups each session's
processes (autogroup scheduling, ``kernel.sched_autogroup_enabled`` = 1, the default of many
distributions), a niceness orders threads only within their session's group, and the groups
share the processor by the groups' own niceness: a controller at -10 started from one terminal
got no more than a busy program at 10 started from another. The option therefore sets the
group's niceness as well (``/proc/self/autogroup``; the other processes of the session, the
shell that started ``mpc-run``, share it). A share is not a deadline, though: on the loaded
development machine a thread at niceness -10 still waited up to 33 ms to run after a 1 ms
sleep (Linux 6.18's EEVDF scheduler, 2 cores, load average 5-6, its group at 0), where one
under SCHED_FIFO waited at most 5.5 ms.

``runtime.realtime_priority: P`` (1-98) runs the feedback law's thread under SCHED_FIFO at
priority P: it preempts every ordinary thread when it wakes, and it is light (one TV-LQR step
at ``feedback_rate``), so it cannot starve the machine. The planner's threads stay ordinary
(they compute all the time; under SCHED_FIFO they would take the processors from everything
else). The Unitree plants' ``plant.link_priority`` does the same for the robot link's process
(:mod:`hardware.unitree.link_process`).

Raising a priority needs root, ``CAP_SYS_NICE`` or a limit that allows it (``RLIMIT_NICE``,
``RLIMIT_RTPRIO``, e.g. in /etc/security/limits.conf); without it the run stops with one line
saying so (:class:`~mpc.app.errors.UserError`, exit code 2) rather than running at a priority
it was not given.
"""

from __future__ import annotations

import os
from pathlib import Path

from mpc.app.errors import UserError

#: How to grant the right to raise a priority (for the error's line).
PERMISSION = "needs root, CAP_SYS_NICE or a limit that allows it, e.g. in /etc/security/limits.conf"


def threads() -> list[int]:
    """The native ids of this process's threads."""
    return sorted(int(p.name) for p in Path("/proc/self/task").iterdir())


#: The kernel's switch of autogroup scheduling, and this process's group.
AUTOGROUP_SWITCH = Path("/proc/sys/kernel/sched_autogroup_enabled")
AUTOGROUP = Path("/proc/self/autogroup")


def autogroups() -> bool:
    """Whether the kernel schedules sessions as groups (module docstring)."""
    return AUTOGROUP_SWITCH.is_file() and AUTOGROUP_SWITCH.read_text().strip() == "1"


def set_niceness(nice: int) -> None:
    """Give every thread of this process, and its session's group where the kernel groups
    sessions, the niceness ``nice`` (module docstring); UserError if the system does not
    permit it."""
    refused = UserError(f"runtime.nice {nice}: not permitted to raise the controller's "
                        f"priority to niceness {nice} ({PERMISSION})")
    for tid in threads():
        try:
            os.setpriority(os.PRIO_PROCESS, tid, nice)
        except ProcessLookupError:  # the thread ended meanwhile
            continue
        except PermissionError:
            raise refused from None
    if autogroups():
        try:
            AUTOGROUP.write_text(f"{nice}\n")
        except PermissionError:
            raise refused from None


def set_realtime(priority: int, key: str, every_thread: bool = False) -> None:
    """Run the calling thread (with ``every_thread``: every thread of this process) and the
    threads it starts later under SCHED_FIFO at ``priority``; UserError naming config key
    ``key`` if the system does not permit it."""
    for tid in threads() if every_thread else [0]:
        try:
            os.sched_setscheduler(tid, os.SCHED_FIFO, os.sched_param(priority))
        except ProcessLookupError:  # the thread ended meanwhile
            continue
        except PermissionError:
            raise UserError(f"{key} {priority}: not permitted to run under SCHED_FIFO "
                            f"({PERMISSION})") from None


def check_realtime(priority: int, key: str) -> None:
    """UserError now, before anything is built, if a thread may not run under SCHED_FIFO at
    ``priority`` (:func:`set_realtime`): the calling thread tries it and goes back."""
    policy, param = os.sched_getscheduler(0), os.sched_getparam(0)
    set_realtime(priority, key)
    os.sched_setscheduler(0, policy, param)
