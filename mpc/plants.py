"""Plants by name (``plant.type`` in a config). Imported on first use, so a simulation never
imports hardware transports; hardware plants plug in here by name only."""

from __future__ import annotations

from mpc.plant_base import Plant
from robots.registry import Registry

PLANTS: Registry[Plant] = Registry("plant type", {
    "sim": "mpc.sim_plant:SimPlant",
    "unitree_udp": "hardware.unitree.udp_plant:UnitreeUdpPlant",
    "unitree_dds": "hardware.unitree.dds_plant:UnitreeDdsPlant",
    "lcm": "hardware.lcm.plant:LcmPlant",
})
