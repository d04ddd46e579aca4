"""Blind walking on terrain, in lockstep, on the deploy path: configs x terrains x seeds.

    python scripts/eval_terrain.py [--configs a1_hw go1_hw_terrain ...] [--terrains ramp_up_5 ...]
        [--matrix done|issue] [--seeds 0 1 2 ...] [--estimator config|truth]
        [--delay-ms 6] [--plan-latency-ms 20] [--plant-model reference|own]
        [--plant-joint-damping D] [--goal 2.0]
        [--speed 0.3] [--duration S] [--threads 1] [--engine ray|serial] [--address ADDR]
        [--map-offset M] [--map-noise M] [--set KEY=VALUE ...] [--out bench_results/terrain]

Each run: the config in lockstep on :class:`hardware.fake.motor_plant.FakeMotorPlant` (the fake
robot's motors receiving the bridge's commands ``--delay-ms`` late, its realistic sensors) on
the terrain (:mod:`mpc.app.plants.terrain`, in the plant only: the planner walks blind), each
plan coming into force ``--plan-latency-ms`` after the state it started from
(``runtime.plan_latency``), the base state from the config's own estimator (``--estimator
config``, as on a robot, the gait schedule's planned stance its contact prior) or the
simulation's truth. The matrix's hardware configs plan on the
level plane at 0 (``task.ground: level``, the default) and their Kalman filter measures the
height against it; their blind-terrain variants ``a1_hw_terrain``, ``go1_hw_terrain``,
``go2_hw_terrain`` and ``h1_hw_velocity_terrain`` (``--configs``; for others
``--set task.ground=fit --set
plant.base_state.ground=carried``) plan on the plane fitted to the footholds
(:mod:`mpc.tasks.ground`) and carry the height from foothold to foothold.
``--plant-model reference`` (default) simulates the robot from another published description
of it (MuJoCo Menagerie's, in tests/reference) than the planner's own model, as the real robot
differs from any model; ``own`` simulates the planner's model. ``--plant-joint-damping``
(N m s/rad) gives the simulated robot's joints that much viscous damping of their own, on top of
the motors' Kd (:class:`hardware.fake.robot.FakeRobotSim`): by default the Menagerie Go2 keeps
its description's 2 and every other plant has none.

A terrain may also be a terrain map file (``configs/maps/stairs_12cm.yaml``: a ``.yaml``, or a
``.npy``/``.png`` with its sidecar; :mod:`mpc.tasks.terrain_map`): the plant stands on the map
(``plant.terrain: {kind: map}``). A config that plans on a map (``task.ground: map``, the
``X_hw_stairs`` configs) names its own (``task.map``); the two are different options so that
they can disagree. ``--map-offset`` m and ``--map-noise`` m of noise per sample (seeded by the
run's seed) make them disagree as an elevation map does: for a config that plans on a map, its
map is raised and made noisy and the world is the true map; for a blind config, the world. (The
world raised instead would be no error: the robot starts on it and its estimator takes where it
starts as height 0.) Without ``--goal``, a config whose goal
is a list of waypoints (the stairs configs: the top of the flight, then down again) walks them
and is judged at the last; other goal-mode configs walk to 2 m ahead.

Random terrains (slabs, rough ground) are laid out anew for every seed (the run's seed
seeds them too). Goal-mode configs walk to a goal ``--goal`` m ahead; velocity-mode configs
(``h1_hw_velocity``) are driven at ``--speed`` m/s forward for as long as it takes to cover
``--goal`` m, then stopped. A run succeeds with no fall, joints below the bridge's 40 rad/s
trip and, by the simulation's truth, the goal within 0.25 m (velocity mode: at least
``goal - 0.25`` m covered).
Falls are judged by the truth against the terrain (base below the robot's fall height above
the ground under it, or tilted past its fall tilt); the controller's own fall check (the
estimated base over the ground it believes in) stopping a run is reported apart. Each run also
records where it fell or stopped (the terrain's section there), the furthest it got (a robot
that stumbles at an edge may be thrown back before it is down) and, with an estimator, its
height and velocity error against the truth.

The matrix runs as a campaign (:mod:`mpc.app.campaign`): on Ray by default (a local instance on
loopback; ``--address`` for a cluster), one result file per run in ``OUT/cases``, finished runs
skipped on a rerun. A run that SIGINT (Ctrl-C) or SIGTERM cuts short is not a result: nothing is
stored for it, and the campaign stops with exit code 130 and one line (the cases finished before
stay stored; the same command resumes). Each run plans with the config's ``planner.threads``
(its batched line search depends on it) and as many derivative threads, and Ray gives it as
many CPUs: on two cores the hardware configs (2 threads) run one at a time. Writes
``OUT/terrain.md`` and ``.csv`` (per config x terrain: successes, median end distance, falls,
stops, trips, fastest joint, estimator errors), ``OUT/runs.csv`` (every run) and
``OUT/terrain.png`` (with matplotlib: ``pip install 'legged-mpc[plot]'``).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import signal
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import write_csv, write_tables  # noqa: E402

GOAL_TOLERANCE = 0.25
JOINT_TRIP = 40.0
#: N of normal force between two parts of the robot that counts as a foot set down on a leg
#: (the Go2's 40 stairs runs on its map file, footholds kept off standing feet: at most 1.5 N).
LEGS_TOUCH = 20.0
#: Plant-time period (s) of the truth/estimate record.
RECORD_PERIOD = 0.01
QUADRUPEDS = ("a1_hw", "go1_hw", "go2_hw")
#: The issue's "done means": quadrupeds on these (and the level floor, the control); the H1
#: walking on those.
DONE_TERRAINS = ("flat", "ramp_up_5", "ramp_up_10", "ramp_up_15", "ramp_down_5", "ramp_down_10",
                 "ramp_down_15", "step_up_8cm", "step_down_8cm", "slabs_5cm")
H1_TERRAINS = ("flat", "ramp_up_5", "step_up_3cm")
#: The issue's own trials: standing on a 4 deg slope, an 8 deg ramp 0.5 m ahead, a 5 cm step.
ISSUE_TERRAINS = ("slope_up_4", "ramp_up_8", "step_up_5cm")


def matrix(name: str) -> list[tuple[str, str]]:
    """(config, terrain) pairs of a named matrix."""
    if name == "issue":
        return [(c, t) for c in QUADRUPEDS for t in ISSUE_TERRAINS]
    return ([(c, t) for c in QUADRUPEDS for t in DONE_TERRAINS]
            + [("h1_hw_velocity", t) for t in H1_TERRAINS])


# --- one run ---------------------------------------------------------------------------------


def run_case(case: dict) -> dict:
    """Run one case (a plain mapping, see :func:`make_case`); a JSON-able result. A run that a
    signal ended early (``summary["interrupted"]``: the first SIGINT or SIGTERM stops the run
    at its next step and it closes as at its end) raises KeyboardInterrupt instead of being
    judged: it is not a result."""
    from mpc.app.config import load_config

    with tempfile.TemporaryDirectory() as tmp:
        overrides = case_overrides(case)
        if "planner_map" in case:
            overrides.append(f"task.map={planner_map(case['planner_map'], Path(tmp))}")
        cfg = load_config(case["config"], overrides)
        return _run(case, cfg, Path(tmp))


def planner_map(error: dict, folder: Path) -> Path:
    """The map a case's planner plans on when it disagrees with the world: the config's map
    (``error["file"]``) raised by ``offset`` m with ``noise`` m per sample (seeded by
    ``seed``), written into ``folder``; its path."""
    from mpc.tasks import terrain_map

    wrong = terrain_map.load(error["file"]).perturbed(error["offset"], error["noise"],
                                                      error.get("seed", 0))
    return wrong.save(folder / "planner_map.yaml")


def _run(case: dict, cfg, tmp: Path) -> dict:
    """:func:`run_case` with the case's config loaded, in the temporary folder ``tmp``."""
    import robots
    from hardware.fake.motor_plant import FakeMotorPlant
    from mpc.app.run import run

    robot = robots.info(cfg.robot)
    spec = None
    if case["plant_model"] == "reference":
        tests = str(ROOT / "tests")
        if tests not in sys.path:  # the reference descriptions are test data
            sys.path.insert(0, tests)
        from reference_models import reference_plant_spec

        spec = reference_plant_spec(cfg.robot)
    base_state = cfg.plant.get("base_state") if case["estimator"] == "config" else None

    plant = recording_plant(FakeMotorPlant)(
        robot, delay=case["delay_ms"] / 1e3, base_state=base_state, seed=case["seed"],
        terrain=seeded_terrain(case), spec=spec, joint_damping=case.get("plant_joint_damping"),
        kp=cfg.plant.get("kp"), kd=cfg.plant.get("kd"))  # the bridge's gains (plant.kp, kd)
    summary = run(cfg, out=tmp / "run", plant=plant)
    if summary.get("interrupted") or not summary.get("started", True):
        # a signal ended the run early: not a result (the campaign stores nothing for it)
        raise KeyboardInterrupt("the run was interrupted")
    return judge(case, cfg, robot, plant, summary)


