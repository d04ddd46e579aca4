"""Checking configuration values against a schema, with one-line errors.

A schema is a dataclass whose fields carry their bounds as metadata (:func:`setting`), or the
keyword parameters of a class that consumes an open section (:func:`check_kwargs`). Every error
names the source, the key and what was expected; an unknown key also names the closest valid
one. Used by :mod:`mpc.app.config` and by every plug-in that checks options of its own.

Bounds are one kind of thing everywhere: a mapping of ``min``/``max`` (inclusive) and
``gt``/``lt`` (exclusive). A fixed section's dataclass field carries it as metadata
(``setting(0.01, gt=0.0, max=0.1)``); a class that consumes an open section declares it in a
class attribute ``RANGES = {"eps": {"gt": 0.0, "max": 1e-2}}`` keyed by keyword argument (a
plain mapping, so plug-ins in lower layers need not import this module). A subclass that takes
``**kwargs`` and passes them to its base's ``__init__`` has its base's options too, and its
``RANGES`` need only name its own (:func:`keyword_options`, :func:`option_ranges`). A string
option's entry may give its ``choices`` instead (``{"ground": {"choices": ("level", "fit")}}``).
Bounds apply
to every number of a value, so they also bound the elements of a list (``task.goal``,
``plant.kp``) or the values of a mapping (``task.weights``). Independently of bounds, no value
anywhere may hold a NaN or an infinity: a config that does is never meaningful.
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import math
import sys
import types
import typing
from typing import Any

from mpc.app.errors import UserError


class ConfigError(UserError):
    """An invalid configuration."""


#: The largest float: an integer beyond it has no float value.
_FLOAT_MAX = sys.float_info.max

#: The keys of a bounds mapping (see the module docstring).
BOUND_KEYS = ("min", "max", "gt", "lt")


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
    _check_finite(value, source, where)
    origin = typing.get_origin(typ) or typ
    if typ is Any or typ is inspect.Parameter.empty:
        _check_bounds(value, meta, source, where)
        return value
    if origin in (typing.Union, types.UnionType):  # Optional[X] and X | None alike
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
        if abs(value) > _FLOAT_MAX:  # an integer beyond any float (float() would overflow)
            raise ConfigError(f"{source}: '{where}' must be a finite number, got "
                              f"{_show(value)}")
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
    _check_bounds(value, meta, source, where)
    return value


def describe_bounds(bounds: dict) -> str:
    """``> 0 and <= 0.1`` for ``{"gt": 0, "max": 0.1}``."""
    ops = {"gt": ">", "min": ">=", "lt": "<", "max": "<="}
    return " and ".join(f"{ops[k]} {bounds[k]}" for k in ("gt", "min", "lt", "max")
                        if k in bounds)


def _check_bounds(value, meta: dict, source: str, where: str) -> None:
    """Every number in ``value`` (itself, a list's elements, a mapping's values) within the
    bounds in ``meta``; the error names the element and the whole range."""
    bounds = {k: meta[k] for k in BOUND_KEYS if k in meta}
    if not bounds:
        return
    for at, x in _numbers(value, where):
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            raise _type_error(source, at, "a number", x)
        if (("min" in bounds and x < bounds["min"]) or ("max" in bounds and x > bounds["max"])
                or ("gt" in bounds and not x > bounds["gt"])
                or ("lt" in bounds and not x < bounds["lt"])):
            raise ConfigError(f"{source}: '{at}' must be {describe_bounds(bounds)}, "
                              f"got {_show(x)}")


def _show(x: float) -> str:
    """A number for a one-line message: a huge integer by its size, not its digits."""
    if isinstance(x, int) and abs(x) > 10**15:
        return f"an integer of {x.bit_length()} bits"
    return str(x)


def _numbers(value, where: str):
    """(key, leaf) for every leaf of nested lists and mappings."""
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _numbers(v, f"{where}[{i}]")
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _numbers(v, f"{where}.{k}")
    else:
        yield where, value


def _check_finite(value, source: str, where: str) -> None:
    """No NaN or infinity anywhere in ``value`` (YAML's ``.nan``, ``.inf``, ``1.0e999``)."""
    for at, x in _numbers(value, where):
        if isinstance(x, float) and not math.isfinite(x):
            raise ConfigError(f"{source}: '{at}' must be a finite number, got {x}")


def keyword_options(func, exclude=()) -> dict[str, tuple[inspect.Parameter, Any]]:
    """The options a class (its ``__init__``) or a function takes by keyword: name ->
    (parameter, type hint). A class's ``__init__`` that takes ``**kwargs`` passes them on to
    its base's, so the options of the next ``__init__`` up the class's MRO follow, and so on
    up to one without ``**kwargs``; where two declare an option, the lower class's (its
    default and hint) wins."""
    if inspect.isclass(func):
        inits = [k.__dict__["__init__"] for k in func.__mro__ if "__init__" in k.__dict__]
    else:
        inits = [func]
    out: dict[str, tuple[inspect.Parameter, Any]] = {}
    for init in inits:
        params = inspect.signature(init).parameters
        try:
            hints = typing.get_type_hints(init)
        except Exception:  # unresolvable annotations: check names only
            hints = {}
        for n, p in params.items():
            if (n not in ("self", *exclude) and n not in out
                    and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)):
                out[n] = (p, hints.get(n, Any))
        if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
            break
    return out


def option_ranges(func) -> dict[str, dict]:
    """The bounds of a class's options: the ``RANGES`` of the class and of its bases, a
    lower class's bounds of an option replacing its bases'; a function's own ``RANGES``."""
    if not inspect.isclass(func):
        return dict(getattr(func, "RANGES", {}))
    ranges: dict[str, dict] = {}
    for klass in reversed(func.__mro__):
        ranges.update(klass.__dict__.get("RANGES", {}))
    return ranges


def check_kwargs(func, options: dict, source: str, prefix: str, exclude=()) -> dict:
    """Check an open section against the keyword options of ``func`` (a class or function,
    :func:`keyword_options`): names, type hints, and the bounds of :func:`option_ranges` (see
    the module docstring)."""
    params = keyword_options(func, exclude)
    ranges = option_ranges(func)
    if not isinstance(options, dict):
        raise ConfigError(f"{source}: '{prefix.rstrip('.')}' must be a mapping, "
                          f"got {_describe(options)}")
    out = {}
    for key, value in options.items():
        if key not in params:
            raise unknown_key(source, prefix, str(key), params)
        out[key] = check_value(value, params[key][1], source, f"{prefix}{key}",
                               ranges.get(key))
    for name, (p, _) in params.items():
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
