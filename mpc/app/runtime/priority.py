"""The controller's scheduling priority (``runtime.nice``).

A robot's computer runs other work beside the controller (the vendor's services, a camera
driver, a ROS 2 stack). The controller's deadlines are short: the bridge refuses a command
computed from a state older than ``safety.max_command_age`` (20 ms) and damps when the policy
is older than ``runtime.policy_timeout``, so a controller held off the processor for tens of
milliseconds ends the run. ``runtime.nice: N`` sets the niceness of the controller's process
to N before anything is built (a negative N raises its priority: Linux gives a task of niceness
N a share of the processor proportional to 1024 / 1.25^N, so at -10 it outweighs a task at 0
about 9 to 1 and one at 10 about 87 to 1, and it preempts them sooner on waking).

Linux keeps the niceness per thread, and a new thread takes its creator's: every thread the
process has when the option is applied is set (``/proc/self/task``), and every thread started
later inherits it, as does the robot link's process, which then adds its own ``link_nice``
(:mod:`hardware.unitree.link_process`). Raising the priority needs root, ``CAP_SYS_NICE`` or
an ``RLIMIT_NICE`` that allows it; otherwise the run stops with one line saying so
(:class:`~mpc.app.errors.UserError`, exit code 2) rather than running at a priority it was
not given.
"""

from __future__ import annotations

import os
from pathlib import Path

from mpc.app.errors import UserError


def threads() -> list[int]:
    """The native ids of this process's threads."""
    return sorted(int(p.name) for p in Path("/proc/self/task").iterdir())


def set_niceness(nice: int) -> None:
    """Give every thread of this process the niceness ``nice`` (module docstring);
    UserError if the system does not permit it."""
    for tid in threads():
        try:
            os.setpriority(os.PRIO_PROCESS, tid, nice)
        except ProcessLookupError:  # the thread ended meanwhile
            continue
        except PermissionError:
            raise UserError(
                f"runtime.nice {nice}: not permitted to raise the controller's priority to "
                f"niceness {nice} (from {os.getpriority(os.PRIO_PROCESS, tid)}; needs root, "
                f"CAP_SYS_NICE or a nice limit that allows it, e.g. in "
                f"/etc/security/limits.conf)") from None
