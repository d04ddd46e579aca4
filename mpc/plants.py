"""Plants by name (``plant.type`` in a config). Imported on first use, so a simulation never
imports hardware transports; hardware plants plug in here by name only."""

from __future__ import annotations

from mpc.plant_base import Plant
from robots.registry import Registry

PLANTS: Registry[Plant] = Registry("plant type", {
    "sim": "mpc.sim_plant:SimPlant",
    "unitree_udp": "hardware.unitree_udp:UnitreeUdpPlant",
    "unitree_dds": "hardware.unitree_dds:UnitreeDdsPlant",
    "lcm": "hardware.lcm_plant:LcmPlant",
})
