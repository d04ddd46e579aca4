"""The documentation's commands run and its references resolve.

README.md and every page of docs/ are read as Markdown. A *command* is a line of a shell code
block (untagged, ``sh``, ``bash``, ``shell`` or ``console``) or an inline code span that starts
one of the project's programs: an ``mpc-*`` entry point of pyproject.toml, ``python
scripts/X.py`` (or ``scripts/X.py``), or ``python -m MODULE``. Each is parsed by the program's
own argparse parser, found by calling the program's ``main`` with ``parse_args`` intercepted,
so nothing runs; only the arguments a short inline fragment may leave out (required options,
positionals) are not demanded. Every config a command names (``mpc-run``'s CONFIG, a
``--config``/``--configs`` value, any ``*.yaml``) must load with the command's overrides
(``--set``, and ``mpc-run``'s ``--backend``/``--mode``/...). ``make`` targets must exist in the
Makefile and ``pip install`` extras in pyproject.toml.

In inline code, a repository path (``hardware/unitree/remote.py``, ``tests/x.py::test_y``) must
exist, a dotted name of a package (``mpc.app.run.run``) must import, and a shipped config's name
(``go2_hw_velocity``) must load. Every relative link and image must resolve, anchors included.

Code blocks tagged ``text`` hold usage synopses (``mpc-run CONFIG [--backend NAME]``): their
metavariables are not arguments, so they are not parsed. The checker is tested on planted
mistakes at the end of this file.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import importlib.util
import io
import re
import shlex
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
#: ``mpc-run`` -> ``mpc.app.cli:main``
ENTRY_POINTS: dict[str, str] = PYPROJECT["project"]["scripts"]
README_MAX_LINES = 300
SHELL_BLOCKS = {"", "sh", "bash", "shell", "console"}
#: Top-level folders whose paths inline code may name.
REPO_DIRS = ("common", "robots", "derivatives", "mpc", "hardware", "scripts", "tests", "configs",
             "docs")
#: Packages whose dotted names inline code may name (``derivatives.X`` is also a config
#: section, ``derivatives.backend``, so it is left out).
PACKAGES = ("common", "robots", "mpc", "hardware")
ROBOTS = ("a1", "go1", "go2", "h1")


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


# ----------------------------------------------------------------------------------------------
# Reading Markdown


@dataclass(frozen=True)
class Code:
    """A code block's body or an inline code span, where it starts (1-based line)."""

    line: int
    text: str
    lang: str | None  # the block's info string; None for inline code


def split_markdown(text: str) -> tuple[list[Code], str]:
    """The fenced code blocks, and the prose with each block's lines blanked (so that line
    numbers still count)."""
    blocks, prose = [], []
    fence: str | None = None
    body: list[str] = []
    start = lang = 0
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if fence is None and (stripped.startswith("```") or stripped.startswith("~~~")):
            fence, lang, start, body = stripped[:3], stripped[3:].strip(), number + 1, []
            prose.append("")
        elif fence is not None and stripped.startswith(fence):
            blocks.append(Code(start, "\n".join(body), lang))
            fence = None
            prose.append("")
        elif fence is not None:
            body.append(line)
            prose.append("")
        else:
            prose.append(line)
    return blocks, "\n".join(prose)


INLINE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)


def inline_code(prose: str) -> list[Code]:
    """Inline code spans (one may wrap onto the next line of its paragraph)."""
    spans = []
    for m in INLINE.finditer(prose):
        if "\n\n" in m.group(2):
            continue
        line = prose.count("\n", 0, m.start()) + 1
        spans.append(Code(line, " ".join(m.group(2).split()), None))
    return spans


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    _, prose = split_markdown(path.read_text())
    seen: dict[str, int] = {}
    out = set()
    for line in prose.splitlines():
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


# ----------------------------------------------------------------------------------------------
# Commands


@dataclass(frozen=True)
class Command:
    line: int
    words: tuple[str, ...]  # the program's arguments
    program: str  # an entry point, scripts/X.py, -m MODULE, make or pip


def _shell_lines(block: str) -> list[tuple[int, str]]:
    """Lines of a shell block with their offsets, backslash continuations joined."""
    out, pending, first = [], "", 0
    for offset, line in enumerate(block.splitlines()):
        line = line.removeprefix("$ ")
        if not pending:
            first = offset
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        out.append((first, pending + line))
        pending = ""
    if pending:
        out.append((first, pending))
    return out


