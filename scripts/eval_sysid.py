"""System identification against perturbed fake robots: accuracy, closed-loop gain, speed.

    python scripts/eval_sysid.py [--robots go1 go2] [--draws 10] [--first-draw 0]
        [--gantry 60] [--trot 12] [--engine ray|serial] [--out bench_results/sysid]
        [--identify-only | --loopback [--nice N] [--realtime P] [--allowance]
         | --profile [--profile-of trot|velocity] [--seed 0] [--set KEY=VALUE ...]]

Each case (a robot and a draw) is one campaign case (:mod:`mpc.app.campaign`, Ray local by
default, or ``--engine serial``), all in lockstep on :class:`hardware.fake.motor_plant.
FakeMotorPlant` (the fake robot's motors obeying the bridge's commands, its realistic sensors,
its link log written as a robot's bridge writes it):

1. a truth overlay drawn at random: per joint armature and damping x U(0.5, 1.5), friction
   U(0, 0.5) N m, position gain x U(0.7, 1.3); delay U(0, 10) ms; a payload U(0, 3) kg at an
   offset U(±0.1, ±0.05, 0..0.05) m from the trunk frame (trunk mass and centre of mass);
2. the gantry run (``configs/<robot>_sysid_gantry.yaml``, ``--gantry`` s of excitation) on the
   fake robot with that overlay, hung 0.3 m up;
3. the trotting run (``configs/<robot>_sysid_trot.yaml``, ``--trot`` s) planned on the nominal
   model, the config's own estimator on the fake robot's sensors;
4. ``mpc-sysid`` on both run directories (identification timed), the overlay written;
5. the trotting run again, planned on the identified overlay (its delay compensated by the
   feedback law, ``runtime.compensate_delay``), and what that gain is measured against: the
   same without the delay compensated, planned on the truth overlay itself (the most a model
   can give), and the nominal fake robot planned on the nominal model (the reference: what the
   perturbation costs).

Reported per case: each identified parameter's error against the truth (pass: within 10 %,
or 0.05 N m (friction) / 1 ms / 0.2 kg where the truth is near zero; the delay within 2 ms;
the centre of mass in mm), the identification's time (60 s of 500 Hz logs on 2 shared cores,
measured beside the runs), and for the two trotting runs: joint tracking error (RMS of the
plan's joint angles at each feedback step minus the measured ones), base velocity tracking
error (RMS over the run's whole seconds, the first and the last left out: seconds 1-6 of an
8 s run, the ramp's second included, of each second's mean body velocity as the estimator
reports it minus the command, vx and vy, the gait's own sway averaged out), and trips (fall,
damping, a joint faster than the bridge's trip).

``--profile`` measures base velocity tracking as scripts/eval_velocity.py does, on the cases
the campaign stored: the trotting config's whole scripted profile (``--trot 20``: forward,
sideways, turning, back, standing), or with ``--profile-of velocity`` the velocity config's
(eval_velocity's: forward 0.5 then 1 m/s, sideways 0.3 m/s, turning 0.8 rad/s, standing)
within the trotting config's limits (0.5 m/s, 0.3 m/s, 0.6 rad/s), on the nominal robot and
on the perturbed one planned on the nominal, the identified and the truth overlay, sensor
noise from ``--seed``; per run the joint
tracking error and, over the profile's steady seconds (whole seconds in which the filtered
command holds), each second's mean of the true base velocity (the fake robot's simulation, not
the estimate the controller reads) minus the command: their RMS for v_x and v_y together and
for the yaw rate, and the worst second.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from eval_velocity import steady_seconds
from report import write_tables

import robots
from hardware.fake.motor_plant import FakeMotorPlant
from hardware.safety.layer import SafetyConfig
from mpc.app import campaign
from mpc.app.config import load_config
from mpc.app.run import run
from mpc.app.runtime import feedback
from mpc.app.sysid.data import SysidError
from mpc.app.sysid.identify import Identification, identify
from mpc.tasks.task_base import body_velocity
from robots.overlay import Overlay, nominal

#: Relative tolerance, and the absolute ones near zero (N m, s, kg).
REL, FRICTION_ABS, DELAY_ABS, MASS_ABS, DELAY_LIMIT = 0.10, 0.05, 0.001, 0.2, 0.002
ABS = {"frictionloss": FRICTION_ABS, "armature": 0.0, "damping": 0.0, "kp": 0.0}


def draw(robot: str, index: int) -> Overlay:
    """The truth overlay of draw ``index`` (module docstring), reproducible."""
    info = robots.info(robot)
    base = nominal(info, robots.load_model(robot))
    rng = np.random.default_rng([index, sum(map(ord, robot))])
    out = Overlay(robot, {}, delay=float(rng.uniform(0.0, 0.010)))
    for joint, p in base.joints.items():
        out = out.with_joint(joint, armature=p.armature * rng.uniform(0.5, 1.5),
                             damping=p.damping * rng.uniform(0.5, 1.5),
                             frictionloss=float(rng.uniform(0.0, 0.5)),
                             kp=p.kp * rng.uniform(0.7, 1.3))
    payload = float(rng.uniform(0.0, 3.0))
    at = np.array([rng.uniform(-0.1, 0.1), rng.uniform(-0.05, 0.05), rng.uniform(0.0, 0.05)])
    m0, c0 = base.trunk_mass, np.array(base.trunk_com)
    mass = m0 + payload
    com = (m0 * c0 + payload * at) / mass
    return Overlay(robot, out.joints, out.delay, mass, tuple(float(v) for v in com), None,
                   f"<draw {index} of {robot}>")


class _Tracking:
    """The feedback law's joint tracking error: at every step, the plan's joint angles at the
    state's time minus the measured ones (wraps FeedbackController.step for one run). The plan
    is the latest that covers the state's time: a plan made with a command lead starts that
    lead after the state it was made from, and until then the one before it stands."""

    def __init__(self) -> None:
        self.squares: list[float] = []
        self.original = feedback.FeedbackController.step

    def __enter__(self) -> _Tracking:
        original, squares = self.original, self.squares
        plans = [None, None]  # the previous and the latest policy

        def step(ctrl, policy, state):
            if policy is not plans[1]:
                plans[:] = [plans[1], policy]
            if state.time < policy.start and plans[0] is not None:
                policy = plans[0]
            i = int(np.clip(np.searchsorted(policy.times, state.time) - 1, 0,
                            len(policy.times) - 2))
            w = float(np.clip((state.time - policy.times[i])
                              / (policy.times[i + 1] - policy.times[i]), 0.0, 1.0))
            plan = (1 - w) * policy.qpos[i, 7:] + w * policy.qpos[i + 1, 7:]
            squares.append(float(np.mean((plan - np.asarray(state.qpos)[7:]) ** 2)))
            return original(ctrl, plans[1], state)

        feedback.FeedbackController.step = step
        return self

    def __exit__(self, *exc) -> None:
        feedback.FeedbackController.step = self.original

    def rms(self) -> float:
        return float(np.sqrt(np.mean(self.squares))) if self.squares else float("nan")


class _TruthPlant(FakeMotorPlant):
    """The fake robot's motors, keeping at every state read the base's true body-frame twist
    (v_x, v_y, ω_z) beside the state the controller reads (its estimator's, on a hardware
    config): what the robot did, not what it believed it did."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.true_times: list[float] = []
        self.true_velocities: list[np.ndarray] = []

    def read_state(self):
        d = self.sim.data
        self.true_times.append(float(d.time))
        self.true_velocities.append(body_velocity(d.qpos[:7], d.qvel[:6]))
        return super().read_state()

    def true_velocity(self, times: np.ndarray) -> np.ndarray:
        """The true twist at each of the recorded states' ``times`` (the read at that time)."""
        at = np.searchsorted(np.array(self.true_times), times - 1e-9)
        return np.array(self.true_velocities)[np.clip(at, 0, len(self.true_times) - 1)]


