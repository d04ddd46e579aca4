"""Plants by name (``plant.type`` in a config). Imported on first use, so a simulation never
imports hardware transports. The hardware plants (``sim_estimated``: the simulation through
noisy sensors and a hardware config's estimator; ``unitree_udp``, ``unitree_dds``, ``lcm``)
register themselves as entry points of group ``legged_mpc.plants`` (see
:mod:`common.registry`)."""

from __future__ import annotations

from common.registry import Registry
from mpc.app.plants.plant_base import Plant

PLANTS: Registry[Plant] = Registry("plant type", {
    "sim": "mpc.app.plants.sim_plant:SimPlant",
}, group="plants")

#: The safety layer (``safety:`` of a config) is part of the hardware plug-in: its config
#: schema, and the wrapper that applies it to a plant that does not enforce it itself (a
#: simulation with ``safety.in_simulation``), and the safety envelope that validation holds a
#: robot's config to: ``config``, ``wrapper`` and ``envelope``, entry points of group
#: ``legged_mpc.safety``.
SAFETY: Registry = Registry("safety layer part", {}, group="safety")
