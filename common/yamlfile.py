"""Reading a YAML file whose errors a user must be able to fix: every failure is one line that
names the file (and, for a syntax error, the line and column), raised as the caller's error
type, so that the command reporting it exits 2 with that line."""

from __future__ import annotations

import re
from pathlib import Path

import yaml


class Loader(yaml.SafeLoader):
    """PyYAML's safe loader reading floats as YAML 1.2 does: PyYAML follows YAML 1.1, where a
    float needs a dot, so ``1e-4`` or ``5e3`` would be the strings "1e-4" and "5e3" and a
    setting written so would be refused as not a number."""


Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."))


def loads(text: str) -> object:
    """The YAML document in ``text``, read by :class:`Loader` (yaml.YAMLError if invalid)."""
    return yaml.load(text, Loader=Loader)


def read_yaml(path: str | Path, what: str, error: type[Exception] = ValueError) -> object:
    """The document in ``path`` (None for an empty file); ``what`` names the file's kind in
    the message ("config file", "overlay file"); failures raise ``error`` with one line."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise error(f"cannot read {what} {p}: {e.strerror}") from None
    try:
        return loads(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise error(f"{p}: invalid YAML{where}: {problem}") from None
    except ValueError as e:  # a value YAML parses but Python cannot hold (a 5000-digit integer)
        raise error(f"{p}: invalid value: {e}") from None
