"""Names to classes, imported on first use.

Every concept that a config selects by name (a task, a derivative backend, a plant, a
base-state source) keeps a :class:`Registry` of ``"module:Class"`` targets, so choosing one
never imports another (``fd`` compiles no analytic kernels, a simulation imports no hardware
transport) and a plug-in registers itself without touching the code that uses it. It lives at
the bottom layer because every layer above keeps one.
"""

from __future__ import annotations

import importlib
from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    """``name -> "module:Class"``; :meth:`get` imports the module and returns the class."""

    def __init__(self, what: str, targets: dict[str, str]):
        #: What the names are names of, for messages ("derivative backend").
        self.what = what
        self._targets = dict(targets)

    def register(self, name: str, target: str) -> None:
        """Add or replace ``name``, given as ``"module:Class"``."""
        module, sep, attr = target.partition(":")
        if not (module and sep and attr):
            raise ValueError(f"{self.what} {name!r}: target must be 'module:Class', "
                             f"got {target!r}")
        self._targets[name] = target

    def available(self) -> list[str]:
        return sorted(self._targets)

    def __contains__(self, name: object) -> bool:
        return name in self._targets

    def get(self, name: str) -> type[T]:
        """The class registered as ``name``; ValueError naming the choices if there is none."""
        try:
            module, attr = self._targets[name].split(":")
        except KeyError:
            raise ValueError(f"unknown {self.what} {name!r}; available: "
                             f"{', '.join(self.available())}") from None
        return getattr(importlib.import_module(module), attr)