def recording_plant(base: type) -> type:
    """``base`` (FakeMotorPlant) recording the truth and the estimate every RECORD_PERIOD of
    plant time in ``truth_log`` (``log`` is the plant's link log): (time, base qpos, base
    linear velocity, estimate pos + linvel or None). With an estimator that has a contact
    belief (``contact``, the Kalman filter), ``stance_rise`` also collects, every step, how far
    each foot truly rose (its site's height, m) from the step its belief came above 0.5 to
    the last step it stayed there: what a foot held from foothold to foothold carries into
    the height (a foot that rises under a base believed still reads as the base going down).
    ``legs_touch`` collects (time, N) for every step at which two parts of the robot pressed on
    each other (the largest normal force among such contacts): a foot set down on another
    leg, which the planning model, touching the ground alone, cannot foresee."""

    class Recording(base):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.truth_log: list = []
            self.stance_rise: list[float] = []
            self._steps = 0
            self._every = max(1, round(RECORD_PERIOD / self.timestep))
            import mujoco

            m = self.sim.model
            self._sites = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, f)
                           for f in self.sim.robot.feet]
            self._held = np.full(len(self._sites), np.nan)  # site height where a belief began
            self.legs_touch: list[tuple[float, float]] = []
            self._root = int(m.body_rootid[m.site_bodyid[self._sites[0]]])
            self._contact_force = mujoco.mj_contactForce
            self._last_z = np.zeros(len(self._sites))  # at the step before

        def step(self) -> None:
            super().step()
            d = self.sim.data
            if self._steps % self._every == 0:
                est = self.source.estimate() if self.source is not None else None
                self.truth_log.append((float(d.time), d.qpos[0:7].copy(), d.qvel[0:3].copy(),
                                 None if est is None else np.r_[est.pos, est.linvel]))
            self._steps += 1
            self._record_legs_touch()
            contact = getattr(self.source, "contact", None)
            if contact is not None:
                z = d.site_xpos[self._sites, 2]
                down = np.asarray(contact) > 0.5
                held = self._held
                ended = ~down & np.isfinite(held)
                self.stance_rise.extend((self._last_z[ended] - held[ended]).tolist())
                self._held = np.where(down, np.where(np.isfinite(held), held, z), np.nan)
                self._last_z = z.copy()

        def _record_legs_touch(self) -> None:
            m, d = self.sim.model, self.sim.data
            if not d.ncon:
                return
            root = m.body_rootid[m.geom_bodyid[d.contact.geom]]
            own = np.flatnonzero((root[:, 0] == self._root) & (root[:, 1] == self._root))
            if len(own):
                wrench = np.zeros(6)
                most = 0.0
                for k in own:
                    self._contact_force(m, d, int(k), wrench)
                    most = max(most, float(wrench[0]))
                self.legs_touch.append((float(d.time), most))

    return Recording


