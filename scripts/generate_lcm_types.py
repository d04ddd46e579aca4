"""Regenerate the Python LCM types in hardware/lcm/lcm_types/ from the .lcm definitions beside them.

    python scripts/generate_lcm_types.py          # rewrite the generated modules
    python scripts/generate_lcm_types.py --check  # exit 1 if they differ from lcm-gen's output

The generated modules are committed (a fresh clone imports them without running lcm-gen); the
test suite runs ``--check`` so they cannot drift from the definitions. lcm-gen ships with the
``lcm`` wheel. The LCM package is ``lcm_types``; ``--package-prefix hardware.lcm`` makes the Python
modules import each other as ``hardware.lcm.lcm_types``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

TYPES_DIR = Path(__file__).resolve().parent.parent / "hardware" / "lcm" / "lcm_types"


def lcm_gen() -> str:
    """The lcm-gen next to this interpreter (the venv's), else the one on PATH."""
    local = Path(sys.executable).parent / "lcm-gen"
    found = str(local) if local.exists() else shutil.which("lcm-gen")
    if found is None:
        raise SystemExit("lcm-gen not found: install the 'lcm' package")
    return found


def generate(out: Path) -> dict[str, str]:
    """Run lcm-gen on every .lcm file; returns {module file name: source}."""
    sources = sorted(TYPES_DIR.glob("*.lcm"))
    subprocess.run([lcm_gen(), "--python", "--ppath", str(out), "--package-prefix", "hardware.lcm",
                    *map(str, sources)], check=True)
    package = out / "hardware" / "lcm" / "lcm_types"
    return {p.name: p.read_text() for p in sorted(package.glob("*.py"))}


def _comparable(text: str) -> str:
    """Source without the line naming lcm-gen's version (it changes nothing in the code)."""
    return "\n".join(line for line in text.splitlines() if not line.startswith("lcm-gen "))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        fresh = generate(Path(tmp))
    current = {p.name: p.read_text() for p in sorted(TYPES_DIR.glob("*.py"))}
    if args.check:
        stale = sorted(set(fresh) ^ set(current) | {
            n for n in fresh if _comparable(current.get(n, "")) != _comparable(fresh[n])})
        if stale:
            print(f"stale generated LCM types: {', '.join(stale)}; run {Path(__file__).name}")
            return 1
        print(f"{len(fresh)} generated modules match the .lcm definitions")
        return 0
    for name in set(current) - set(fresh):
        (TYPES_DIR / name).unlink()
    for name, text in fresh.items():
        (TYPES_DIR / name).write_text(text)
    print(f"wrote {len(fresh)} modules to {TYPES_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
