"""The run as a ROS 2 participant without ROS: messages as cyclonedds types with ROS 2's names
(``messages``) and their CDR encoder (``cdr``), topics and QoS (``dds``), the ``ros2`` command
source on /cmd_vel (``command``), the publishers and the goal subscription (``interface``),
the run's quantities as messages (``convert``) and run.mcap (``mcap_log``). See docs/ros2.md.
"""
