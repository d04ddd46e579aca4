"""``plant.link_priority``: the robot link's process under SCHED_FIFO, or one line if not
permitted."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

from unitree_helpers import free_udp_port

from hardware.unitree.udp_plant import UnitreeUdpPlant

REPO = Path(__file__).resolve().parents[3]
#: linux/prctl.h and linux/capability.h.
PR_CAPBSET_DROP, CAP_SYS_NICE = 24, 23


def test_every_thread_of_the_link_process_runs_under_sched_fifo(fake_robot):
    fake = fake_robot("go1", start="standing", gantry=True)
    plant = UnitreeUdpPlant(fake.robot, robot_ip="127.0.0.1", robot_port=fake.port,
                            local_port=free_udp_port(), link_priority=30)
    try:
        pid = plant.bridge.proc.pid
        tids = [int(p.name) for p in Path(f"/proc/{pid}/task").iterdir()]
        assert len(tids) > 1  # the link thread as well as the main one
        assert {(os.sched_getscheduler(t), os.sched_getparam(t).sched_priority)
                for t in tids} == {(os.SCHED_FIFO, 30)}
        assert os.sched_getscheduler(0) == os.SCHED_OTHER  # the controller's own: untouched
    finally:
        plant.close()


#: Without the right to raise a priority (as root: CAP_SYS_NICE dropped from the bounding set,
#: root's capabilities after exec), building the plant fails before it connects.
SCRIPT = f"""
import robots
from hardware.unitree.udp_plant import UnitreeUdpPlant
try:
    UnitreeUdpPlant(robots.info("go1"), robot_ip="127.0.0.1", robot_port={free_udp_port()},
                    local_port={free_udp_port()}, link_priority=30, connect_timeout=0.5)
except ValueError as e:
    print(e)
"""


def _unprivileged() -> None:
    if os.geteuid() == 0 and ctypes.CDLL(None, use_errno=True).prctl(
            PR_CAPBSET_DROP, CAP_SYS_NICE, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP, CAP_SYS_NICE)")


def test_a_link_priority_that_is_not_permitted_is_one_line():
    res = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         cwd=REPO, timeout=120, preexec_fn=_unprivileged,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == ("plant.link_priority 30: not permitted to run under "
                                  "SCHED_FIFO (needs root, CAP_SYS_NICE or a limit that "
                                  "allows it, e.g. in /etc/security/limits.conf)")
