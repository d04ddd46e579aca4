"""The link process's log: its warnings and errors go over the pipe to the controller (whose log
makes them the run's events); once the controller is gone, to stderr at once, queued ones
included (a line sent into the pipe of a controller being torn down is lost)."""

from __future__ import annotations

import logging
import multiprocessing

from hardware.unitree.link_process import ForwardedLog


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