def steady_profile(t: np.ndarray, velocity: np.ndarray, command: np.ndarray) -> dict:
    """Velocity tracking over a profile's steady seconds (:func:`eval_velocity.steady_seconds`:
    whole seconds in which the filtered command does not change), as scripts/eval_velocity.py
    measures it: each steady second's mean of (achieved − commanded); their RMS over the
    seconds for (v_x, v_y) together (mm/s) and for ω_z (mrad/s), and the worst second's
    |mean| of v_x or v_y (mm/s)."""
    means = np.array([(velocity[m] - command[m]).mean(axis=0)
                      for m in steady_seconds(t, command)])
    if not len(means):
        return {"steady_vxy_mm": float("nan"), "steady_yaw_mrad": float("nan"),
                "worst_vxy_mm": float("nan"), "steady_seconds": 0}
    return {"steady_vxy_mm": 1e3 * float(np.sqrt(np.mean(means[:, :2] ** 2))),
            "steady_yaw_mrad": 1e3 * float(np.sqrt(np.mean(means[:, 2] ** 2))),
            "worst_vxy_mm": 1e3 * float(np.abs(means[:, :2]).max()),
            "steady_seconds": len(means)}


def trot(robot: str, truth: Overlay | None, folder: Path, seconds: float, overlay: str = "",
         compensate_delay: bool = True, seed: int = 0, sets: Sequence[str] = ()) -> dict:
    """The trotting run on the fake robot ``truth`` (None: the nominal model), planned on the
    nominal model or on ``overlay``, the fake robot's sensor noise drawn from ``seed``, the
    config changed by ``sets``; its tracking errors and trips. ``velocity_rms``: the
    campaign's velocity figure (module docstring); ``true`` and ``estimated``:
    :func:`steady_profile` of the true base velocity and of the estimator's."""
    overrides = ["runtime.mode=lockstep", f"runtime.duration={seconds}",
                 f"runtime.compensate_delay={str(compensate_delay).lower()}", *sets]
    if overlay:
        overrides.append(f"robot={{name: {robot}, overlay: {overlay}}}")
    cfg = load_config(f"configs/{robot}_sysid_trot.yaml", overrides)
    plant = _TruthPlant(robots.info(robot), base_state=cfg.plant.get("base_state"),
                        overlay=truth, seed=seed, log_file=str(folder / "link.npz"))
    with _Tracking() as tracking:
        summary = run(cfg, out=folder, plant=plant)
    with np.load(folder / "timeseries.npz") as z:
        t, v, c = z["state_time"], z["state_velocity"], z["state_command"]
    # per whole second after the first: the mean error (the gait's own sway averages out)
    whole = [(t >= k) & (t < k + 1) for k in range(1, int(np.floor(t[-1])))]
    means = np.array([(v[m, :2] - c[m, :2]).mean(axis=0) for m in whole if m.any()])
    trip = SafetyConfig().max_joint_speed
    trips = [r for r in (summary["fell_reason"], summary["damping_reason"],
                         "joint speed" if plant.max_joint_speed >= trip else None) if r]
    return {"joint_rms": tracking.rms(),
            "velocity_rms": float(np.sqrt(np.mean(means ** 2))),
            "true": steady_profile(t, plant.true_velocity(t), c),
            "estimated": steady_profile(t, v, c),
            "trips": "; ".join(trips) or "none"}


