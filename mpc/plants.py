"""Plants by name (``plant.type`` in a config). Imported on first use, so a simulation never
imports hardware transports."""

from __future__ import annotations

import importlib

from mpc.plant_base import Plant

_PLANTS: dict[str, str] = {
    "sim": "mpc.sim_plant:SimPlant",
    "unitree_udp": "hardware.unitree_udp:UnitreeUdpPlant",
    "unitree_dds": "hardware.unitree_dds:UnitreeDdsPlant",
    "lcm": "hardware.lcm_plant:LcmPlant",
}


def register(name: str, target: str) -> None:
    """Register a plant class given as ``"module:Class"``."""
    _PLANTS[name] = target


def available() -> list[str]:
    return sorted(_PLANTS)


def plant_class(name: str) -> type[Plant]:
    try:
        module, cls = _PLANTS[name].split(":")
    except KeyError:
        raise ValueError(
            f"unknown plant type {name!r}; available: {', '.join(available())}") from None
    return getattr(importlib.import_module(module), cls)
