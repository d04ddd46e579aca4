"""Velocity command sources by name (``command.source.type`` in a config) and the filter.

Sources that read hardware (``unitree_remote``: the Unitree remote through the bridge's state;
``lcm``: an LCM channel) are plug-ins above ``mpc``: entry points of group
``legged_mpc.command_sources`` (see :mod:`common.registry`).
"""

from __future__ import annotations

from common.registry import Registry
from mpc.app.commands.command_base import CommandSource, VelocityCommand
from mpc.app.commands.filter import CommandFilter

COMMAND_SOURCES: Registry[CommandSource] = Registry("command source", {
    "scripted": "mpc.app.commands.scripted:ScriptedCommand",
    "keyboard": "mpc.app.commands.keyboard:KeyboardCommand",
}, group="command_sources")

__all__ = ["COMMAND_SOURCES", "CommandFilter", "CommandSource", "VelocityCommand"]
