"""Property-based: any mutation of a shipped config either runs or is rejected in one line that
names the mutated key; never a traceback, never a hang.

Mutations replace a key (a leaf or a whole section) of a shipped config with an extreme or
wrong-typed value (0, negatives, huge and tiny numbers, NaN, infinities, integers beyond any
float, strings, booleans, null, lists, mappings) or delete it. Most examples go through
:func:`mpc.app.config.load_config` in this process (the validation ``mpc-run`` does before anything
else, in milliseconds); a few run ``python -m mpc.app.cli`` for real, in lockstep for 0.05 s, under
a timeout, and must exit 0 or 2 (or 1 with the damping line, a legal outcome).
"""

from __future__ import annotations

import copy
import math
import subprocess
import sys
from pathlib import Path

import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mpc.app.config import load_config, read_config_tree
from mpc.app.schema import ConfigError

REPO = Path(__file__).resolve().parents[3]
CONFIGS = sorted((REPO / "configs").glob("*.yaml"))
#: Simulated configs (as they resolve, ``extends`` followed): a subprocess run of a hardware
#: config would wait for a robot.
SIM_CONFIGS = [p for p in CONFIGS
               if read_config_tree(p).get("plant", {}).get("type", "sim") == "sim"]

#: Examples per test; docs/reliability.md quotes them.
IN_PROCESS_EXAMPLES = 300
SUBPROCESS_EXAMPLES = 3
#: Per subprocess run: a validated 0.05 s lockstep run takes seconds; beyond this it hung.
RUN_TIMEOUT_S = 240

BAD_VALUES = st.one_of(
    st.sampled_from([0, 0.0, -1, -1.0, -1e-9, 1e-300, 1e300, 10**400, -(10**30), math.nan,
                     math.inf, -math.inf, True, False, None, "", "fast", [], {}, [math.nan],
                     [0.0, math.inf], [[1.0, 2.0], [3.0, math.nan]], {"x": 1}]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.text(max_size=6),
    st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=3),
)


def _paths(node, prefix=()) -> list[tuple]:
    """Every key path of a config mapping: sections and their leaves."""
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            out.append((*prefix, k))
            out.extend(_paths(v, (*prefix, k)))
    return out


@st.composite
def mutated(draw, configs=CONFIGS):
    """(config text, the dotted keys that were mutated).

    The config as resolved (``extends`` followed) is mutated, so that the text stands alone
    where the test writes it; bad ``extends`` values have their own tests
    (test_config_extends.py)."""
    path = draw(st.sampled_from(configs))
    data = read_config_tree(path)
    keys = []
    for _ in range(draw(st.integers(1, 2))):
        if not _paths(data):  # everything deleted
            break
        target = draw(st.sampled_from(_paths(data)))
        parent = data
        for k in target[:-1]:
            parent = parent[k]
        if draw(st.integers(0, 9)) == 0:
            del parent[target[-1]]
        else:
            # a copy: the sampled mappings and lists are shared between examples, and a later
            # mutation inside one could make it contain itself
            parent[target[-1]] = copy.deepcopy(draw(BAD_VALUES))
        keys.append(".".join(map(str, target)))
    return path.stem, yaml.safe_dump(data), keys


def _names_a_key(message: str, keys: list[str]) -> bool:
    """The message names one of the mutated keys (its last part suffices for messages a
    plug-in words itself, e.g. 'unknown cost term(s) x in weights')."""
    return any(k in message or k.rsplit(".", 1)[-1] in message for k in keys)


@settings(max_examples=IN_PROCESS_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(case=mutated())
def test_mutated_config_is_valid_or_rejected_naming_the_key(case, tmp_path_factory):
    name, text, keys = case
    path = tmp_path_factory.mktemp("fuzz") / f"{name}.yaml"
    path.write_text(text)
    try:
        load_config(str(path))
    except ConfigError as e:
        message = str(e)
        assert "\n" not in message, message
        assert _names_a_key(message, keys), (keys, message)
        event("rejected in one line naming the key")
    else:
        event("valid")


@settings(max_examples=SUBPROCESS_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case=mutated(SIM_CONFIGS))
def test_mpc_run_on_a_mutated_config_runs_or_exits_2_in_one_line(case, tmp_path):
    name, text, keys = case
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    res = subprocess.run([sys.executable, "-m", "mpc.app.cli", str(path), "--mode", "lockstep",
                          "--duration", "0.05", "--quiet", "--out", str(tmp_path / "run")],
                         capture_output=True, text=True, cwd=REPO, timeout=RUN_TIMEOUT_S)
    assert "Traceback" not in res.stderr + res.stdout, res.stderr
    errors = [line for line in res.stderr.splitlines() if line.startswith("mpc-run:")]
    if res.returncode == 2:
        assert len(res.stderr.strip().splitlines()) == 1, res.stderr
        assert _names_a_key(errors[0], keys), (keys, res.stderr)
        event("exit 2")
    elif res.returncode == 1:  # a legal config whose simulated robot tripped the safety layer
        assert errors and "put in damping" in errors[0], res.stderr
        event("exit 1, damping")
    else:
        assert res.returncode == 0, res.stderr
        event("exit 0")