def compare(truth: Overlay, found: Overlay, base: Overlay) -> dict:
    """Errors of ``found`` against ``truth`` and whether each passes (module docstring)."""
    worst, fails = {}, []
    for joint, p in truth.joints.items():
        f = found.joints[joint]
        for key, value in p.as_dict().items():
            err = abs(getattr(f, key) - value)
            rel = err / abs(value) if value else np.inf
            ok = rel <= REL or err <= ABS[key]
            # friction near zero: its absolute error says more
            worst[key] = max(worst.get(key, 0.0), err if key == "frictionloss" else rel)
            if not ok:
                fails.append(f"{joint}.{key} {getattr(f, key):.4g} vs {value:.4g}")
    delay_err = abs(found.delay - truth.delay)
    if delay_err > DELAY_LIMIT:
        fails.append(f"delay {found.delay * 1e3:.2f} vs {truth.delay * 1e3:.2f} ms")
    out = {("worst_abs_frictionloss_Nm" if k == "frictionloss" else f"worst_rel_{k}"):
           round(v, 4) for k, v in worst.items()}
    out["delay_err_ms"] = round(delay_err * 1e3, 3)
    if found.trunk_mass is not None:
        mass_err = abs(found.trunk_mass - truth.trunk_mass)
        if mass_err > max(REL * truth.trunk_mass, MASS_ABS) and mass_err > MASS_ABS:
            fails.append(f"trunk mass {found.trunk_mass:.3f} vs {truth.trunk_mass:.3f} kg")
        payload = truth.trunk_mass - base.trunk_mass
        out["mass_err_kg"] = round(mass_err, 3)
        out["payload_kg"] = round(payload, 3)
        out["com_err_mm"] = [round(float(1e3 * abs(a - b)), 1)
                             for a, b in zip(found.trunk_com, truth.trunk_com, strict=True)]
    out["fails"] = fails
    return out


