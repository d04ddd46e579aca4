"""``mpc-run``: run a configuration in simulation or on a robot.

    mpc-run CONFIG [--backend NAME] [--mode lockstep|realtime] [--duration SECONDS] [--seed N]
                   [--out DIR] [--set KEY=VALUE ...] [--viewer] [--quiet]
    mpc-run --list

Bad input (config, options, environment) prints one line and exits with code 2. SIGINT
(Ctrl-C) or SIGTERM at any moment ends the run, a robot in damping, and exits with code 130.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from mpc.app.errors import UserError

if TYPE_CHECKING:
    from mpc.app.config import Config

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        self.exit(EXIT_USAGE, f"mpc-run: error: {message} (see mpc-run --help)\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="mpc-run", description="Whole-body iLQR MPC for Unitree legged robots.")
    p.add_argument("config", nargs="?", help="YAML config file or shipped config name")
    p.add_argument("--list", action="store_true", help="list the shipped configs and exit")
    p.add_argument("--backend", help="derivative backend (fd, wasp, analytic)")
    p.add_argument("--mode", choices=("lockstep", "realtime"), help="runtime mode")
    p.add_argument("--duration", type=float, metavar="SECONDS", help="run length in seconds")
    p.add_argument("--seed", type=int, metavar="N", help="random seed")
    p.add_argument("--out", metavar="DIR",
                   help="run directory, new or empty (default runs/<time>_<config>_...)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config key, e.g. --set task.gait=stand (repeatable)")
    p.add_argument("--viewer", action="store_true", help="open the MuJoCo viewer")
    p.add_argument("--quiet", action="store_true", help="no live dashboard")
    p.add_argument("--dry-run", action="store_true",
                   help="compute and log everything, send no motion command to the robot")
    return p


def _overrides(args: argparse.Namespace) -> list[str]:
    out = list(args.set)
    if args.backend is not None:
        out.append(f"derivatives.backend={args.backend}")
    if args.mode is not None:
        out.append(f"runtime.mode={args.mode}")
    if args.duration is not None:
        out.append(f"runtime.duration={args.duration!r}")
    if args.seed is not None:
        out.append(f"runtime.seed={args.seed}")
    if args.dry_run:
        out.append("safety.dry_run=true")
    return out


def _list_configs() -> int:
    from mpc.app.config import shipped_configs

    rows = shipped_configs()
    width = max((len(n) for n, _ in rows), default=0)
    for name, desc in rows:
        print(f"{name:<{width}}  {desc}")
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    restore = _stop_on_signals()
    try:
        try:
            code = _main(argv)
        except ImportError as e:  # a signal while an extension module initializes (mujoco)
            interrupt = _interrupt_in(e)
            if interrupt is None:
                raise
            raise interrupt from None
    except KeyboardInterrupt as e:  # importing, compiling, connecting, the startup ramp
        by = f" by {e.args[0]}" if e.args else ""
        print(f"mpc-run: interrupted{by} before the run started", file=sys.stderr)
        code = EXIT_INTERRUPTED
    finally:
        if argv is None:  # mpc-run itself: its run is over, a signal now changes nothing
            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, signal.SIG_IGN)
        else:  # a caller in this process (tests) keeps its handlers
            restore()
    if argv is None:
        _end_process(code)
    return code


def _interrupt_in(error: BaseException) -> KeyboardInterrupt | None:
    """The KeyboardInterrupt that caused ``error``, if one did: an extension module whose
    initialization a signal interrupted fails with ImportError ("initialization failed")
    caused by it."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _end_process(code: int) -> NoReturn:
    """End mpc-run, its run closed and recorded: the exit handlers run (logging flushed,
    multiprocessing's cleanup) and the output is flushed, but threads still computing are not
    waited for (a worker compiling a kernel for a plan that will never be made: over 100 s on a
    first run interrupted while compiling), nor the interpreter's teardown (0.6-2 s collecting
    what numba, LLVM and MuJoCo made, here). The exit status is ``code`` whatever happened
    before (CPython would exit by SIGINT after a KeyboardInterrupt that passed through code
    run by exec(), as numba's generated code is, even when it was caught)."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def _main(argv: list[str] | None) -> int:
    args = _parser().parse_args(argv)
    if not args.viewer:
        # Nothing is drawn: MuJoCo then skips loading GLFW, whose import probes each library
        # in a Python subprocess (a Ctrl-C at that moment printed that subprocess's traceback).
        # The link process inherits it.
        os.environ.setdefault("MUJOCO_GL", "disable")
    if args.list:
        return _list_configs()
    if not args.config:
        _parser().error("a CONFIG file is required (or --list)")
    try:
        return _run(args)
    except UserError as e:
        print(f"mpc-run: error: {e}", file=sys.stderr)
        return EXIT_USAGE


def _stop_on_signals() -> Callable[[], None]:
    """From the first line on, SIGTERM ends mpc-run as Ctrl-C (SIGINT) does: a
    KeyboardInterrupt naming the signal, whatever the run is doing, which closes what was
    built (a robot link damps) and writes the run's record. A signal that whoever started
    mpc-run ignores (a shell's background job ignores SIGINT) stays ignored. Returns what
    puts the previous handlers back (main called in-process, by tests)."""
    def interrupt(signum: int, _frame) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    for sig, handler in previous.items():
        if handler is not signal.SIG_IGN:
            signal.signal(sig, interrupt)

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    return restore


def _run(args: argparse.Namespace) -> int:
    from mpc.app.config import load_config
    from mpc.app.record.signal_safe import SignalSafeHandler
    from mpc.app.run import claim_run_dir, release_run_dir, run

    # before the config is read: its warnings (costly but legal values) print as one line each
    root = logging.getLogger()
    if not root.handlers:  # mpc-run's own stderr line handler; a host's (pytest's) left alone
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        # the e-stop logs from a signal handler: see SignalSafeHandler
        root.addHandler(SignalSafeHandler(handler))
        root.setLevel(logging.WARNING)
    cfg = load_config(args.config, _overrides(args))
    if cfg.command.source.get("type") == "keyboard" and not args.viewer:
        raise UserError("command.source.type keyboard needs --viewer (its keys drive the robot)")
    run_dir = claim_run_dir(cfg, args.out)  # a directory of its own: one line if it is taken
    try:
        return _run_in(args, cfg, run_dir, run)
    except KeyboardInterrupt:  # before the run began its record: no empty directory left
        release_run_dir(run_dir)
        raise


def _run_in(args: argparse.Namespace, cfg: Config, run_dir: Path,
            run: Callable[..., dict]) -> int:
    """:func:`_run` once the run directory is claimed."""
    from rich.console import Console

    from mpc.app.record.recorder import strict_json

    console = Console(stderr=False)
    _route_mujoco_warnings()
    if not args.quiet and not _kernels_cached():
        console.print("[dim]First run: compiling the planner's numba kernels (a minute or two; "
                      "cached for later runs)...[/]")
    observers = []
    if args.viewer:
        from mpc.app.view.viewer import open_viewer

        observers.append(open_viewer)
    if not args.quiet and console.is_terminal:
        from mpc.app.observers.dashboard import Dashboard

        observers.append(lambda session: Dashboard(session.cfg, list(session.robot.feet),
                                                   console))
    try:
        summary = run(cfg, out=run_dir, observers=observers)
    except UserError:
        raise
    except Exception:
        print(f"mpc-run: internal error, traceback in {Path(run_dir) / 'error.log'}",
              file=sys.stderr)
        return EXIT_FAILED
    status = EXIT_INTERRUPTED if summary["interrupted"] else EXIT_OK
    stopped = summary["trip_reason"]
    if stopped is not None and status == EXIT_OK:
        print(f"mpc-run: the robot was put in damping: {stopped}", file=sys.stderr)
        status = EXIT_FAILED
    if not args.quiet:
        from mpc.app.observers.dashboard import summary_table

        console.print(summary_table(summary))
    console.print(f"run directory: {summary['run_dir']}")
    print(strict_json({k: summary[k] for k in ("fell", "goal_distance_end_m",
                                               "planning_rate_hz", "iteration_ms_median")}))
    return status


def _kernels_cached() -> bool:
    """Whether numba has cached the rollout kernel (the first to compile) on disk."""
    import glob
    import os

    from mpc.planner.kernels import rollout

    # next to the module, or mirrored below NUMBA_CACHE_DIR
    folder = os.environ.get("NUMBA_CACHE_DIR") or os.path.dirname(rollout.__file__)
    return bool(glob.glob(os.path.join(folder, "**", "rollout.rollout-*.nbi"), recursive=True))


def _route_mujoco_warnings() -> None:
    """MuJoCo's warnings go to the run's events log (and stderr) instead of MUJOCO_LOG.TXT.

    Planner rollouts that diverge raise warnings too; MuJoCo prints each kind once per MjData.
    """
    import mujoco

    log = logging.getLogger("mujoco")
    mujoco.set_mju_user_warning(lambda message: log.warning(message.strip()))



if __name__ == "__main__":
    sys.exit(main())
