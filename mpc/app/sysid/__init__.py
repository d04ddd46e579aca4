"""System identification from a robot's logged runs (``mpc-sysid``, docs/sysid.md): the link
log read as identification data (:mod:`.data`), the actuators and delay from gantry runs
(:mod:`.actuators`), the trunk's mass and centre of mass from standing and trotting runs
(:mod:`.trunk`), the overlay written (:mod:`.identify`), the output-error check and report
(:mod:`.simulate`, :mod:`.report`), the command line (:mod:`.cli`)."""