def _strip_prefix(words: list[str]) -> list[str]:
    """Drop what only changes how a program is started: VAR=value, sudo, nice -n N."""
    while words:
        if re.match(r"^[A-Za-z_]\w*=", words[0]) or words[0] == "sudo":
            words = words[1:]
        elif words[0] == "nice":
            words = words[3:] if words[1:2] == ["-n"] else words[1:]
        else:
            return words
    return words


def command_of(words: list[str], line: int) -> Command | None:
    """The project's program these words start, or None for anything else."""
    words = _strip_prefix(words)
    if not words:
        return None
    head = words[0]
    if head in ENTRY_POINTS or head in ("make", "pip"):
        return Command(line, tuple(words[1:]), head)
    if head.startswith("scripts/") and head.endswith(".py") and len(words) > 1:
        return Command(line, tuple(words[1:]), head)  # alone, it is a path (a reference)
    if Path(head).name.startswith("python"):
        rest = words[1:]
        while rest and rest[0] in ("-I", "-u", "-X"):  # interpreter options
            rest = rest[2:] if rest[0] == "-X" else rest[1:]
        if rest and rest[0] == "-m" and len(rest) > 1:
            if rest[1] == "pip":
                return Command(line, tuple(rest[2:]), "pip")
            if rest[1].split(".")[0] in (*PACKAGES, "derivatives"):
                return Command(line, tuple(rest[2:]), f"-m {rest[1]}")
        if rest and rest[0].startswith("scripts/"):
            return Command(line, tuple(rest[1:]), rest[0])
    return None


def commands_in(code: Code) -> tuple[list[Command], list[str]]:
    """The commands of a code block or span, and problems reading them."""
    if code.lang is not None and code.lang not in SHELL_BLOCKS:
        return [], []
    lines = [(0, code.text)] if code.lang is None else _shell_lines(code.text)
    found, problems = [], []
    for offset, line in lines:
        try:
            words = shlex.split(line, comments=code.lang is not None)
        except ValueError as e:
            if command_of(line.split(), 0):
                problems.append(f"line {code.line + offset}: cannot split {line!r}: {e}")
            continue
        segment: list[str] = []
        for word in [*words, ";"]:
            if word in (";", "&", "&&", "||", "|"):
                cmd = command_of(segment, code.line + offset)
                if cmd:
                    found.append(cmd)
                segment = []
            else:
                segment.append(word)
    return found, problems


class _ParserCapturedError(Exception):
    def __init__(self, parser: argparse.ArgumentParser):
        self.parser = parser


def captured_parser(main: Callable[[], object]) -> argparse.ArgumentParser:
    """The parser ``main`` builds, taken at its ``parse_args`` call: nothing after it runs."""

    def capture(self, args=None, namespace=None):
        raise _ParserCapturedError(self)

    # a program may install its signal handlers before it parses: the suite's own stay
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        with mock.patch.object(argparse.ArgumentParser, "parse_args", capture), \
                mock.patch.object(argparse.ArgumentParser, "parse_known_args", capture):
            try:
                main()
            except _ParserCapturedError as parsed:
                return parsed.parser
    finally:
        for s, handler in handlers.items():
            signal.signal(s, handler)
    raise AssertionError(f"{main} returned without parsing its arguments")


def _load_script(path: Path):
    name = f"_docs_script_{path.stem}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        sys.path.insert(0, str(path.parent))  # scripts import their neighbours
        try:
            spec.loader.exec_module(module)
        finally:
            sys.path.remove(str(path.parent))
    return sys.modules[name]


@functools.cache
def parser_of(program: str) -> argparse.ArgumentParser | str:
    """The program's parser with nothing required, or why there is none."""
    if program in ENTRY_POINTS:
        module, _, function = ENTRY_POINTS[program].partition(":")
        main = getattr(importlib.import_module(module), function)
    elif program.startswith("-m "):
        try:
            main = importlib.import_module(program[3:]).main
        except (ImportError, AttributeError) as e:
            return f"{program}: {e}"
    else:
        path = ROOT / program
        if not path.is_file():
            return f"{program}: no such script"
        main = getattr(_load_script(path), "main", None)
        if main is None:
            return f"{program}: has no main()"
    parser = captured_parser(main)
    for action in parser._actions:
        action.required = False  # an inline fragment may leave out what a full command needs
    return parser