def case_overrides(case: dict) -> list[str]:
    """The config overrides of a case: lockstep, its delays, seed, threads, goal or speed."""
    threads = case["threads"]  # the config's planner.threads (see make_case)
    out = ["runtime.mode=lockstep", f"runtime.duration={case['duration']}",
           f"runtime.plan_latency={case['plan_latency_ms'] / 1e3}", f"runtime.seed={case['seed']}",
           f"planner.threads={threads}"]
    from mpc.app.config import load_config

    cfg = load_config(case["config"])
    backend = cfg.derivatives["backend"]
    out.append(f"derivatives.{backend}.threads={threads}")
    if cfg.task.get("mode") == "velocity":
        walk = case["goal"] / case["speed"]
        out.append("command.source={type: scripted, profile: [[0, 0, 0, 0], "
                   f"[1.0, {case['speed']}, 0, 0], [{1.0 + walk:.3f}, 0, 0, 0]]}}")
    elif case["goal"] is not None:
        out.append(f"task.goal=[{case['goal']}, 0.0]")
    return out + list(case["set"])


def goal_of(case: dict, cfg) -> np.ndarray:
    """Where a goal-mode run is judged: ``--goal`` m ahead, or the config's last waypoint."""
    from mpc.tasks.goal_mode import final_goal

    if case["goal"] is not None:
        return np.array([case["goal"], 0.0])
    return final_goal(cfg.task, (2.0, 0.0))