def coverage(truth: Overlay, ident: Identification) -> dict[str, list[float]]:
    """How far each identified figure is from the truth in its reported standard deviations,
    |found − truth| / σ, by kind (a normal error puts 95 % of them within 2)."""
    z: dict[str, list[float]] = {}

    def add(kind: str, found: float, true: float, std: float) -> None:
        z.setdefault(kind, []).append(abs(found - true) / std if std > 0 else float("inf"))

    for fit in ident.actuators.joints:
        true = truth.joints[fit.joint].as_dict()
        for key, value in fit.values.items():
            add(key, value, true[key], fit.std[key])
    add("delay", ident.delay, truth.delay, ident.actuators.delay_std)
    if ident.trunk is not None:
        add("trunk_mass", ident.trunk.mass, truth.trunk_mass, ident.trunk.mass_std)
        for found, true, std in zip(ident.trunk.com, truth.trunk_com, ident.trunk.com_std,
                                    strict=True):
            add("trunk_com", float(found), true, float(std))
    return {k: [round(v, 3) for v in vs] for k, vs in z.items()}


def coverage_rows(results: list[dict]) -> list[dict]:
    """Per kind of figure, over ``results`` (:func:`identify_case`'s): how many figures, the
    share within 2 reported standard deviations of the truth, the median and the worst
    distance."""
    rows = []
    for kind in results[0]["sigmas"] if results else ():
        z = np.concatenate([r["sigmas"][kind] for r in results])
        rows.append({"figure": kind, "n": len(z),
                     "within_2_sd_%": round(100 * float(np.mean(z <= 2.0)), 1),
                     "median_sd": round(float(np.median(z)), 2),
                     "worst_sd": round(float(z.max()), 2)})
    return rows


def identify_case(case: dict) -> dict:
    """Identification alone, with the code as it is now, on a case's stored runs (its gantry
    run and its trotting run planned on the nominal model): accuracy, time, and each figure's
    distance from the truth in reported standard deviations (:func:`coverage`)."""
    robot, index = case["robot"], case["draw"]
    folder = Path(case["out"]) / f"{robot}_{index}"
    tic = time.perf_counter()
    ident = identify([folder / "gantry", folder / "trot_nominal"])
    seconds = time.perf_counter() - tic
    truth = draw(robot, index)
    return {"robot": robot, "draw": index, "identify_s": round(seconds, 2),
            "delay_ms": round(truth.delay * 1e3, 2),
            **compare(truth, ident.overlay(), ident.nominal),
            "sigmas": coverage(truth, ident)}


def run_case(case: dict) -> dict:
    robot, index = case["robot"], case["draw"]
    folder = Path(case["out"]) / f"{robot}_{index}"
    truth = draw(robot, index)
    info = robots.info(robot)
    gantry_dir = folder / "gantry"
    cfg = load_config(f"configs/{robot}_sysid_gantry.yaml", [
        "runtime.mode=lockstep", f"task.duration={case['gantry']}",
        f"runtime.duration={case['gantry'] + 6.0}"])
    plant = FakeMotorPlant(info, overlay=truth, gantry=True, gantry_lift=0.3,
                           log_file=str(gantry_dir / "link.npz"))
    summary = run(cfg, out=gantry_dir, plant=plant)
    gantry_trip = summary["fell_reason"] or summary["damping_reason"] or "none"
    before = trot(robot, truth, folder / "trot_nominal", case["trot"])
    tic = time.perf_counter()
    ident = identify([gantry_dir, folder / "trot_nominal"])
    seconds = time.perf_counter() - tic
    found = ident.overlay()
    overlay_file = folder / "identified.yaml"
    overlay_file.write_text(found.dump(f"identified in draw {index}"))
    after = trot(robot, truth, folder / "trot_identified", case["trot"], str(overlay_file))
    # what the gain is measured against: the nominal robot on its own model (what the
    # perturbation costs), the identified model without its delay compensated, and the truth
    uncompensated = trot(robot, truth, folder / "trot_identified_uncompensated", case["trot"],
                         str(overlay_file), compensate_delay=False)
    truth_file = folder / "truth.yaml"
    truth_file.write_text(truth.dump(f"the fake robot of draw {index}"))
    exact = trot(robot, truth, folder / "trot_truth", case["trot"], str(truth_file))
    reference = trot(robot, None, folder / "trot_reference", case["trot"])
    runs = {"reference": reference, "nominal": before, "identified": after,
            "uncompensated": uncompensated, "truth": exact}
    result = {"robot": robot, "draw": index, "gantry_trip": gantry_trip,
              "identify_s": round(seconds, 2), "delay_ms": round(truth.delay * 1e3, 2),
              **compare(truth, found, ident.nominal),
              **{f"{k}_rms_{name}": r[f"{k}_rms"] for k in ("joint", "velocity")
                 for name, r in runs.items()},
              **{f"trips_{name}": r["trips"] for name, r in runs.items()}}
    return json.loads(json.dumps(result))


