"""The public entry point: run a configuration and get its summary.

    from mpc.app.run import run
    summary = run("configs/a1_trot.yaml", ["runtime.mode=lockstep"], out="runs/try")

``mpc-run`` and every script call :func:`run`; what a caller wants to watch (a dashboard, a
viewer, its own measurements) attaches as an :class:`~mpc.app.observers.observer_base.Observer`
built from the session. The run directory is always written, also when the run fails
(``error.log``), and it belongs to one run: :func:`claim_run_dir` never hands out a directory
that holds files.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import logging
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

from mpc.app.config import Config, load_config
from mpc.app.errors import UserError
from mpc.app.maps import MAP_SOURCES
from mpc.app.observers.observer_base import Observer
from mpc.app.plants import PLANTS
from mpc.app.plants.plant_base import Plant
from mpc.app.record.store import INCREMENTAL
from mpc.app.runtime import priority
from mpc.app.runtime.session import Session
from mpc.app.runtime.signals import InterruptGuard, held_signals

log = logging.getLogger(__name__)

#: Builds an observer once the session exists (it may need the plant, the task, the config).
ObserverFactory = Callable[[Session], Observer]


#: Run directories claimed by this process and not yet run in (see :func:`claim_run_dir`).
_CLAIMED: set[Path] = set()


def default_run_dir(cfg: Config) -> Path:
    """``<output.dir>/<time>_<config>_<backend>_<mode>`` (:func:`claim_run_dir` appends
    ``-2``, ``-3``, ... when another run has taken the name)."""
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path(cfg.output.dir) / (f"{stamp}_{Path(cfg.source).stem}_"
                                   f"{cfg.derivatives['backend']}_{cfg.runtime.mode}")


def claim_run_dir(cfg: Config, out: str | Path | None = None) -> Path:
    """The run directory of a new run, made for it alone; :func:`run` takes it as ``out``.

    ``out`` must not exist or be an empty directory: one that holds files (another run's)
    is refused with a :class:`UserError`, since the runs' files would mix. Without ``out``
    the directory is :func:`default_run_dir`, with ``-2``, ``-3``, ... appended until the
    name is free (two runs started in the same second). The claim is the exclusive creation
    of the directory's ``incremental/`` folder, so two processes claiming one directory at
    the same moment cannot both win."""
    if out is None:
        base = default_run_dir(cfg)
        for n in range(1, 10_000):
            path = base if n == 1 else base.with_name(f"{base.name}-{n}")
            try:
                path.mkdir(parents=True)
                (path / INCREMENTAL).mkdir()
            except FileExistsError:
                continue
            _CLAIMED.add(path.resolve())
            return path
        raise UserError(f"no free run directory name next to {base}")
    path = Path(out)
    taken = UserError(f"run directory {path} already holds files (another run's?): a run "
                      f"directory is never reused, name a new or empty one")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise UserError(f"run directory {path} is not a directory") from None
    except OSError as e:
        raise UserError(f"run directory {path}: {e.strerror}") from None
    if any(path.iterdir()):
        raise taken
    try:
        (path / INCREMENTAL).mkdir()
    except FileExistsError:
        raise taken from None
    _CLAIMED.add(path.resolve())
    return path


def run(config: Config | str, overrides: Sequence[str] = (), *, out: str | Path | None = None,
        observers: Sequence[ObserverFactory] = (), plant: Plant | None = None) -> dict:
    """Run ``config`` (a loaded :class:`Config`, or a path or shipped name with ``overrides``)
    in its ``runtime.mode`` for ``runtime.duration`` and return the summary (also written to
    ``summary.json`` in the run directory, whose path is ``summary["run_dir"]``). Ctrl-C
    ends the run early (``summary["interrupted"]``); before the run started (compiling,
    connecting, the startup ramp) it raises KeyboardInterrupt after the plant was closed and
    the run directory written (``"started": false``).

    ``out`` is a directory from :func:`claim_run_dir` or one to claim (a new or empty one);
    without it the run gets a new one named by :func:`default_run_dir`.

    ``plant`` replaces the plant the config describes. Bad input raises
    :class:`~mpc.app.errors.UserError` before anything runs; an error during the run is written to
    ``error.log`` in the run directory and raised after the run has been closed (a hardware
    plant then is in damping). Once the session is built, Ctrl-C ends the run as its end
    does (:mod:`mpc.app.runtime.signals`) and never interrupts its close.
    """
    cfg = config if isinstance(config, Config) else load_config(config, list(overrides))
    check_mode(cfg, plant)
    check_map_source(cfg, plant)
    if cfg.runtime.nice is not None:  # before any thread or the link's process starts
        priority.set_niceness(cfg.runtime.nice)
    if cfg.runtime.realtime_priority is not None and cfg.runtime.mode == "realtime":
        priority.check_realtime(cfg.runtime.realtime_priority, "runtime.realtime_priority")
    if out is not None and Path(out).resolve() in _CLAIMED:
        run_dir = Path(out)
    else:
        run_dir = claim_run_dir(cfg, out)
    _CLAIMED.discard(run_dir.resolve())
    try:
        session = Session(cfg, run_dir, plant=plant)
    except (ValueError, OSError) as e:  # a robot that does not answer, a bad address
        _unclaim(run_dir, f"{e}\n")
        raise UserError(str(e)) from None
    except UserError as e:
        _unclaim(run_dir, f"{e}\n")
        raise
    except KeyboardInterrupt:  # the session wrote the record of the interrupted start, if
        release_run_dir(run_dir)  # it had begun it
        raise
    except BaseException:  # a bug while building: its traceback, where the CLI says it is
        _unclaim(run_dir, traceback.format_exc())
        raise
    mode = cfg.runtime.mode
    guard = InterruptGuard(session)
    summary = None
    try:
        with guard:
            try:
                for make in observers:
                    session.attach(make(session))
                _loop(mode)(session, cfg.runtime.duration)
            except KeyboardInterrupt as e:  # while compiling: closed, summarized as well
                session.request_stop(e.args[0] if e.args else "SIGINT")
            except UserError as e:  # e.g. --viewer without a display: the user's, not a crash
                write_error(run_dir, f"{e}\n")
                raise
            except Exception:  # also a realtime thread's, re-raised by the loop here
                write_error(run_dir, traceback.format_exc())
                raise
            finally:
                guard.closing = True
                summary = _close(session, mode, run_dir)
    except KeyboardInterrupt as e:  # in an instant when the guard did not hold the signals
        if summary is None:
            session.request_stop(e.args[0] if e.args else "SIGINT")
            summary = _close(session, mode, run_dir)
    return summary


def _close(session: Session, mode: str, run_dir: Path) -> dict:
    """Close the session, signals only noted meanwhile; a failure goes to error.log and is
    raised."""
    if session.interrupted:
        log.warning("interrupted by %s", session.stop_requested or "the user")
    try:
        with held_signals("the run is closing and writing its record"):
            return session.close(mode)
    except Exception:
        write_error(run_dir, traceback.format_exc())
        raise


def release_run_dir(run_dir: Path) -> None:
    """Give back a run directory that no run wrote to (a start interrupted before the session
    began its record): removed if it holds nothing but its claim, else left as it is."""
    with contextlib.suppress(OSError):
        (run_dir / INCREMENTAL).rmdir()
    with contextlib.suppress(OSError):
        run_dir.rmdir()


def _unclaim(run_dir: Path, text: str) -> None:
    """A run that could not be built: its reason to error.log, and no empty record left."""
    write_error(run_dir, text)
    with contextlib.suppress(OSError):  # only if empty: a record that was begun stays
        (run_dir / INCREMENTAL).rmdir()


def check_mode(cfg: Config, plant: Plant | None = None) -> None:
    """Lockstep needs a plant that the run steps (a simulation, or a simulated robot stepped
    over LCM with ``plant.sync``): with a robot on its own clock the feedback law would run in
    the planner's thread, several updates back to back after each plan and none during an
    iteration. UserError (one line) before anything is built. ``plant`` replaces the config's
    (a script's simulated robot may stand in for a hardware config's)."""
    if cfg.runtime.mode != "lockstep":
        return
    if plant is not None:
        stepped, what = not plant.realtime_only, type(plant).__name__
    else:
        kind = cfg.plant.get("type", "sim")
        stepped, what = PLANTS.get(kind).steps_on_request(cfg.plant), f"plant.type {kind}"
    if not stepped:
        raise UserError(f"{cfg.source}: 'runtime.mode' lockstep needs a plant stepped by the "
                        f"run (a simulation, or plant.sync with an LCM simulation); {what} "
                        f"drives a robot on its own clock: use realtime")


def check_map_source(cfg: Config, plant: Plant | None = None) -> None:
    """A map source that maps the plant itself (``map_input.source.type: sim``) needs a
    simulated plant: UserError (one line) before anything is built. ``plant`` replaces the
    config's, as in :func:`check_mode`."""
    if not cfg.map_input.source:
        return
    plant_cls = type(plant) if plant is not None else PLANTS.get(cfg.plant.get("type", "sim"))
    try:
        MAP_SOURCES.get(cfg.map_input.source["type"]).check_plant(plant_cls)
    except ValueError as e:
        raise UserError(f"{cfg.source}: {e}") from None


def write_error(run_dir: Path, text: str) -> None:
    """Append ``text`` to ``run_dir/error.log`` (created with its folder when the run failed
    before the recorder made it): a failed run leaves its reason where its results would be."""
    run_dir.mkdir(parents=True, exist_ok=True)
    with open(run_dir / "error.log", "a") as f:
        f.write(text)


def _loop(mode: str) -> Callable[[Session, float], None]:
    if mode == "lockstep":
        from mpc.app.runtime.lockstep import run_lockstep

        return run_lockstep
    from mpc.app.runtime.realtime import run_realtime

    def run_in_realtime(session: Session, duration: float) -> None:
        session.plan(session.plant.read_state())  # JIT-compile before the clock starts
        run_realtime(session, duration)  # which plans again from now (Session.warm_up)

    return run_in_realtime
