"""Gamepads through the Linux input subsystem: axes and buttons from events (``pad``) and the
``gamepad`` command source (``source``). See docs/ros2.md."""