#: The runs of ``--profile``: (name, on the perturbed fake robot, planned on).
PROFILE_RUNS = (("reference", False, ""), ("nominal", True, ""),
                ("identified", True, "identified.yaml"), ("truth", True, "truth.yaml"))


def profile_sets(robot: str, of: str) -> list[str]:
    """The config changes of ``--profile-of``: none for ``trot`` (the trotting config's own
    profile); for ``velocity`` the scripted profile of ``configs/<robot>_velocity.yaml``, the
    one scripts/eval_velocity.py measures, which the trotting config's command limits (the
    hardware config's) then cap."""
    if of == "trot":
        return []
    profile = load_config(f"configs/{robot}_velocity.yaml").command.source["profile"]
    return [f"command.source.profile={json.dumps(profile)}"]


def profile_case(case: dict) -> dict:
    """A velocity profile (``--profile``) on a case the campaign ran (its identified and truth
    overlays): the four runs of :data:`PROFILE_RUNS`, ``case["trot"]`` s each, sensor noise
    from ``case["seed"]``, the profile :func:`profile_sets` names; per run the joint tracking
    error (mrad) and :func:`steady_profile` of the true and of the estimated base velocity."""
    robot, index = case["robot"], case["draw"]
    folder = Path(case["out"]) / f"{robot}_{index}"
    if not (folder / "identified.yaml").is_file():
        raise FileNotFoundError(f"{folder}: no identified overlay (run the campaign first)")
    truth = draw(robot, index)
    sets = case.get("sets", [])
    result: dict = {"robot": robot, "draw": index, "seed": case["seed"],
                    "profile": case["profile_of"], "sets": sets,
                    "delay_ms": round(truth.delay * 1e3, 2)}
    where = folder / (f"profile_{case['profile_of']}_{case['trot']:g}s_seed{case['seed']}"
                      + (f"_{campaign.case_key({'sets': sets})[:8]}" if sets else ""))
    for name, perturbed, overlay in PROFILE_RUNS:
        r = trot(robot, truth if perturbed else None, where / name, case["trot"],
                 str(folder / overlay) if overlay else "", seed=case["seed"],
                 sets=[*profile_sets(robot, case["profile_of"]), *sets])
        result[name] = {"joint_mrad": 1e3 * r["joint_rms"], "campaign_velocity_mm":
                        1e3 * r["velocity_rms"], "true": r["true"],
                        "estimated": r["estimated"], "trips": r["trips"]}
    return json.loads(json.dumps(result))


def change(value: float, of: float | None) -> str:
    """``value``, and its change against ``of`` in % (a lower figure is a gain)."""
    return f"{value:.2f}" + ("" if of is None else f" ({100 * (1 - value / of):+.0f} %)")


def profile_rows(result: dict) -> list[dict]:
    """A ``--profile`` case's table rows: one per run, each figure's change against the
    perturbed robot planned on the nominal model."""
    rows = []
    for name, _, _ in PROFILE_RUNS:
        r, base = result[name], None if name == "nominal" else result["nominal"]
        rows.append({"robot": result["robot"], "draw": result["draw"], "seed": result["seed"],
                     "profile": result["profile"],
                     "sets": "; ".join(result.get("sets", [])) or "-",
                     "delay_ms": result["delay_ms"], "run": name,
                     "joint_mrad": change(r["joint_mrad"], base and base["joint_mrad"]),
                     "true_steady_vxy_mm": change(r["true"]["steady_vxy_mm"],
                                                  base and base["true"]["steady_vxy_mm"]),
                     "true_worst_vxy_mm": round(r["true"]["worst_vxy_mm"], 1),
                     "true_steady_yaw_mrad": round(r["true"]["steady_yaw_mrad"], 1),
                     "estimated_steady_vxy_mm": change(r["estimated"]["steady_vxy_mm"],
                                                       base and base["estimated"]["steady_vxy_mm"]),
                     "campaign_velocity_mm": change(r["campaign_velocity_mm"],
                                                    base and base["campaign_velocity_mm"]),
                     "steady_s": r["true"]["steady_seconds"], "trips": r["trips"]})
    return rows


