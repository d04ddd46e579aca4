"""The run directory: resolved config, time series (.npz), events log and summary.json."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import numpy as np
import yaml

from mpc.app.observers.observer_base import Observer, PlanReport, StateReport
from mpc.planner.planner_base import PHASES
from mpc.tasks.task_base import body_velocity


class RunRecorder(Observer):
    """Collects samples during a run and writes them at the end.

    Besides the fixed series, the optional fields of the reports (planned contacts, actuator
    forces, the goal, ...) are recorded when present; a session gives each one at every
    report or never, so every series stays one array. The planned base and foot paths (every
    other knot of the nominal, float32) are read at ``path_sensors`` (base first, then the
    feet) of each iteration's nominal sensordata. Warnings and errors logged during the run
    (damping, falls, discarded iterations) are kept with the simulated time of the latest
    recorded state: the log's own timestamps are wall-clock, which a lockstep run does not
    follow.
    """

    def __init__(self, run_dir: Path, config: dict, term_names: list[str],
                 path_sensors: list[slice] | None = None):
        self.dir = Path(run_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        self.term_names = term_names
        self.states: dict[str, list] = {k: [] for k in ("time", "qpos", "qvel", "ctrl",
                                                          "contacts")}
        self.plans: dict[str, list] = {k: [] for k in (
            "time", "ok", "cost", "stage_cost", "term_costs", "timings", "mu", "alpha",
            "simulations", "wall_time")}
        self.path_sensors = path_sensors or []
        self.events: dict[str, list] = {"time": [], "level": [], "message": []}
        #: Simulated time of the latest recorded state, stamped on logged events.
        self.now = float("nan")
        self._handler = _EventLog(self.dir / "events.log", self)
        self._handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: "
                                                     "%(message)s"))
        logging.getLogger().addHandler(self._handler)
        logging.getLogger().setLevel(logging.INFO)

    def on_state(self, report: StateReport) -> None:
        s = self.states
        s["time"].append(report.time)
        s["qpos"].append(np.array(report.qpos))
        s["qvel"].append(np.array(report.qvel))
        s["ctrl"].append(np.array(report.ctrl))
        s["contacts"].append(np.array(report.contacts, dtype=bool))
        _append(s, "wall_time", report.wall_time)
        _append(s, "feedback_steps", report.feedback_steps)
        _append(s, "planned_contacts", None if report.planned_contacts is None
                else np.array(report.planned_contacts, dtype=bool))
        _append(s, "actuator_force", None if report.actuator_force is None
                else np.array(report.actuator_force))
        self.now = report.time
        if report.command is not None:
            _append(s, "command", np.array(report.command))
            _append(s, "velocity", body_velocity(report.qpos, report.qvel))

    def on_plan(self, report: PlanReport) -> None:
        stats, wall_time = report.stats, report.wall_time
        p = self.plans
        p["time"].append(stats.time)
        p["ok"].append(stats.status == "ok")
        p["cost"].append(stats.cost)
        p["stage_cost"].append(stats.stage_cost)
        terms = stats.term_costs if len(stats.term_costs) else np.full(len(self.term_names),
                                                                        np.nan)
        p["term_costs"].append(terms)
        p["timings"].append([stats.timings.get(k, np.nan) for k in PHASES])
        p["mu"].append(stats.mu)
        p["alpha"].append(stats.alpha)
        p["simulations"].append(stats.simulations)
        p["wall_time"].append(wall_time)
        _append(p, "goal", None if report.goal is None else np.array(report.goal)[:2])
        if self.path_sensors and report.nominal is not None:
            data = report.nominal.sensordata[::2]
            base, *feet = (data[:, sl] for sl in self.path_sensors)
            _append(p, "base_path", base.astype(np.float32))
            _append(p, "foot_paths", np.stack(feet).astype(np.float32))

    def event(self, level: str, message: str) -> None:
        """A warning or error, at the time of the latest recorded state."""
        self.events["time"].append(self.now)
        self.events["level"].append(level)
        self.events["message"].append(message)

    def close(self, summary: dict) -> None:
        """Write the time series and the summary."""
        arrays = {f"state_{k}": np.array(v) for k, v in self.states.items()}
        arrays.update({f"plan_{k}": np.array(v) for k, v in self.plans.items()})
        arrays.update({f"event_{k}": np.array(v, dtype=float if k == "time" else str)
                       for k, v in self.events.items()})
        arrays["term_names"] = np.array(self.term_names)
        arrays["phase_names"] = np.array(PHASES)
        np.savez_compressed(self.dir / "timeseries.npz", **arrays)
        (self.dir / "summary.json").write_text(strict_json(summary, indent=2) + "\n")
        self.detach()

    def detach(self) -> None:
        """Stop writing events.log (a run that failed to start keeps what it logged)."""
        logging.getLogger().removeHandler(self._handler)
        self._handler.close()


def _append(series: dict[str, list], key: str, value) -> None:
    """Append ``value`` to the optional series ``key`` (created on first use), unless None."""
    if value is not None:
        series.setdefault(key, []).append(value)


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