MAP_SUFFIXES = (".yaml", ".yml", ".npy", ".png")


def is_map(terrain: str) -> bool:
    """Whether a --terrains entry is a terrain map file rather than a terrain name."""
    return Path(terrain).suffix in MAP_SUFFIXES


def judge(case: dict, cfg, robot, plant, summary: dict) -> dict:
    """The run's outcome by the simulation's truth, and the estimator's errors."""
    terrain = plant.sim.terrain
    t = np.array([r[0] for r in plant.truth_log])
    qpos = np.array([r[1] for r in plant.truth_log])
    # fall by the truth, against the ground under the base
    fall_at = None
    for i, q in enumerate(qpos):
        above = q.copy()
        above[2] = q[2] - terrain.ground_height(q[0], q[1])
        if _fallen(above, robot):
            fall_at = i
            break
    end = qpos[-1]
    velocity_mode = cfg.task.get("mode") == "velocity"
    goal = goal_of(case, cfg)
    end_dist = float(np.linalg.norm(end[:2] - goal))
    covered = float(end[0])
    reached = covered >= goal[0] - GOAL_TOLERANCE if velocity_mode else \
        end_dist < GOAL_TOLERANCE
    trip = plant.max_joint_speed >= JOINT_TRIP
    stop = summary.get("fell_reason")  # the controller's own fall check, on its estimate
    if fall_at is None and stop and stop.startswith("tilt"):
        # tilt is against gravity, which the estimate has from the IMU: a fall the truth
        # record ends at the instant of (the run stops there)
        fall_at = len(qpos) - 1
    if fall_at is not None:
        outcome = "fell"
    elif stop:  # the estimated base below the fall height over the ground it believes in
        outcome = "stopped by the controller's height check"
    elif trip:
        outcome = "joint trip"
    elif plant.damping_reason:
        outcome = f"damped: {plant.damping_reason}"
    elif reached:
        outcome = "goal"
    else:
        outcome = "stalled"
    where_x = float(qpos[fall_at][0]) if fall_at is not None else covered
    # a robot that stumbles at an edge may be thrown back before it is down
    furthest = float(qpos[: None if fall_at is None else fall_at + 1, 0].max())
    out = {
        "config": Path(case["config"]).stem, "robot": cfg.robot,
        "terrain": case["terrain"] if isinstance(case["terrain"], str) else "custom",
        "seed": case["seed"], "success": outcome == "goal", "outcome": outcome,
        "end_x_m": round(covered, 3), "end_distance_m": round(end_dist, 3),
        "fell": fall_at is not None,
        "fall_time_s": round(float(t[fall_at]), 2) if fall_at is not None else None,
        "where_x_m": round(where_x, 3), "where": terrain.section(where_x),
        "furthest_x_m": round(furthest, 3), "furthest_where": terrain.section(furthest),
        "controller_stop": stop, "joint_trip": trip,
        "max_joint_speed": round(plant.max_joint_speed, 1),
        "sim_time_s": round(float(t[-1]), 2) if len(t) else 0.0,
        "planner_iterations": summary.get("planner_iterations"),
        # knots the analytic backend linearized by finite differences (0: none)
        "fd_evaluations": summary.get("fd_evaluations"),
    }
    out.update(estimator_errors(plant.truth_log, fall_at))
    rise = plant.stance_rise
    out["stance_rise_mm"] = round(1e3 * float(np.mean(rise)), 2) if rise else None
    out.update(legs_touched(plant.legs_touch, None if fall_at is None else float(t[fall_at])))
    return out


