"""Checking configuration values against a schema, with one-line errors.

A schema is a dataclass whose fields carry their bounds as metadata (:func:`setting`), or the
keyword parameters of a class that consumes an open section (:func:`check_kwargs`). Every error
names the source, the key and what was expected; an unknown key also names the closest valid
one. Used by :mod:`mpc.config` and by every plug-in that checks options of its own.
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import typing
from dataclasses import field
from typing import Any

from mpc.errors import UserError


class ConfigError(UserError):
    """An invalid configuration."""


def setting(default, **meta):
    """A dataclass field with a default and its checks: ``min``/``max`` (inclusive), ``gt``
    (exclusive lower bound), ``choices``, ``help``."""
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata=meta)
    return field(default=default, metadata=meta)


def unknown_key(source: str, where: str, key: str, valid) -> ConfigError:
    valid = sorted(valid)
    close = difflib.get_close_matches(key, valid, n=1, cutoff=0.5)
    hint = f" (did you mean '{close[0]}'?)" if close else f" (valid keys: {', '.join(valid)})"
    return ConfigError(f"{source}: unknown key '{where}{key}'{hint}")


def build_dataclass(cls, data, source: str, prefix: str, skip=frozenset()):
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: '{prefix.rstrip('.') or 'top level'}' must be a mapping, "
                          f"got {_describe(data)}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.name not in skip}
    for key in data:
        if key not in fields:
            raise unknown_key(source, prefix, str(key), fields)
    kwargs = {}
    for name, f in fields.items():
        where = f"{prefix}{name}"
        if name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ConfigError(f"{source}: missing required key '{where}'")
            continue
        typ = hints[name]
        if dataclasses.is_dataclass(typ):
            kwargs[name] = build_dataclass(typ, data[name], source, where + ".")
        else:
            kwargs[name] = check_value(data[name], typ, source, where, f.metadata)
    return cls(**kwargs)


def check_value(value: Any, typ, source: str, where: str, meta=None) -> Any:
    """Check ``value`` against a simple type (bool, int, float, str, list, dict, tuple) and
    the bounds in ``meta``; returns it converted (int -> float where a float is expected)."""
    meta = meta or {}
    origin = typing.get_origin(typ) or typ
    if typ is Any or typ is inspect.Parameter.empty:
        return value
    if origin is typing.Union:
        args = [a for a in typing.get_args(typ) if a is not type(None)]
        if value is None:
            return None
        errors = []
        for a in args:
            try:
                return check_value(value, a, source, where, meta)
            except ConfigError as e:
                errors.append(e)
        raise errors[-1]
    if origin is bool:
        if not isinstance(value, bool):
            raise _type_error(source, where, "true or false", value)
    elif origin is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _type_error(source, where, "an integer", value)
    elif origin is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _type_error(source, where, "a number", value)
        value = float(value)
    elif origin is str:
        if not isinstance(value, str):
            raise _type_error(source, where, "a string", value)
    elif origin in (list, tuple):
        if not isinstance(value, (list, tuple)):
            raise _type_error(source, where, "a list", value)
        args = typing.get_args(typ)
        if (args and args[-1] is not Ellipsis) or args:
            value = [check_value(v, args[0], source, f"{where}[{i}]") for i, v in
                     enumerate(value)]
        value = list(value)
    elif origin is dict and not isinstance(value, dict):
        raise _type_error(source, where, "a mapping", value)
    if "choices" in meta and value not in meta["choices"]:
        raise ConfigError(f"{source}: '{where}' must be one of {', '.join(meta['choices'])}, "
                          f"got {value!r}")
    if "min" in meta and value < meta["min"]:
        raise ConfigError(f"{source}: '{where}' must be >= {meta['min']}, got {value}")
    if "max" in meta and value > meta["max"]:
        raise ConfigError(f"{source}: '{where}' must be <= {meta['max']}, got {value}")
    if "gt" in meta and not value > meta["gt"]:
        raise ConfigError(f"{source}: '{where}' must be > {meta['gt']}, got {value}")
    return value


def check_kwargs(func, options: dict, source: str, prefix: str, exclude=()) -> dict:
    """Check an open section against the keyword parameters of ``func`` (a class or function)."""
    target = func.__init__ if inspect.isclass(func) else func
    sig = inspect.signature(target)
    try:
        hints = typing.get_type_hints(target)
    except Exception:  # unresolvable annotations: check names only
        hints = {}
    params = {n: p for n, p in sig.parameters.items()
              if n not in ("self", *exclude) and p.kind in (p.KEYWORD_ONLY,
                                                             p.POSITIONAL_OR_KEYWORD)}
    if not isinstance(options, dict):
        raise ConfigError(f"{source}: '{prefix.rstrip('.')}' must be a mapping, "
                          f"got {_describe(options)}")
    out = {}
    for key, value in options.items():
        if key not in params:
            raise unknown_key(source, prefix, str(key), params)
        out[key] = check_value(value, hints.get(key, Any), source, f"{prefix}{key}")
    for name, p in params.items():
        if p.default is inspect.Parameter.empty and name not in out:
            raise ConfigError(f"{source}: missing required key '{prefix}{name}'")
    return out


def _type_error(source: str, where: str, expected: str, value) -> ConfigError:
    return ConfigError(f"{source}: '{where}' must be {expected}, got {_describe(value)}")


def _describe(value) -> str:
    if isinstance(value, bool):
        return f"{value!r} (a boolean)"
    if isinstance(value, str):
        return f"'{value}' (a string)"
    if isinstance(value, (int, float)):
        return f"{value!r} (a number)"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return repr(value)
