"""Names to classes, imported on first use; plug-ins from packages above register themselves.

Every concept that a config selects by name (a task, a derivative backend, a plant, a command
source, a base-state source) keeps a :class:`Registry` of ``"module:Class"`` targets, so choosing
one never imports another (``fd`` compiles no analytic kernels, a simulation imports no hardware
transport).

A registry names only what lives in its own layer or below. Plug-ins from a higher layer (the
hardware plants, command sources and observers that :mod:`mpc.app` selects by name) register
themselves as Python entry points in the registry's ``group``, declared in ``pyproject.toml``
of the package that provides them::

    [project.entry-points."legged_mpc.plants"]
    unitree_udp = "hardware.unitree.udp_plant:UnitreeUdpPlant"

so the code of the lower layer never spells a module of a higher one (``tests/test_layers.py``
checks both the imports and these declarations). Entry points are read from the installed
distribution's metadata (``pip install -e .`` or the wheel).
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Generic, TypeVar

T = TypeVar("T")

#: Prefix of the entry-point groups of this project's registries.
GROUP_PREFIX = "legged_mpc."


class Registry(Generic[T]):
    """``name -> "module:Class"``; :meth:`get` imports the module and returns the class.

    ``group`` (e.g. ``"plants"``) adds the entry points of group ``legged_mpc.<group>``, read
    on first use; a built-in name cannot be taken by a plug-in.
    """

    def __init__(self, what: str, targets: dict[str, str], group: str | None = None):
        #: What the names are names of, for messages ("derivative backend").
        self.what = what
        self.group = GROUP_PREFIX + group if group else None
        self._targets = dict(targets)
        self._plugins_read = group is None

    def register(self, name: str, target: str) -> None:
        """Add or replace ``name``, given as ``"module:Class"``."""
        module, sep, attr = target.partition(":")
        if not (module and sep and attr):
            raise ValueError(f"{self.what} {name!r}: target must be 'module:Class', "
                             f"got {target!r}")
        self._targets[name] = target

    def targets(self) -> dict[str, str]:
        """Every name with its ``"module:Class"`` target, plug-ins included."""
        self._read_plugins()
        return dict(self._targets)

    def available(self) -> list[str]:
        return sorted(self.targets())

    def __contains__(self, name: object) -> bool:
        return name in self.targets()

    def get(self, name: str) -> type[T]:
        """The class registered as ``name``; ValueError naming the choices if there is none."""
        try:
            module, attr = self.targets()[name].split(":")
        except (KeyError, TypeError):  # TypeError: not a name at all (a list, a mapping)
            raise ValueError(f"unknown {self.what} {name!r}; available: "
                             f"{', '.join(self.available())}") from None
        return getattr(importlib.import_module(module), attr)

    def _read_plugins(self) -> None:
        if self._plugins_read:
            return
        self._plugins_read = True
        for ep in entry_points(group=self.group):
            if ep.name not in self._targets:
                self.register(ep.name, ep.value)