def parse(parser: argparse.ArgumentParser, words: tuple[str, ...]) -> argparse.Namespace | str:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            return parser.parse_args(list(words))
        except SystemExit as e:
            if e.code in (0, None):  # --help
                return argparse.Namespace()
            lines = err.getvalue().strip().splitlines()
            return lines[-1] if lines else f"exit {e.code}"


def _flat(values) -> list[str]:
    if values is None:
        return []
    if isinstance(values, str):
        return [values]
    return [v for item in values for v in _flat(item)]


#: Where the shipped terrain maps are (YAML files that are not configs).
MAPS = "configs/maps/"


def configs_and_overrides(cmd: Command, ns: argparse.Namespace) -> tuple[list[str], list[str]]:
    """The configs the command names, and the overrides it applies to them."""
    if cmd.program == "mpc-run":
        from mpc.app.cli import _overrides

        return ([ns.config] if getattr(ns, "config", None) else []), _overrides(ns)
    names = _flat(getattr(ns, "config", None)) + _flat(getattr(ns, "configs", None))
    names += [w.split("=", 1)[-1] for w in cmd.words if w.endswith(".yaml")]
    names = [n for n in names if not n.startswith(MAPS)]  # terrain maps, not configs
    overrides = _flat(getattr(ns, "set", None))
    plain = []
    for name in names:  # compare_backends' CONFIG:KEY=VALUE,... names its overrides inline
        config, sep, inline = name.partition(".yaml:")
        plain.append(config + ".yaml" if sep else name)
        overrides += inline.split(",") if sep else []
    return list(dict.fromkeys(plain)), overrides


def load_problem(name: str, overrides: list[str]) -> str | None:
    from mpc.app.config import load_config
    from mpc.app.schema import ConfigError

    try:
        load_config(name, overrides)
    except ConfigError as e:
        return str(e)
    return None


def _make_targets() -> set[str]:
    return set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), re.MULTILINE))


def check_command(cmd: Command) -> list[str]:
    where = f"line {cmd.line}: {cmd.program} {shlex.join(cmd.words)}"
    if cmd.program == "make":
        missing = [t for t in cmd.words if not t.startswith("-") and t not in _make_targets()]
        return [f"{where}: no Makefile target {missing}"] if missing else []
    if cmd.program == "pip":
        extras = PYPROJECT["project"]["optional-dependencies"]
        wanted = [e for w in cmd.words for m in re.finditer(r"\.\[([\w,-]+)\]", w)
                  for e in m.group(1).split(",")]
        unknown = [e for e in wanted if e not in extras]
        return [f"{where}: no extra {unknown} in pyproject.toml"] if unknown else []
    parser = parser_of(cmd.program)
    if isinstance(parser, str):
        return [f"{where}: {parser}"]
    ns = parse(parser, cmd.words)
    if isinstance(ns, str):
        return [f"{where}: {ns}"]
    names, overrides = configs_and_overrides(cmd, ns)
    return [f"{where}: {problem}" for name in names
            if (problem := load_problem(name, overrides))]


# ----------------------------------------------------------------------------------------------
# References in inline code and links

PATH = re.compile(rf"^(?:{'|'.join(REPO_DIRS)})/[\w./*-]*$")
DOTTED = re.compile(rf"^(?:{'|'.join(PACKAGES)})(?:\.[A-Za-z_]\w*)+(?:\(\))?$")
#: File names that look like dotted names (``robots.md``).
FILE_SUFFIX = re.compile(r"\.(?:md|csv|py|png|json|yaml|xml|npz|log|html|txt|lcm)$")
CONFIG_NAME = re.compile(rf"^(?:{'|'.join(ROBOTS)})_[a-z0-9_]+(?:\.yaml)?$")
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def resolves(dotted: str) -> bool:
    parts = dotted.removesuffix("()").split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for name in parts[cut:]:
                obj = getattr(obj, name)
        except AttributeError:
            return False
        return True
    return False


