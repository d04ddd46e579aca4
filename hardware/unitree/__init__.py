"""Unitree robots at the low level. The two hardware plants are ``udp_plant`` (A1, Go1: the
legacy UDP protocol) and ``dds_plant`` (Go2, H1: Unitree SDK2 over cyclonedds), both
``plant_base.UnitreePlant`` (their shared options and bounds) over a :class:`bridge.UnitreeBridge`,
whose link thread owns the robot link and enforces the safety layer, and which by default runs
in a process of its own (``link_process``, talking to the controller through
``shared_block``). Below them: the transports (``udp_link``, ``dds_link``), the model-to-motor-
slot map (``motor_map``), the Go2/H1 motion-service release (``motion_switcher``), the remote
(``remote``), and the wire formats: legacy packets, SDK2 messages and types, their struct
layouts and CRC. The wire-independent command and state are :mod:`hardware.lowlevel`.
"""
