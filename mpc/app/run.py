"""The public entry point: run a configuration and get its summary.

    from mpc.app.run import run
    summary = run("configs/a1_trot.yaml", ["runtime.mode=lockstep"], out="runs/try")

``mpc-run`` and every script call :func:`run`; what a caller wants to watch (a dashboard, a
viewer, its own measurements) attaches as an :class:`~mpc.app.observers.observer_base.Observer`
built from the session. The run directory is always written, also when the run fails
(``error.log``).
"""

from __future__ import annotations

import datetime as _dt
import logging
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

from mpc.app.config import Config, load_config
from mpc.app.errors import UserError
from mpc.app.observers.observer_base import Observer
from mpc.app.plants import PLANTS
from mpc.app.plants.plant_base import Plant
from mpc.app.runtime.session import Session
from mpc.app.runtime.signals import held_signals

log = logging.getLogger(__name__)

#: Builds an observer once the session exists (it may need the plant, the task, the config).
ObserverFactory = Callable[[Session], Observer]


def default_run_dir(cfg: Config) -> Path:
    """``<output.dir>/<time>_<config>_<backend>_<mode>``."""
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path(cfg.output.dir) / (f"{stamp}_{Path(cfg.source).stem}_"
                                   f"{cfg.derivatives['backend']}_{cfg.runtime.mode}")


def run(config: Config | str, overrides: Sequence[str] = (), *, out: str | Path | None = None,
        observers: Sequence[ObserverFactory] = (), plant: Plant | None = None) -> dict:
    """Run ``config`` (a loaded :class:`Config`, or a path or shipped name with ``overrides``)
    in its ``runtime.mode`` for ``runtime.duration`` and return the summary (also written to
    ``summary.json`` in the run directory, whose path is ``summary["run_dir"]``). Ctrl-C
    ends the run early (``summary["interrupted"]``); before the run started (compiling,
    connecting, the startup ramp) it raises KeyboardInterrupt after the plant was closed and
    the run directory written (``"started": false``).

    ``plant`` replaces the plant the config describes. Bad input raises
    :class:`~mpc.app.errors.UserError` before anything runs; an error during the run is written to
    ``error.log`` in the run directory and raised after the run has been closed (a hardware
    plant then is in damping).
    """
    cfg = config if isinstance(config, Config) else load_config(config, list(overrides))
    check_mode(cfg, plant)
    run_dir = Path(out) if out is not None else default_run_dir(cfg)
    mode = cfg.runtime.mode
    try:
        session = Session(cfg, run_dir, plant=plant)
    except (ValueError, OSError) as e:  # a robot that does not answer, a bad address
        write_error(run_dir, f"{e}\n")
        raise UserError(str(e)) from None
    except UserError as e:
        write_error(run_dir, f"{e}\n")
        raise
    except KeyboardInterrupt:  # the session wrote the record of the interrupted start
        raise
    except BaseException:  # a bug while building: its traceback, where the CLI says it is
        write_error(run_dir, traceback.format_exc())
        raise
    try:
        for make in observers:
            session.attach(make(session))
        _loop(mode)(session, cfg.runtime.duration)
    except KeyboardInterrupt as e:  # Ctrl-C ends the run like its end: closed, summarized
        log.warning("interrupted by %s", e.args[0] if e.args else "the user")
        session.interrupted = True
    except UserError as e:  # e.g. --viewer without a display: the user's to fix, not a crash
        write_error(run_dir, f"{e}\n")
        raise
    except Exception:  # also a realtime thread's, re-raised by the loop in this thread
        write_error(run_dir, traceback.format_exc())
        raise
    finally:
        try:
            with held_signals():  # a further signal must not cut the close short
                summary = session.close(mode)
        except Exception:
            write_error(run_dir, traceback.format_exc())
            raise
    return summary


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
        if session.plant.realtime_only:  # a robot's clock ran on meanwhile: plan from now
            session.plan(session.plant.read_state())
        run_realtime(session, duration)

    return run_in_realtime