def legs_touched(touches: list[tuple[float, float]], until: float | None) -> dict:
    """When two parts of the robot first pressed on each other with at least
    :data:`LEGS_TOUCH` N, and the largest such force (N), before a fall at ``until`` (s)."""
    forces = [(t, f) for t, f in touches if until is None or t <= until]
    first = next((t for t, f in forces if f >= LEGS_TOUCH), None)
    return {"legs_touched_s": None if first is None else round(first, 2),
            "legs_touch_max_n": round(max((f for _, f in forces), default=0.0), 1)}


def _fallen(q: np.ndarray, robot) -> bool:
    """The robot's fall criterion on a base pose whose height is above the local ground."""
    x, y = q[4:6]
    up_z = 1 - 2 * (x * x + y * y)  # the base z axis' vertical component
    return bool(q[2] < robot.fall_height or math.acos(max(-1.0, min(1.0, up_z)))
                > robot.fall_tilt)


def estimator_errors(log: list, until: int | None) -> dict:
    """Height error (estimate - truth: largest, RMS, at the end) and RMS of the linear
    velocity error's norm, up to a fall; None without an estimator."""
    rows = log[:until] if until else log
    if not rows or rows[0][3] is None:
        return {"height_err_max_m": None, "height_err_rms_m": None, "height_err_end_m": None,
                "vel_err_rms_mps": None}
    tq = np.array([r[1] for r in rows])
    tv = np.array([r[2] for r in rows])
    est = np.array([r[3] for r in rows])
    dz = est[:, 2] - tq[:, 2]
    dv = np.linalg.norm(est[:, 3:6] - tv, axis=1)
    return {"height_err_max_m": round(float(np.abs(dz).max()), 4),
            "height_err_rms_m": round(float(np.sqrt(np.mean(dz**2))), 4),
            "height_err_end_m": round(float(dz[-1]), 4),
            "vel_err_rms_mps": round(float(np.sqrt(np.mean(dv**2))), 4)}


# --- the campaign and its table --------------------------------------------------------------


def make_case(config: str, terrain: str, seed: int, args) -> dict:
    """A case of the campaign: everything its result depends on. ``threads`` is the config's
    ``planner.threads`` unless ``--threads`` is given: the batched line search rolls out
    thread-sized batches, so the thread count changes what the planner does."""
    from mpc.app.config import load_config
    from mpc.app.plants import terrain as terrain_mod

    cfg = load_config(config, args.set)
    threads = args.threads or cfg.planner.threads
    goal = args.goal
    if goal is None and (cfg.task.get("mode") == "velocity"
                         or np.ndim(cfg.task.get("goal", [2.0, 0.0])) < 2):
        goal = 2.0
    case = {"config": config, "terrain": terrain, "seed": seed, "estimator": args.estimator,
            "delay_ms": args.delay_ms, "plan_latency_ms": args.plan_latency_ms,
            "plant_model": args.plant_model, "goal": goal, "speed": args.speed,
            "duration": args.duration, "threads": threads, "set": list(args.set)}
    if args.plant_joint_damping is not None:  # only when given: the other cases keep their keys
        case["plant_joint_damping"] = args.plant_joint_damping
    if is_map(terrain):
        case["map"] = {"kind": "map", "file": str(Path(terrain).resolve()),
                       "offset": 0.0, "noise": 0.0}
        error = {"offset": args.map_offset, "noise": args.map_noise}
        if args.map_noise > 0.0:
            error["seed"] = seed  # noise drawn anew for every seed
        plans_on_map = cfg.task.get("ground") == "map" and cfg.task.get("map")
        if (args.map_offset or args.map_noise) and plans_on_map:
            case["planner_map"] = {"file": cfg.task["map"], **error}  # the world stays true
        else:
            case["map"].update(error)
    elif any(hasattr(f, "seed") for f in terrain_mod.parse(terrain)):
        case["terrain_seed"] = seed  # slabs or bumps laid out anew for every seed
    return case


