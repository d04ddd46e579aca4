"""The run directory: resolved config, time series (.npz), events log and summary.json."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import yaml

from mpc.runtime.observer import Observer, PlanReport, StateReport
from mpc.tasks.task_base import body_velocity

PHASES = ("nominal", "derivatives", "cost_derivatives", "backward", "linesearch", "total")


class RunRecorder(Observer):
    """Collects samples during a run and writes them at the end."""

    def __init__(self, run_dir: Path, config: dict, term_names: list[str]):
        self.dir = Path(run_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        self.term_names = term_names
        self.states: dict[str, list] = {k: [] for k in ("time", "qpos", "qvel", "ctrl",
                                                          "contacts")}
        #: Velocity mode: commanded and achieved body-frame (v_x, v_y, ω_z) per state sample.
        self.velocity: dict[str, list] = {"command": [], "velocity": []}
        self.plans: dict[str, list] = {k: [] for k in (
            "time", "ok", "cost", "stage_cost", "term_costs", "timings", "mu", "alpha",
            "simulations", "wall_time")}
        self._handler = logging.FileHandler(self.dir / "events.log")
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
        if report.command is not None:
            self.velocity["command"].append(np.array(report.command))
            self.velocity["velocity"].append(body_velocity(report.qpos, report.qvel))

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

    def close(self, summary: dict) -> None:
        """Write the time series and the summary."""
        arrays = {f"state_{k}": np.array(v) for k, v in self.states.items()}
        arrays.update({f"plan_{k}": np.array(v) for k, v in self.plans.items()})
        if self.velocity["command"]:
            arrays.update({f"state_{k}": np.array(v) for k, v in self.velocity.items()})
        arrays["term_names"] = np.array(self.term_names)
        arrays["phase_names"] = np.array(PHASES)
        np.savez_compressed(self.dir / "timeseries.npz", **arrays)
        (self.dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        logging.getLogger().removeHandler(self._handler)
        self._handler.close()