def loopback_case(robot: str, index: int, out: Path, gantry: float, trot_s: float,
                  port: int, domain: int, allowance: bool, nice: int | None,
                  realtime: int | None) -> dict:
    """Draw ``index`` over loopback in real time (``--loopback``): ``mpc-fake-robot`` with the
    truth overlay in a process of its own (Go1: legacy UDP, Go2: DDS; at niceness -10 from
    hw_loopback, which stands the robot's own processor), the shipped gantry and
    trotting configs through ``mpc-run`` on the robot's bridge (``scripts/hw_loopback.py``),
    ``mpc-sysid`` on the two run directories, then the trotting run again planned on the
    identified overlay. ``allowance``: hw_loopback's looser stale-state and stale-command
    limits (for a machine shared with other heavy work; not the product's result). ``nice``:
    the controller's niceness (``runtime.nice``; None: as this script runs). ``realtime``: P,
    the controller's feedback thread under SCHED_FIFO at P (``runtime.realtime_priority``), its
    robot link's process at P + 1 (``plant.link_priority``) and the fake robot at P + 2 (it
    stands for the robot's own processor). Each run's figures are kept in ``runs.json`` for
    ``--identify-only``."""
    from hw_loopback import run_once

    folder = out / f"{robot}_{index}"
    folder.mkdir(parents=True, exist_ok=True)
    truth = draw(robot, index)
    truth_file = folder / "truth.yaml"
    truth_file.write_text(truth.dump(f"the fake robot of draw {index}"))
    overlay_file = folder / "identified.yaml"
    runs: dict[str, dict] = {}

    def once(name: str, config: str, seconds: float, sets: list[str], fake: list[str]) -> None:
        priority = [*([f"runtime.nice={nice}"] if nice is not None else []),
                    *([f"runtime.realtime_priority={realtime}",
                       f"plant.link_priority={realtime + 1}"] if realtime else [])]
        args = argparse.Namespace(
            robot=robot, base_state="estimator", truth_port=None, port=port, domain=domain,
            fake_arg=[*fake, "--overlay", str(truth_file)], allowance=allowance,
            set=[*sets, *priority], config=config, duration=seconds, mpc_arg=[],
            robot_fifo=realtime + 2 if realtime else None)
        r = run_once(args, folder / name)
        load = os.getloadavg()[0]  # over the last minute: the run's own
        path = folder / name / "run" / "summary.json"
        summary = json.loads(path.read_text()) if path.is_file() else {}
        fake_summary = r["fake"] if isinstance(r["fake"], dict) else {}
        runs[name] = {"real_time_factor": fake_summary.get("real_time_factor"),
                      "states_hz": fake_summary.get("state_rate_hz"),
                      "e2e_median_ms": (r.get("end_to_end_ms") or {}).get("median"),
                      "s": summary.get("sim_time_s") or summary.get("wall_time_s"),
                      "load": round(load, 1),
                      "trip": summary.get("damping_reason") or summary.get("fell_reason")
                      or ("fell" if fake_summary.get("fell") else None)
                      or (f"exit {r['mpc_exit']}" if r["mpc_exit"] else "none")}

    once("gantry", f"{robot}_sysid_gantry", gantry + 6.0, [f"task.duration={gantry}"],
         ["--gantry", "--gantry-lift", "0.3"])
    once("trot", f"{robot}_sysid_trot", trot_s, [], [])
    (folder / "runs.json").write_text(json.dumps(runs))
    result = loopback_identify(robot, index, out)
    if "identify_s" in result:
        once("trot_identified", f"{robot}_sysid_trot", trot_s,
             [f"robot={{name: {robot}, overlay: {overlay_file}}}"], [])
        result.update({f"trot_identified_{k}": v for k, v in runs["trot_identified"].items()})
        (folder / "runs.json").write_text(json.dumps(runs))
    return result


