"""Planner iteration time per phase, for planner/backend variants and code versions, side by side.

Runs each variant in lockstep (deterministic simulated time, real planner work), each run in its
own process, interleaving repetitions so machine noise hits every variant alike, and reports
per config the median milliseconds per phase, the ratio of the median iteration to the first
variant's, and the closed-loop outcome. A variant ``NAME@REV:...`` runs the code of git
revision REV (checked out once as a worktree under the system's temporary directory, with its
own configs and numba cache), so a change is measured against the commit it started from in
the same run; each repetition starts at the next variant, so none always runs first. Example:

    python scripts/bench_planner.py configs/a1_trot.yaml configs/go1_trot.yaml \\
        --variant "before@main:" --variant "now:" --duration 3 --repeats 3

Writes a Markdown table (and CSV) to --out.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from report import write_tables

from mpc.planner.planner_base import PHASES

ROOT = Path(__file__).resolve().parents[1]

#: One lockstep run in a fresh interpreter (argv: JSON [config, duration, overrides, out]), in the
#: revision's root; uses only the public ``run`` (``mpc.app.run`` since the library/application
#: split, ``mpc.run`` before), so it works on any revision of the code. The module is chosen by
#: the file the revision has, not by trying one import after the other: an editable install of
#: another checkout would answer for ``mpc.app`` where the revision has none.
CHILD = """
import importlib, json, sys, tempfile
from pathlib import Path
import numpy as np
new = (Path.cwd() / "mpc" / "app" / "run.py").exists()
run = importlib.import_module("mpc.app.run" if new else "mpc.run").run
config, duration, overrides, out = json.loads(sys.argv[1])
with tempfile.TemporaryDirectory() as tmp:
    summary = run(config, ["runtime.mode=lockstep", f"runtime.duration={duration}",
                           *overrides], out=tmp)
    timings = np.load(Path(tmp) / "timeseries.npz")["plan_timings"][1:]  # skip JIT warm-up
np.savez(out, timings=timings, summary=json.dumps(summary, default=str))
"""


def parse_variant(text: str) -> tuple[str, str | None, list[str]]:
    """``NAME[@REV]:KEY=VALUE,...`` -> (name, revision or None, overrides)."""
    head, _, rest = text.partition(":")
    name, _, rev = head.partition("@")
    return name, rev or None, [kv for kv in rest.split(",") if kv]


def checkout(rev: str) -> Path:
    """A worktree of ``rev`` (reused if it is already there at that commit)."""
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", rev], check=True,
                            capture_output=True, text=True).stdout.strip()
    path = Path(tempfile.gettempdir()) / f"bench_planner_{commit[:12]}"
    if not path.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path),
                        commit], check=True, capture_output=True)
    return path


def run_once(root: Path, config: str, overrides: list[str], duration: float) -> dict:
    """Lockstep run of ``config`` (relative to ``root``) on the code under ``root``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.npz"
        env = {**os.environ, "PYTHONPATH": str(root)}
        subprocess.run([sys.executable, "-c", CHILD,
                        json.dumps([config, duration, overrides, str(out)])],
                       cwd=root, env=env, check=True)
        r = np.load(out)
        return {"timings": r["timings"], "summary": json.loads(str(r["summary"]))}


def rotated(variants: list, rep: int) -> list:
    """The variants in the order repetition ``rep`` runs them: each repetition starts at the
    next one (on a loaded machine the first run of a repetition was the slower one, whichever
    variant it was)."""
    k = rep % len(variants)
    return variants[k:] + variants[:k]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("configs", nargs="+", help="configs, relative to the repository root")
    p.add_argument("--variant", action="append", required=True,
                   help="NAME[@REV]:KEY=VALUE,KEY=VALUE (config overrides; REV: git revision)")
    p.add_argument("--duration", type=float, default=3.0)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--out", default="bench_results/planner")
    args = p.parse_args()
    variants = [parse_variant(v) for v in args.variant]
    roots = {rev: checkout(rev) for _, rev, _ in variants if rev}
    timings: dict[tuple[str, str], list] = {}
    outcomes: dict[tuple[str, str], list] = {}
    for rep in range(args.repeats):
        for config in args.configs:
            for name, rev, overrides in rotated(variants, rep):
                root = roots[rev] if rev else ROOT
                r = run_once(root, config, overrides, args.duration)
                timings.setdefault((config, name), []).append(r["timings"])
                outcomes.setdefault((config, name), []).append(r["summary"])
                print(f"rep {rep} {config} {name}: fell={r['summary']['fell']} "
                      f"goal {r['summary']['goal_distance_end_m']:.3f} m", flush=True)
    rows = []
    for config in args.configs:
        first = None
        for name, _, _ in variants:
            t = np.concatenate(timings[(config, name)])
            ok = ~np.isnan(t).any(axis=1)
            med = np.median(t[ok], axis=0)
            first = med[-1] if first is None else first
            s = outcomes[(config, name)]
            rows.append({"config": Path(config).stem, "variant": name,
                         **{f"{k}_ms": round(float(v), 2) for k, v in
                            zip(PHASES, med, strict=True)},
                         "p95_ms": round(float(np.percentile(t[ok, -1], 95)), 2),
                         "ratio": round(float(med[-1] / first), 2),
                         "iterations": int(ok.sum()),
                         "falls": sum(bool(x["fell"]) for x in s),
                         "goal_end_m": round(float(np.median([x["goal_distance_end_m"]
                                                              for x in s])), 3)})
    meta = {"configs": args.configs, "duration_s": args.duration, "repeats": args.repeats,
            "variants": {n: [rev, o] for n, rev, o in variants}, "cpus": os.cpu_count(),
            "loadavg": os.getloadavg()}
    print(write_tables(rows, Path(args.out), "planner", json.dumps(meta)))
    print(json.dumps(meta))


if __name__ == "__main__":
    main()
