"""The safety layer. ``layer`` holds the ``safety:`` config section (:class:`SafetyConfig`), the
command clamps and their log, the trips (tilt, joint speed, non-finite data, e-stop buttons)
and the SIGINT/SIGTERM e-stop; hardware bridges enforce all of it in their link thread.
``safe_plant`` wraps any other plant (simulated ones included) in the parts that need no link.
``envelope`` holds the values of safety-relevant keys a robot's config may have (refused and
warned ranges), applied when a config is validated.
"""