def check_reference(span: Code) -> list[str]:
    text = span.text.rstrip(".,;:")
    where = f"line {span.line}: `{span.text}`"
    if PATH.match(text.split("::")[0]):
        path, _, test = text.partition("::")
        matches = sorted(ROOT.glob(path.rstrip("/")))
        if not matches:
            return [f"{where}: no such path"]
        name = test.split("[")[0]
        if name and not any(re.search(rf"^\s*(?:async )?def {re.escape(name)}\b",
                                      m.read_text(), re.MULTILINE) for m in matches):
            return [f"{where}: no test {name} in {path}"]
        if (path.startswith("configs/") and path.endswith(".yaml") and "*" not in path
                and not path.startswith(MAPS)):
            problem = load_problem(path, [])
            return [f"{where}: {problem}"] if problem else []
        return []
    if DOTTED.match(text) and not FILE_SUFFIX.search(text):
        return [] if resolves(text) else [f"{where}: does not import"]
    if CONFIG_NAME.match(text):
        problem = load_problem(text, [])
        return [f"{where}: {problem}"] if problem else []
    return []


def check_links(doc: Path, prose: str) -> list[str]:
    problems = []
    without_code = INLINE.sub(lambda m: " " * len(m.group(0)), prose)
    for m in LINK.finditer(without_code):
        target = m.group(1)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        line = without_code.count("\n", 0, m.start()) + 1
        path, _, fragment = target.partition("#")
        file = (doc.parent / path).resolve() if path else doc
        if not file.exists():
            problems.append(f"line {line}: link to {target}: no such file")
        elif fragment and file.suffix == ".md" and fragment not in anchors(file):
            problems.append(f"line {line}: link to {target}: no heading #{fragment}")
    return problems


def check_document(doc: Path) -> list[str]:
    """Every problem of one Markdown file, each as ``FILE:line N: what``."""
    blocks, prose = split_markdown(doc.read_text())
    problems: list[str] = []
    spans = inline_code(prose)
    for code in [*blocks, *spans]:
        found, unreadable = commands_in(code)
        problems += unreadable
        for cmd in found:
            problems += check_command(cmd)
        if code.lang is None and not found:
            problems += check_reference(code)
    problems += check_links(doc, prose)
    return [f"{doc.name}:{p}" for p in problems]


# ----------------------------------------------------------------------------------------------
# The docs


@pytest.fixture(autouse=True)
def _at_the_root(monkeypatch):
    """Commands in the docs run from the repository's root."""
    monkeypatch.chdir(ROOT)


def test_the_readme_is_a_front_door_of_at_most_300_lines():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"


@pytest.mark.parametrize("doc", documents(), ids=lambda p: p.name)
def test_every_command_reference_and_link_of_the_docs_holds(doc):
    problems = check_document(doc)
    assert not problems, "\n".join(problems)


def test_the_docs_name_commands_the_checker_parses():
    """The checker sees the commands it is meant to check (a parser that found nothing would
    pass every document)."""
    found = set()
    for doc in documents():
        blocks, prose = split_markdown(doc.read_text())
        for code in [*blocks, *inline_code(prose)]:
            found.update(c.program for c in commands_in(code)[0])
    assert {"mpc-run", "mpc-fake-robot", "mpc-plot", "mpc-replay", "make",
            "scripts/hw_loopback.py", "scripts/bench_planner.py"} <= found


# ----------------------------------------------------------------------------------------------
# The checker itself, on planted mistakes

GOOD = """# Title

## A section

```
mpc-run a1_trot --mode lockstep --duration 3 --set task.goal="[1, 0]"
python scripts/eval_goals.py configs/a1_trot.yaml --duration 10
mpc-fake-robot --robot go1 --transport udp --port 18007 &
make test
```

```text
mpc-run CONFIG [--backend NAME] [--duration SECONDS]
```

Inline: `mpc-run go1_hw --dry-run`, `hardware/unitree/remote.py`, `mpc.app.run.run`,
`go2_hw_velocity`, [a section](#a-section), ![plot](plots/gait_a1_sim.png).
"""

