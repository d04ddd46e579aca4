"""``mpc-plot RUN_DIR [RUN_DIR ...]``: the figures of runs as PNGs and one HTML report.

Several run directories are overlaid in the same figures (backend against backend, sim against
loopback). Bad input (a missing directory, one that is not a run directory, an unreadable
time series) and a missing matplotlib get one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mpc.app.record.reader import RunDirError, load_run

HINT = "mpc-plot needs matplotlib: pip install 'legged-mpc[plot]'"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="mpc-plot", description=__doc__.splitlines()[0])
    p.add_argument("run_dirs", nargs="+", metavar="RUN_DIR")
    p.add_argument("--out", default=None,
                   help="output folder (default: RUN_DIR/plots for one run, ./plots for "
                        "several)")
    args = p.parse_args(argv)
    try:
        from mpc.app.plots import figures, report
    except ImportError:
        print(HINT, file=sys.stderr)
        return 2
    try:
        runs = [load_run(d) for d in args.run_dirs]
    except RunDirError as e:
        print(f"mpc-plot: {e}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else (runs[0].dir / "plots" if len(runs) == 1
                                           else Path("plots"))
    out.mkdir(parents=True, exist_ok=True)
    built = figures.build_figures(runs)
    for name, fig in built.items():
        print(figures.save_png(fig, out / f"{name}.png"))
    page = out / "report.html"
    page.write_text(report.render(runs, built))
    print(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