def seeded_terrain(case: dict):
    """The case's terrain, its random layout (slabs, bumps) seeded by ``terrain_seed``."""
    import dataclasses

    from mpc.app.plants import terrain as terrain_mod

    if "map" in case:
        return case["map"]
    if "terrain_seed" not in case:
        return case["terrain"]
    return [dataclasses.replace(f, seed=case["terrain_seed"]) if hasattr(f, "seed") else f
            for f in terrain_mod.parse(case["terrain"])]


def summarize(results: list[dict]) -> list[dict]:
    """One row per config x terrain."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in results:
        groups.setdefault((r["config"], r["terrain"]), []).append(r)
    rows = []
    for (config, terrain), runs in groups.items():
        def med(key: str, runs=runs) -> str:
            values = [r[key] for r in runs if r.get(key) is not None]
            return f"{np.median(values):.3f}" if values else "-"
        failed: dict[str, list[float]] = {}
        for r in runs:
            if not r["success"]:
                failed.setdefault(f"{r['outcome']} ({r['where']})", []).append(r["where_x_m"])
        where = [f"{len(xs)}x {what} at x {min(xs):.2f}-{max(xs):.2f} m"
                 for what, xs in sorted(failed.items())]
        rows.append({
            "config": config, "terrain": terrain,
            "success": f"{sum(r['success'] for r in runs)}/{len(runs)}",
            "median end distance (m)": med("end_distance_m"),
            "median furthest x (m)": med("furthest_x_m"),
            "falls": sum(r["fell"] for r in runs),
            "controller stops": sum(r["outcome"].startswith("stopped") for r in runs),
            "trips": sum(r["joint_trip"] for r in runs),
            "stalls": sum(r["outcome"] == "stalled" for r in runs),
            "fastest joint (rad/s)": max(r["max_joint_speed"] for r in runs),
            # runs in which a foot came down on another leg (or any two parts pressed)
            "legs touched": sum(r.get("legs_touched_s") is not None for r in runs),
            "height err max (m, median)": med("height_err_max_m"),
            "velocity err RMS (m/s, median)": med("vel_err_rms_mps"),
            "failures (where the base was)": "; ".join(where) or "-",
        })
    return rows


def plot(rows: list[dict], results: list[dict], path: Path) -> bool:
    """Success per config x terrain, and each run's end distance; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    configs = list(dict.fromkeys(r["config"] for r in rows))
    terrains = list(dict.fromkeys(r["terrain"] for r in rows))
    rate = np.full((len(configs), len(terrains)), np.nan)
    for r in rows:
        ok, n = (int(v) for v in r["success"].split("/"))
        rate[configs.index(r["config"]), terrains.index(r["terrain"])] = ok / n
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(max(8, 1.1 * len(terrains)), 8),
                                   constrained_layout=True)
    im = ax1.imshow(rate, vmin=0, vmax=1, cmap="RdYlGn", aspect="auto")
    ax1.set_xticks(range(len(terrains)), terrains, rotation=30, ha="right")
    ax1.set_yticks(range(len(configs)), configs)
    for r in rows:
        ax1.text(terrains.index(r["terrain"]), configs.index(r["config"]), r["success"],
                 ha="center", va="center")
    fig.colorbar(im, ax=ax1, label="success rate")
    ax1.set_title("reached the goal (within 0.25 m, no fall, joints below the trip)")
    markers = {"goal": "o", "fell": "x", "stalled": "s", "joint trip": "^"}
    for k, c in enumerate(configs):
        for r in (r for r in results if r["config"] == c):
            j = terrains.index(r["terrain"])
            ax2.scatter(j + 0.15 * (k - len(configs) / 2), r["end_distance_m"],
                        marker=markers.get(r["outcome"], "d"), color=f"C{k}",
                        label=c if r is next(x for x in results if x["config"] == c) else None)
    ax2.axhline(GOAL_TOLERANCE, color="grey", lw=0.8, ls="--")
    ax2.set_xticks(range(len(terrains)), terrains, rotation=30, ha="right")
    ax2.set_ylabel("true distance to the goal at the end (m)")
    ax2.set_title("o goal, x fell, s stalled, ^ joint trip, d stopped/damped")
    ax2.legend(fontsize=8)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