BAD = {
    "mpc-run a1_trot --no-such-option": "unrecognized arguments: --no-such-option",
    "mpc-run a1_trot --mode sideways": "invalid choice: 'sideways'",
    "mpc-run configs/no_such.yaml": "config file not found: configs/no_such.yaml",
    "mpc-run a1_trot --set planner.horizon=-1": "'planner.horizon' must be > 0.0",
    "mpc-run a1_trot --set planner.no_such_key=1": "no_such_key",
    "python scripts/no_such_script.py --duration 3": "scripts/no_such_script.py: no such script",
    "python scripts/eval_goals.py configs/a1_trot.yaml --no-such": "unrecognized arguments",
    "python scripts/hw_loopback.py --robot go1 --config go1_hw_nope": "config file not found",
    "python scripts/eval_latency.py --configs configs/go1_hw.yaml --set runtime.duration=x":
        "'runtime.duration' must be a number",
    "mpc-fake-robot --robot go1 --transport carrier-pigeon": "invalid choice",
    "mpc-plot runs/x --no-such": "unrecognized arguments",
    "python -m hardware.fake.lcm_robot --robot a1 --no-such": "unrecognized arguments",
    "make no-such-target": "no Makefile target",
    "pip install -e '.[no-such-extra]'": "no extra",
}


def _doc(tmp_path: Path, text: str) -> Path:
    doc = tmp_path / "docs" / "page.md"
    doc.parent.mkdir(exist_ok=True)
    doc.write_text(text)
    (doc.parent / "plots").mkdir(exist_ok=True)
    (doc.parent / "plots" / "gait_a1_sim.png").write_bytes(b"")
    return doc


def test_the_checker_passes_a_correct_page(tmp_path):
    doc = _doc(tmp_path, GOOD)
    blocks, prose = split_markdown(GOOD)
    programs = [c.program for code in [*blocks, *inline_code(prose)]
                for c in commands_in(code)[0]]
    assert programs == ["mpc-run", "scripts/eval_goals.py", "mpc-fake-robot", "make", "mpc-run"]
    assert check_document(doc) == []


@pytest.mark.parametrize("command,expected", BAD.items(), ids=list(BAD))
@pytest.mark.parametrize("where", ["block", "inline"])
def test_the_checker_finds_a_planted_bad_command(tmp_path, command, expected, where):
    text = (GOOD + f"\n```\n{command}\n```\n" if where == "block"
            else GOOD + f"\nRun `{command}` to see.\n")
    problems = check_document(_doc(tmp_path, text))
    assert len(problems) == 1 and expected in problems[0], problems
    line = len(GOOD.splitlines()) + (3 if where == "block" else 2)
    assert problems[0].startswith(f"page.md:line {line}: "), problems


@pytest.mark.parametrize("snippet,expected", [
    ("[gone](missing.md)", "link to missing.md: no such file"),
    ("![gone](plots/missing.png)", "link to plots/missing.png: no such file"),
    ("[here](#no-such-heading)", "no heading #no-such-heading"),
    ("[there](../README.md#no-such-heading)", "no heading #no-such-heading"),
    ("`hardware/no_such_module.py`", "no such path"),
    ("`tests/test_docs.py::test_no_such_test`", "no test test_no_such_test"),
    ("`mpc.app.run.no_such_function`", "does not import"),
    ("`go1_hw_nope`", "config file not found"),
])
def test_the_checker_finds_a_planted_bad_reference(tmp_path, snippet, expected):
    (tmp_path / "README.md").write_text("# Top\n")
    problems = check_document(_doc(tmp_path, GOOD + f"\nSee {snippet}.\n"))
    assert len(problems) == 1 and expected in problems[0], problems


def test_a_heading_anchor_follows_github():
    assert slug("Seeing it in simulation: `plant.type: sim_estimated`") == \
        "seeing-it-in-simulation-planttype-sim_estimated"
    assert slug("Driving it: velocity commands") == "driving-it-velocity-commands"


def test_the_page_measure_estimator_writes_has_its_markers():
    """``scripts/measure_estimator.py --write-docs`` replaces the table between its markers in
    docs/estimation.md; without them it would fail after an hour of loopback runs."""
    script = _load_script(ROOT / "scripts" / "measure_estimator.py")
    text = (ROOT / "docs" / "estimation.md").read_text()
    assert text.count(script.BEGIN) == 1 and text.count(script.END) == 1
    assert text.index(script.BEGIN) < text.index(script.END)
