"""The link process's log: its warnings and errors go over the pipe to the controller (whose log
makes them the run's events); once the controller is gone, to stderr at once, queued ones
included (a line sent into the pipe of a controller being torn down is lost). End to end: a
robot's corrupted states, refused in the link process, are warned of in the controller's log
at most once a second."""

from __future__ import annotations

import logging
import multiprocessing
import time

from unitree_helpers import free_udp_port

from hardware.safety.layer import SafetyConfig
from hardware.unitree.link_process import ForwardedLog
from hardware.unitree.udp_plant import UnitreeUdpPlant


def test_the_link_log_goes_to_the_controller_then_to_stderr_once_it_is_gone(capfd):
    forwarded = ForwardedLog()
    logger = logging.getLogger("test.link_log")
    logger.addHandler(forwarded)
    logger.propagate = False
    ours, theirs = multiprocessing.Pipe()
    try:
        logger.info("not forwarded: below warnings")
        logger.warning("one")
        forwarded.forward(ours)
        assert theirs.recv() == ("log", logging.WARNING, "test.link_log", "one")
        assert not theirs.poll()
        logger.error("two")  # queued, and then the controller is gone
        forwarded.orphaned()
        logger.error("three")
        # its end of the pipe may stay open for a while (the kernel tears the dead process
        # down): whatever were sent now would be lost
        forwarded.forward(ours)
        assert not theirs.poll()
    finally:
        logger.removeHandler(forwarded)
        ours.close()
    err = capfd.readouterr().err
    assert err == "ERROR test.link_log: two\nERROR test.link_log: three\n", err


def test_the_link_processs_refusals_reach_the_controllers_log(fake_robot, caplog):
    local_port = free_udp_port()
    fake = fake_robot("a1", controller=("127.0.0.1", local_port), start="standing",
                      gantry=True)
    plant = UnitreeUdpPlant(fake.robot, robot_ip="127.0.0.1", robot_port=fake.port,
                            local_port=local_port,
                            safety=SafetyConfig(ramp_time=0.2, state_timeout=0.5))
    try:
        plant.prepare()
        fake.corrupt_every = 10  # 50 bad checksums a second
        start = time.monotonic()
        time.sleep(1.5)
        seconds = time.monotonic() - start
        fake.corrupt_every = 0
    finally:
        plant.close()
    assert plant.stats()["bad_checksum"] > 20
    warnings = [r.getMessage() for r in caplog.records
                if "refused a message (bad_checksum" in r.getMessage()]
    assert 1 <= len(warnings) <= seconds + 2, warnings