def loopback_identify(robot: str, index: int, out: Path) -> dict:
    """Identification from draw ``index``'s stored loopback runs (:func:`loopback_case`),
    with the code as it is: the runs' figures, accuracy and time; writes the overlay."""
    folder = out / f"{robot}_{index}"
    truth = draw(robot, index)
    overlay_file = folder / "identified.yaml"
    runs = json.loads((folder / "runs.json").read_text())
    tic = time.perf_counter()
    try:
        ident = identify([folder / "gantry" / "run", folder / "trot" / "run"])
    except SysidError as e:  # a run that tripped too early to identify from
        return {"robot": robot, "draw": index, "delay_ms": round(truth.delay * 1e3, 2),
                **{f"{name}_{k}": v for name, r in runs.items() for k, v in r.items()},
                "fails": [f"not identified: {e}"]}
    seconds = time.perf_counter() - tic
    found = ident.overlay()
    overlay_file.write_text(found.dump(f"identified over loopback, draw {index}"))
    return {"robot": robot, "draw": index, "delay_ms": round(truth.delay * 1e3, 2),
            **{f"{name}_{k}": v for name, r in runs.items() for k, v in r.items()},
            "identify_s": round(seconds, 2), **compare(truth, found, ident.nominal)}


def _code_version() -> str:
    """The commit of the identification's code (a stored identify-only result is for it)."""
    import subprocess
    folder = Path(__file__).resolve().parents[1]
    out = subprocess.run(["git", "-C", str(folder), "log", "-1", "--format=%h", "--",
                          "mpc/app/sysid"], capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--robots", nargs="+", default=["go1", "go2"])
    p.add_argument("--draws", type=int, default=10)
    p.add_argument("--gantry", type=float, default=60.0, help="s of excitation")
    p.add_argument("--trot", type=float, default=12.0, help="s of each trotting run")
    p.add_argument("--engine", choices=("ray", "serial"),
                   default="ray" if campaign.ray_available() else "serial")
    p.add_argument("--cpus-per-case", type=int, default=2)
    p.add_argument("--out", default="bench_results/sysid")
    p.add_argument("--identify-only", action="store_true",
                   help="identify again, with the code as it is, from the runs the campaign "
                        "stored (no new runs): the accuracy table sysid_identification")
    p.add_argument("--loopback", action="store_true",
                   help="each draw over loopback in real time (mpc-fake-robot in a process of "
                        "its own, UDP for Go1, DDS for Go2): the gantry and trotting runs, "
                        "identification, accuracy and the fake robot's real-time factor; no "
                        "closed-loop comparison (table sysid_loopback)")
    p.add_argument("--allowance", action="store_true",
                   help="--loopback: hw_loopback's looser stale-state and stale-command limits "
                        "(a machine shared with other heavy work; not the product's result)")
    p.add_argument("--nice", type=int, default=None,
                   help="--loopback: the controller's niceness (runtime.nice, e.g. -10 as on a "
                        "robot's computer; needs root; sets its session's scheduling group "
                        "too: run this script under setsid)")
    p.add_argument("--realtime", type=int, default=None, metavar="P",
                   help="--loopback: the controller's feedback thread under SCHED_FIFO at P "
                        "(runtime.realtime_priority), its robot link at P + 1 "
                        "(plant.link_priority), the fake robot at P + 2 (needs root)")
    p.add_argument("--profile", action="store_true",
                   help="the trotting config's velocity profile (--trot s, 20 covers it) on "
                        "the cases the campaign stored: the nominal robot, and the perturbed "
                        "one planned on the nominal, the identified and the truth overlay; "
                        "steady seconds of the true base velocity (table sysid_profile)")
    p.add_argument("--profile-of", choices=("trot", "velocity"), default="trot",
                   help="--profile: the trotting config's own profile, or the velocity "
                        "config's (eval_velocity's) within the trotting config's limits")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="--profile: a config change for each of its runs (e.g. "
                        "runtime.sensor_latency=0.004)")
    p.add_argument("--seed", type=int, default=0,
                   help="--profile: the fake robot's sensor-noise seed (the campaign's is 0)")
    p.add_argument("--first-draw", type=int, default=0)
    p.add_argument("--port", type=int, default=18470, help="--loopback: the fake robot's UDP "
                   "port (the bridge takes the next)")
    p.add_argument("--domain", type=int, default=77, help="--loopback: the DDS domain")
    args = p.parse_args()
    out = Path(args.out).resolve()
    if args.loopback:
        rows = []
        for i in range(args.first_draw, args.first_draw + args.draws):
            for robot in args.robots:
                if args.identify_only:
                    r = loopback_identify(robot, i, out / "loopback")
                else:
                    r = loopback_case(robot, i, out / "loopback", args.gantry, args.trot,
                                      args.port, args.domain, args.allowance, args.nice,
                                      args.realtime)
                print(json.dumps(r), flush=True)
                rows.append({**r, "fails": "; ".join(r["fails"]) or "none"})
        # a draw not identified (a run that ended too early) has no figures: blank cells
        keys = list(dict.fromkeys(k for r in rows for k in r))
        rows = [{k: r.get(k, "") for k in keys} for r in rows]
        again = args.identify_only
        print(write_tables(rows, out, "sysid_loopback" + ("_identification" if again else ""),
                           f"Over loopback in real time; {args.gantry:g} s gantry excitation, "
                           f"{args.trot:g} s trotting runs"
                           f"{'; hw_loopback --allowance' if args.allowance else ''}"
                           f"{f'; controller at niceness {args.nice}' if args.nice else ''}"
                           f"{f'; SCHED_FIFO {args.realtime}' if args.realtime else ''}"
                           f"{f'; identified again, code {_code_version()}' if again else ''}."))
        return
    cases = [{"robot": r, "draw": i, "gantry": args.gantry, "trot": args.trot,
              "out": str(out / "runs")}
             for i in range(args.first_draw, args.first_draw + args.draws) for r in args.robots]
    rows = []

    def show(case: dict, result: dict) -> None:
        print(json.dumps(result), flush=True)

    if args.profile:
        results = campaign.Campaign(profile_case, out / "cases_profile", engine=args.engine,
                                    cpus_per_case=args.cpus_per_case, on_result=show).run(
            [{**c, "seed": args.seed, "profile_of": args.profile_of,
              **({"sets": args.set} if args.set else {})} for c in cases])
        rows = [row for r in results if r for row in profile_rows(r)]
        tag = f"_{campaign.case_key({'sets': args.set})[:8]}" if args.set else ""
        print(write_tables(rows, out, f"sysid_profile_{args.profile_of}_{args.trot:g}s_seed"
                           f"{args.seed}{tag}", f"The {args.profile_of} configs' velocity profile, "
                           f"{args.trot:g} s, sensor seed {args.seed}; change against the "
                           "perturbed robot planned on the nominal model."))
        return
    if args.identify_only:
        results = campaign.Campaign(identify_case, out / "cases_identify", engine="serial",
                                    on_result=show).run(
            [{**c, "code": _code_version()} for c in cases])
        rows = [{**{k: v for k, v in r.items() if k not in ("fails", "sigmas")},
                 "fails": "; ".join(r["fails"]) or "none"} for r in results if r]
        print(write_tables(rows, out, "sysid_identification",
                           f"Identification again from the stored runs ({args.gantry:g} s "
                           f"gantry, {args.trot:g} s trotting), code {_code_version()}."))
        print(write_tables(coverage_rows([r for r in results if r]), out, "sysid_coverage",
                           "Each identified figure's distance from the truth in its reported "
                           "standard deviations (jackknife), over the cases."))
        return

    results = campaign.Campaign(run_case, out / "cases", engine=args.engine,
                                cpus_per_case=args.cpus_per_case, on_result=show).run(cases)
    for r in results:
        if r is None:
            continue
        row = {k: v for k, v in r.items() if k != "fails"}
        row["fails"] = "; ".join(r["fails"]) or "none"
        for k in ("joint", "velocity"):
            a = r[f"{k}_rms_nominal"]
            for name in ("identified", "uncompensated", "truth"):
                row[f"{k}_gain_{name}_%"] = round(100 * (1 - r[f"{k}_rms_{name}"] / a), 1)
            for name in ("reference", "nominal", "identified", "uncompensated", "truth"):
                row[f"{k}_rms_{name}"] = round(r[f"{k}_rms_{name}"], 5)
        rows.append(row)
    note = (f"Lockstep on the fake robot's motors with a random truth overlay; {args.gantry:g} s "
            f"gantry excitation, {args.trot:g} s trotting runs; engine {args.engine}.")
    print(write_tables(rows, out, "sysid", note))


if __name__ == "__main__":
    main()