@contextlib.contextmanager
def sigterm_interrupts():
    """SIGTERM raises KeyboardInterrupt, as Ctrl-C does (``mpc-run`` does the same): a run in
    progress then stops at its next step and is not kept (:func:`run_case`), and the campaign
    ends with exit code 130. A SIGTERM that whoever started the script ignores stays ignored;
    the previous handler comes back afterwards."""
    def interrupt(signum: int, _frame) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    if threading.current_thread() is not threading.main_thread():  # no handlers there
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous is not signal.SIG_IGN:
        signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def parser() -> argparse.ArgumentParser:
    """The command line; its defaults are a case's (:func:`make_case`)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--matrix", choices=("done", "issue"), default="done",
                   help="done: the issue's done-means matrix; issue: its own trials")
    p.add_argument("--configs", nargs="+", help="configs (default: the matrix's)")
    p.add_argument("--terrains", nargs="+", help="terrain names (default: the matrix's)")
    p.add_argument("--seeds", nargs="+", type=int, default=list(range(10)))
    p.add_argument("--estimator", choices=("config", "truth"), default="config")
    p.add_argument("--delay-ms", type=float, default=6.0)
    p.add_argument("--plan-latency-ms", type=float, default=20.0)
    p.add_argument("--plant-model", choices=("reference", "own"), default="reference")
    p.add_argument("--plant-joint-damping", type=float, default=None, metavar="D",
                   help="N m s/rad of the simulated joints' own damping, on top of the motors' "
                        "Kd (default: the description's)")
    p.add_argument("--goal", type=float, default=None,
                   help="m ahead (default: 2, or a config's own waypoints)")
    p.add_argument("--speed", type=float, default=0.3, help="m/s, velocity-mode configs")
    p.add_argument("--duration", type=float, default=12.0,
                   help="s of plant time (the quadrupeds reach a goal 2 m ahead in about 4 s "
                        "on the level floor; the H1 walks 1 s + goal / speed, then stands)")
    p.add_argument("--threads", type=int, default=None,
                   help="planner and derivative threads per run (default: the config's "
                        "planner.threads; Ray gives each run that many CPUs)")
    p.add_argument("--engine", choices=("ray", "serial"), default=None,
                   help="ray (default when installed) or serial")
    p.add_argument("--address", help="Ray cluster address (default: a local instance)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="config override for every run")
    p.add_argument("--map-offset", type=float, default=0.0,
                   help="m added to the heights of the map a config plans on, and its "
                        "estimator with ground: map reads (the world stays true); for a blind "
                        "config, to the world's")
    p.add_argument("--map-noise", type=float, default=0.0,
                   help="m, standard deviation of noise on the samples of the map a config "
                        "plans on (for a blind config, the world's)")
    p.add_argument("--out", default="bench_results/terrain")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)

    from mpc.app.campaign import Campaign, ray_available
    from mpc.app.config import load_config
    from mpc.app.errors import UserError
    from mpc.app.plants import terrain as terrain_mod

    pairs = matrix(args.matrix)
    if args.configs:
        pairs = [(c, t) for c in args.configs for t in (args.terrains or dict.fromkeys(
            t for _, t in pairs))]
    elif args.terrains:
        pairs = [(c, t) for c in dict.fromkeys(c for c, _ in pairs) for t in args.terrains]
    if args.plant_joint_damping is not None and not 0.0 <= args.plant_joint_damping <= 20.0:
        print(f"eval_terrain: error: --plant-joint-damping must be within 0..20 N m s/rad, "
              f"got {args.plant_joint_damping:g}", file=sys.stderr)
        return 2
    try:
        for config, terrain in pairs:
            load_config(config, args.set)
            terrain_mod.parse({"kind": "map", "file": terrain, "offset": args.map_offset,
                               "noise": args.map_noise} if is_map(terrain) else terrain)
    except (UserError, terrain_mod.TerrainError) as e:
        print(f"eval_terrain: error: {e}", file=sys.stderr)
        return 2
    engine = args.engine or ("ray" if ray_available() else "serial")
    if engine == "ray" and not ray_available():
        print("eval_terrain: error: --engine ray needs Ray: pip install 'legged-mpc[campaign]'",
              file=sys.stderr)
        return 2
    cases = [make_case(c, t, s, args) for c, t in pairs for s in args.seeds]
    out = Path(args.out)

    def show(case: dict, result: dict) -> None:
        print(f"{case['config']} {case['terrain']} seed {case['seed']}: {result['outcome']} "
              f"at x = {result['end_x_m']} m ({result['where']}), joints "
              f"{result['max_joint_speed']} rad/s", flush=True)

    campaign = Campaign(run_case, out / "cases", engine=engine, address=args.address,
                        cpus_per_case=max(c["threads"] for c in cases), on_result=show)
    try:
        with sigterm_interrupts():
            results = [r for r in campaign.run(cases) if r is not None]
    except ConnectionError as e:  # ray.init: no cluster there, or a token it does not take
        print(f"eval_terrain: error: --address {args.address}: {str(e).splitlines()[0]} (is the "
              "cluster up, and RAY_AUTH_TOKEN its token?)", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        done = sum(campaign.stored(c) is not None for c in cases)
        print(f"eval_terrain: interrupted: {done} of {len(cases)} cases finished in "
              f"{out / 'cases'} (a run cut short is not kept); the same command resumes",
              file=sys.stderr)
        return 130
    for case, error in campaign.failures:
        print(f"FAILED {case}: {error.strip().splitlines()[-1]}", file=sys.stderr)
    if not results:
        return 1
    rows = summarize(results)
    goal_text = (f"{args.goal:g} m ahead" if args.goal is not None
                 else "2 m ahead or the config's last waypoint")
    note = (f"Lockstep, {args.estimator} base state, {args.delay_ms:g} ms command delay, plans "
            f"in force {args.plan_latency_ms:g} ms after their state, plant model "
            f"{args.plant_model}"
            + (f" (joint damping {args.plant_joint_damping:g} N m s/rad)"
               if args.plant_joint_damping is not None else "")
            + f", goal {goal_text} (velocity mode: {args.speed:g} "
            f"m/s for {args.goal or 2.0:g} m), {args.duration:g} s, seeds {args.seeds}"
            + (f", map offset {args.map_offset:g} m, noise {args.map_noise:g} m"
               if args.map_offset or args.map_noise else "") + ". Success: goal "
            f"within {GOAL_TOLERANCE} m by the truth, no fall, joints below {JOINT_TRIP:g} "
            "rad/s." + (f" Overrides: {', '.join(args.set)}." if args.set else ""))
    print(write_tables(rows, out, "terrain", note))
    write_csv(out / "runs.csv", results)
    if plot(rows, results, out / "terrain.png"):
        print(f"plot: {out / 'terrain.png'}")
    return 0 if not campaign.failures else 1


if __name__ == "__main__":
    sys.exit(main())

