"""The run directory: resolved config, time series (.npz), events log and summary.json."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import numpy as np
import yaml

from mpc.app.observers.observer_base import Observer, PlanReport, StateReport
from mpc.app.record.atomic import write_atomic
from mpc.app.record.signal_safe import SignalSafeHandler
from mpc.app.record.store import INCREMENTAL, RecordWriter, write_npz
from mpc.app.record.store import remove as remove_record
from mpc.planner.planner_base import PHASES
from mpc.tasks.task_base import body_velocity


class RunRecorder(Observer):
    """Records the run: its samples on disk while it runs, the public files when it closes.

    Besides the fixed series, the optional fields of the reports (planned contacts, actuator
    forces, the goal, ...) are recorded when present; a session gives each one at every
    report or never, so every series stays one array. The planned base and foot paths (every
    other knot of the nominal, float32) are read at ``path_sensors`` (base first, then the
    feet) of each iteration's nominal sensordata. Warnings and errors logged during the run
    (damping, falls, discarded iterations) are kept with the simulated time of the latest
    recorded state: the log's own timestamps are wall-clock, which a lockstep run does not
    follow.

    Nothing of the run is kept in memory beyond a second of samples: they go to the run
    directory's incremental record (:mod:`mpc.app.record.store`) once a second, which readers fall
    back to when a run was killed before it closed. :meth:`close` writes summary.json and
    timeseries.npz from it, each atomically, then removes it. ``config.yaml`` is written
    (atomically) here; ``events.log`` takes every log line of level INFO and above at once.
    The run directory must not hold an incremental record already (another run's).
    """

    def __init__(self, run_dir: Path, config: dict, term_names: list[str],
                 path_sensors: list[slice] | None = None):
        self.dir = Path(run_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.store = RecordWriter(self.dir / INCREMENTAL, {"term_names": list(term_names),
                                                           "phase_names": list(PHASES)})
        write_atomic(self.dir / "config.yaml", yaml.safe_dump(config, sort_keys=False))
        self.term_names = term_names
        self.path_sensors = path_sensors or []
        #: Simulated time of the latest recorded state, stamped on logged events.
        self.now = float("nan")
        events = _EventLog(self.dir / "events.log", self)
        events.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: "
                                              "%(message)s"))
        # the e-stop logs from a signal handler, which may interrupt a line being written
        self._handler = SignalSafeHandler(events)
        logging.getLogger().addHandler(self._handler)
        logging.getLogger().setLevel(logging.INFO)

    def on_state(self, report: StateReport) -> None:
        row = {"time": float(report.time), "qpos": np.array(report.qpos),
               "qvel": np.array(report.qvel), "ctrl": np.array(report.ctrl),
               "contacts": np.array(report.contacts, dtype=bool)}
        _put(row, "wall_time", None if report.wall_time is None else float(report.wall_time))
        _put(row, "feedback_steps", None if report.feedback_steps is None
             else int(report.feedback_steps))
        _put(row, "planned_contacts", None if report.planned_contacts is None
             else np.array(report.planned_contacts, dtype=bool))
        _put(row, "actuator_force", None if report.actuator_force is None
             else np.array(report.actuator_force))
        if report.command is not None:
            row["command"] = np.array(report.command)
            row["velocity"] = body_velocity(report.qpos, report.qvel)
        self.store.add("state", row)  # one append: a sample is recorded whole or not at all
        self.now = report.time

    def on_plan(self, report: PlanReport) -> None:
        stats = report.stats
        terms = stats.term_costs if len(stats.term_costs) else np.full(len(self.term_names),
                                                                        np.nan)
        row = {"time": float(stats.time), "ok": stats.status == "ok",
               "cost": float(stats.cost), "stage_cost": float(stats.stage_cost),
               "term_costs": np.array(terms, dtype=float),
               "timings": np.array([stats.timings.get(k, np.nan) for k in PHASES], dtype=float),
               "mu": float(stats.mu), "alpha": float(stats.alpha),
               "simulations": int(stats.simulations), "wall_time": float(report.wall_time)}
        _put(row, "goal", None if report.goal is None else np.array(report.goal)[:2])
        if self.path_sensors and report.nominal is not None:
            data = report.nominal.sensordata[::2]
            base, *feet = (data[:, sl] for sl in self.path_sensors)
            row["base_path"] = base.astype(np.float32)
            row["foot_paths"] = np.stack(feet).astype(np.float32)
        self.store.add("plan", row)

    def event(self, level: str, message: str) -> None:
        """A warning or error, at the time of the latest recorded state."""
        self.store.event(self.now, level, message)

    def abandon(self) -> None:
        """The run was never started (its session failed while being built): stop writing
        and logging to the run directory, leaving what is there."""
        try:
            self.store.close()
        finally:
            logging.getLogger().removeHandler(self._handler)
            self._handler.close()

    def close(self, summary: dict) -> None:
        """Write summary.json and timeseries.npz (each atomically; the second from the
        incremental record, which is then removed). Each is tried whatever happened to the
        other; the first failure is raised after both, and the incremental record then
        stays for the readers."""
        failures: list[BaseException] = []
        try:
            try:
                self.store.close()
            except Exception as e:
                failures.append(e)
            try:
                write_atomic(self.dir / "summary.json", strict_json(summary, indent=2) + "\n")
            except Exception as e:
                failures.append(e)
            try:
                write_npz(self.store.folder, self.dir / "timeseries.npz")
            except Exception as e:
                failures.append(e)
            else:
                remove_record(self.store.folder)
        finally:
            logging.getLogger().removeHandler(self._handler)
            self._handler.close()
        if failures:
            raise failures[0]


def _put(row: dict, key: str, value) -> None:
    """Put the optional series ``key`` in ``row``, unless ``value`` is None."""
    if value is not None:
        row[key] = value


class _EventLog(logging.FileHandler):
    """Writes events.log and hands every warning and error to the recorder as well."""

    def __init__(self, path: Path, recorder: RunRecorder):
        super().__init__(path)
        self.recorder = recorder

    def emit(self, record: logging.LogRecord) -> None:
        super().emit(record)
        if record.levelno >= logging.WARNING:
            self.recorder.event(record.levelname, record.getMessage())


def strict_json(value, **dumps_options) -> str:
    """``value`` as strict JSON (RFC 8259), for summary.json and mpc-run's last line.

    Python's json writes NaN and infinities as the tokens ``NaN``/``Infinity``, which are not
    JSON and which most readers (jq, JavaScript, Go) reject: here they become ``null``, what
    the summary means by "not measured". numpy scalars and arrays become numbers and lists;
    ``allow_nan=False`` turns anything missed into an error here rather than in a reader.
    """
    return json.dumps(_jsonable(value), allow_nan=False, **dumps_options)


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
