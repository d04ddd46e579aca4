"""Compare two campaigns' results case by case: are the same runs identical?

    python scripts/compare_campaigns.py bench_results/camp_ray bench_results/camp_serial

Each argument is a campaign's output folder (``--out`` of ``eval_terrain.py``; its results are
under ``cases/``) or the ``cases`` folder itself. Cases are matched by their key (the hash of
the case, :func:`mpc.app.campaign.case_key`); a pair is identical when the stored results are
equal as JSON (a lockstep run's result holds no wall-clock figure, so runs of the same case on
Ray and in one process must agree to the last digit). Prints the counts and, per differing
case, the fields that differ; exit code 0 when every case of either side is in the other and
identical, 1 otherwise, 2 for a folder with no results.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def results(folder: Path) -> dict[str, dict]:
    """Key -> stored record (``case`` and ``result``) of every finished case under ``folder``."""
    cases = folder / "cases" if (folder / "cases").is_dir() else folder
    return {p.stem: json.loads(p.read_text()) for p in sorted(cases.glob("*.json"))}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("a", type=Path)
    p.add_argument("b", type=Path)
    args = p.parse_args(argv)
    a, b = results(args.a), results(args.b)
    for name, side in (("a", a), ("b", b)):
        if not side:
            print(f"compare_campaigns: error: {getattr(args, name)}: no results "
                  "(<key>.json) there", file=sys.stderr)
            return 2
    common = sorted(a.keys() & b.keys())
    differ = {k: sorted(f for f in a[k]["result"].keys() | b[k]["result"].keys()
                        if a[k]["result"].get(f) != b[k]["result"].get(f))
              for k in common if a[k]["result"] != b[k]["result"]}
    only_a, only_b = sorted(a.keys() - b.keys()), sorted(b.keys() - a.keys())
    print(f"{len(common)} cases in both: {len(common) - len(differ)} identical, "
          f"{len(differ)} differ; {len(only_a)} only in {args.a}, {len(only_b)} only in {args.b}")
    for key, fields in differ.items():
        case = a[key]["case"]
        print(f"  {case.get('config')} {case.get('terrain')} seed {case.get('seed')}: "
              f"{', '.join(fields)}")
    return 0 if not differ and not only_a and not only_b else 1


if __name__ == "__main__":
    sys.exit(main())
