"""Velocity command sources by name (``command.source.type`` in a config) and the filter.

Sources that read hardware (the Unitree remote through the bridge's state, an LCM channel) are
plug-ins above ``mpc`` and are reached by name only.
"""

from __future__ import annotations

from mpc.commands.command_base import CommandSource, VelocityCommand
from mpc.commands.filter import CommandFilter
from robots.registry import Registry

COMMAND_SOURCES: Registry[CommandSource] = Registry("command source", {
    "scripted": "mpc.commands.scripted:ScriptedCommand",
    "keyboard": "mpc.commands.keyboard:KeyboardCommand",
    "lcm": "hardware.lcm.command:LcmCommand",
    "unitree_remote": "hardware.unitree.remote:RemoteCommand",
})

__all__ = ["COMMAND_SOURCES", "CommandFilter", "CommandSource", "VelocityCommand"]
