"""Memory of a long ``mpc-run``: its resident set size (RSS) sampled over the run.

    python scripts/measure_run_memory.py configs/a1_trot.yaml --duration 1800 --nice 10 \
        --set task.gait=stand --out bench_results/memory

Starts ``mpc-run CONFIG --mode realtime --duration SECONDS --quiet`` as a child process (at
``--nice``; the modules it runs are those on PYTHONPATH, so the same script measures another
checkout with ``PYTHONPATH=<checkout>``), reads the RSS of that process and of its children
(a hardware plant's link process) from /proc every ``--every`` seconds, with the machine's
1-minute load average, and writes them to ``rss.csv`` in ``--out``. At the end it prints the
RSS at the ``--marks`` (minutes; the first sample at or after each mark), the growth per
minute from the second mark to the end (least squares), and the run's own rates from its
summary.json (a loaded machine plans slower: fewer samples, less to record).

Linux only (/proc).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes(pid: int) -> int:
    """Resident set size of ``pid`` (bytes), 0 if it has ended."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * PAGE
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return 0


def children(pid: int) -> list[int]:
    """Direct children of ``pid`` (all its threads')."""
    out: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out += [int(c) for c in f.read().split()]
    except (FileNotFoundError, ProcessLookupError):
        pass
    return out


def measure(cmd: list[str], nice: int, every: float, csv_path: Path) -> tuple[int, list[dict]]:
    """Run ``cmd`` and sample it until it ends; returns its exit code and the samples."""
    proc = subprocess.Popen(cmd, preexec_fn=lambda: os.nice(nice), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    start = time.monotonic()
    rows: list[dict] = []
    with open(csv_path, "w", newline="") as f:
        writer = csv.DictWriter(f, ["elapsed_s", "rss_mb", "children_rss_mb", "load1"])
        writer.writeheader()
        while proc.poll() is None:
            kids = sum(rss_bytes(c) for c in children(proc.pid))
            row = {"elapsed_s": round(time.monotonic() - start, 1),
                   "rss_mb": round(rss_bytes(proc.pid) / 2**20, 1),
                   "children_rss_mb": round(kids / 2**20, 1),
                   "load1": os.getloadavg()[0]}
            if row["rss_mb"] > 0:
                rows.append(row)
                writer.writerow(row)
                f.flush()
            time.sleep(every)
    output = proc.stdout.read()
    sys.stdout.write(output[-2000:])
    return proc.returncode, rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("config", nargs="?", default="configs/a1_trot.yaml")
    p.add_argument("--duration", type=float, default=1800.0, help="run length (s)")
    p.add_argument("--every", type=float, default=10.0, help="sampling period (s)")
    p.add_argument("--marks", type=float, nargs="+", default=[1, 5, 10, 20, 30],
                   help="minutes at which to report the RSS")
    p.add_argument("--nice", type=int, default=10)
    p.add_argument("--out", type=Path, default=Path("bench_results/memory"))
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a config override for mpc-run (repeatable)")
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    run_dir = args.out / time.strftime("run_%Y%m%d-%H%M%S")
    cmd = [sys.executable, "-m", "mpc.app.cli", args.config, "--mode", "realtime", "--duration",
           repr(args.duration), "--quiet", "--out", str(run_dir)]
    cmd += [a for kv in args.set for a in ("--set", kv)]
    print("command:", " ".join(cmd), f"(nice {args.nice})", flush=True)
    code, rows = measure(cmd, args.nice, args.every, args.out / "rss.csv")
    if not rows:
        print("no samples: the run ended at once", file=sys.stderr)
        return 1
    t = np.array([r["elapsed_s"] for r in rows]) / 60.0
    rss = np.array([r["rss_mb"] + r["children_rss_mb"] for r in rows])
    print("\nminute  RSS (MB, with children)  load (1 min)")
    for mark in args.marks:
        i = int(np.searchsorted(t, mark))
        if i < len(t):
            print(f"{mark:6g}  {rss[i]:10.1f}  (at {t[i]:.2f} min)  {rows[i]['load1']:.2f}")
    late = t >= args.marks[min(1, len(args.marks) - 1)]
    if late.sum() >= 2:
        slope = np.polyfit(t[late], rss[late], 1)[0]
        print(f"growth from minute {args.marks[min(1, len(args.marks) - 1)]:g} to the end: "
              f"{slope:.3f} MB/min; peak {rss.max():.1f} MB")
    print(f"load average over the run: {np.mean([r['load1'] for r in rows]):.2f} "
          f"on {os.cpu_count()} cores")
    summary = run_dir / "summary.json"
    if summary.is_file():
        s = json.loads(summary.read_text())
        print(f"run: {s['sim_time_s']} s simulated in {s['loop_wall_time_s']} s, planning "
              f"{s['planning_rate_hz']} Hz, feedback {s['feedback_rate_hz']} Hz, fell "
              f"{s['fell']}, exit code {code}")
    return code


if __name__ == "__main__":
    sys.exit(main())
