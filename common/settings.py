"""Settings structs whose fields carry their bounds.

A settings dataclass (the planner's :class:`~mpc.planner.ilqr.ILQRSettings`, the app's config
sections) declares each field with :func:`setting`: its default and its checks as metadata,
``min``/``max`` (inclusive), ``gt``/``lt`` (exclusive), ``choices``, ``help``. The struct's
owner needs nothing else; the application's config schema (:mod:`mpc.app.schema`) reads the
metadata to validate user input.
"""

from __future__ import annotations

from dataclasses import field


def setting(default, **meta):
    """A dataclass field with a default and its checks (see the module docstring)."""
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata=meta)
    return field(default=default, metadata=meta)
