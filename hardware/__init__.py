"""Real robots behind the planner's plant interface, grouped by concept: ``unitree`` (the
Unitree bridges and their wire formats), ``lcm`` (the two-process LCM plant and planner
telemetry), ``mocap`` (OptiTrack NatNet and motion-capture frames), ``estimation`` (where the
floating-base state comes from), ``safety`` (limits, trips, e-stop, the SafePlant wrapper),
``ros2`` (ROS 2 topics over DDS and the run's MCAP log), ``gamepad`` (pads through evdev) and
``fake`` (simulated robots and streams that speak the real protocols, for tests and loopback
runs). ``rotations`` holds the quaternion algebra they share. See docs/hardware.md.
"""
