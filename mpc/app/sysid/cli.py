"""mpc-sysid: a model overlay identified from a robot's logged runs.

    mpc-sysid RUN_DIR... --out overlay.yaml [--report DIR] [--cutoff HZ] [--sensor-latency S]

The run directories are runs of the shipped identification configs (docs/sysid.md): at least
one gantry run (``<robot>_sysid_gantry``: the actuators and the delay) and optionally standing
or trotting runs (``<robot>_sysid_trot``: the trunk's mass and centre of mass). The overlay is
written to ``--out``, ready for ``robot: {name: ROBOT, overlay: FILE}`` in a config and for
``mpc-fake-robot --overlay``. The report (``--report``, default ``sysid/`` in the first gantry
run's directory) holds every parameter with its uncertainty and the fit's residual
(``report.md``, ``sysid.json``) and, where matplotlib is installed (``pip install
'legged-mpc[plot]'``), the logged joint trajectories against the ones simulated through the
logged commands on the nominal model (before) and on the identified one (after).

Bad input (a directory that is not a run, a run without the link log, runs of two robots, no
gantry run) gets one line naming it and exit code 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from mpc.app.errors import UserError
from mpc.app.sysid import report
from mpc.app.sysid.data import CUTOFF
from mpc.app.sysid.identify import SENSOR_LATENCY, identify


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="mpc-sysid", description=__doc__.splitlines()[0])
    p.add_argument("run_dirs", nargs="+", metavar="RUN_DIR")
    p.add_argument("--out", required=True, metavar="OVERLAY.yaml",
                   help="where to write the identified overlay")
    p.add_argument("--report", default=None, metavar="DIR",
                   help="report folder (default: sysid/ in the first gantry run)")
    p.add_argument("--cutoff", type=float, default=CUTOFF, metavar="HZ",
                   help=f"low-pass cutoff of the logged signals (default {CUTOFF:g} Hz)")
    p.add_argument("--sensor-latency", type=float, default=SENSOR_LATENCY, metavar="S",
                   help="the encoders' latency, taken out of the loop's delay (default "
                        f"{SENSOR_LATENCY:g} s)")
    args = p.parse_args(argv)
    if not 0.0 <= args.sensor_latency <= 0.05:
        print(f"mpc-sysid: --sensor-latency must be within 0..0.05 s, got "
              f"{args.sensor_latency:g}", file=sys.stderr)
        return 2
    tic = time.perf_counter()
    try:
        ident = identify(args.run_dirs, args.cutoff, args.sensor_latency)
    except UserError as e:
        print(f"mpc-sysid: {e}", file=sys.stderr)
        return 2
    seconds = time.perf_counter() - tic
    overlay = ident.overlay(args.out)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    runs = ", ".join(str(r.run_dir) for r in ident.gantry + ident.other)
    out.write_text(overlay.dump(f"Identified by mpc-sysid from {runs}\n(docs/sysid.md)"))
    folder = Path(args.report) if args.report else ident.gantry[0].run_dir / "sysid"
    folder.mkdir(parents=True, exist_ok=True)
    summary = report.summary(ident, seconds)
    (folder / "sysid.json").write_text(json.dumps(summary, indent=1, allow_nan=True) + "\n")
    plots = report.plots(ident, overlay, folder)
    (folder / "report.md").write_text(report.markdown(summary, plots))
    print(report.table(summary))
    print(f"overlay: {out}")
    print(f"report: {folder / 'report.md'}" + ("" if plots else
                                              " (no plots: pip install 'legged-mpc[plot]')"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
