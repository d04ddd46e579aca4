"""Plants by name (``plant.type`` in a config). Imported on first use, so a simulation never
imports hardware transports; hardware plants plug in here by name only."""

from __future__ import annotations

from mpc.plant_base import Plant
from robots.registry import Registry

PLANTS: Registry[Plant] = Registry("plant type", {
    "sim": "mpc.sim_plant:SimPlant",
    # The simulation seen through noisy sensors and the hardware configs' base-state estimator.
    "sim_estimated": "hardware.estimation.sim_plant:EstimatedSimPlant",
    "unitree_udp": "hardware.unitree.udp_plant:UnitreeUdpPlant",
    "unitree_dds": "hardware.unitree.dds_plant:UnitreeDdsPlant",
    "lcm": "hardware.lcm.plant:LcmPlant",
})

#: The safety layer (``safety:`` of a config) is part of the hardware plug-in: its config
#: schema, the wrapper that applies it to a plant that does not enforce it itself (a
#: simulation with ``safety.in_simulation``), and the safety envelope that validation holds a
#: robot's config to. Loaded by name like the plants.
SAFETY: Registry = Registry("safety layer part", {
    "config": "hardware.safety.layer:SafetyConfig",
    "wrapper": "hardware.safety.safe_plant:SafePlant",
    # the values a robot may be run with (a function of a validated Config)
    "envelope": "hardware.safety.envelope:check_envelope",
})
