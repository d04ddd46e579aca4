"""Speed and accuracy of the derivative backends, side by side in one process.

For every robot (the project's planning models with their task's sensors, and the reference
descriptions with meshes removed) and every reference state of
``tests/analytic_verify.py``:

* median microseconds per knot, repetitions interleaved across methods: ``fd`` forward and
  centered (``mjd_transitionFD`` with C, D), ``analytic`` (one knot, one thread, with C, D) and
  ``wasp`` (warm cache: the same knot called repeatedly) when registered;
* relative Frobenius error of A, B (and C for models with sensors) of each method against
  centered ``mjd_transitionFD`` with the Newton solver at tolerance 1e-12, for Euler and
  implicitfast.

Then the A1 planning horizon (36 knots from a rollout, with sensor Jacobians): milliseconds per
horizon for each backend with 1 and 2 threads.

    .venv/bin/python scripts/bench_derivatives.py [RESULTS_DIR] [--reps N] [--quick]

prints the tables and writes ``derivatives.csv``, ``horizon.csv`` and ``derivatives.md`` to
RESULTS_DIR (default ``bench_results/``). The machine's load average is recorded: on a shared
machine, compare ratios measured in the same run, not absolute times across runs.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import mujoco
import numpy as np

import derivatives
import robots
from common.trajectory import Trajectory
from derivatives.analytic import AnalyticFallbackWarning
from derivatives.provider_base import Linearization
from mpc.tasks import make_task

# The reference descriptions (tests/reference/) and the analytic backend's reference states and
# finite-difference oracle are test code, loaded by the tests' helpers.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import analytic_verify as verify
from reference_models import load_reference

#: Task of each robot's planning model (sensors as the planner sees them).
TASKS = {"a1": "quadruped_flat", "go1": "quadruped_flat", "go2": "quadruped_flat",
         "h1": "humanoid_flat"}
HORIZON = 36


@dataclass
class Row:
    model: str
    state: str
    integrator: str
    nv: int
    ncon: int
    method: str
    us_per_knot: float = float("nan")
    err_A: float = float("nan")  # noqa: N815
    err_B: float = float("nan")  # noqa: N815
    err_C: float = float("nan")  # noqa: N815
    fd_evaluations: int = 0
    extra: dict = field(default_factory=dict)


def models(quick: bool) -> dict[str, mujoco.MjModel]:
    out = {}
    for robot in robots.available():
        task = make_task(TASKS.get(robot, "quadruped_flat"), robots.info(robot))
        out[f"project-{robot}"] = task.planning_model(0.01)
    for robot in ("a1", "go1", "go2", "h1"):
        out[f"reference-{robot}"] = load_reference(robot)
    if quick:
        out = {k: v for k, v in out.items() if k in ("project-a1", "reference-h1")}
    return out


def backends(m: mujoco.MjModel) -> dict[str, derivatives.DerivativeProvider]:
    out = {
        "fd forward": derivatives.make_provider("fd", m, centered=False),
        "fd centered": derivatives.make_provider("fd", m, centered=True),
        "analytic": derivatives.make_provider("analytic", m, threads=1),
    }
    if "wasp" in derivatives.BACKENDS:
        out["wasp (warm)"] = derivatives.make_provider("wasp", m, threads=1)
    return out


def one_knot(d: mujoco.MjData) -> Trajectory:
    m_ctrl = d.ctrl.copy()
    return Trajectory(np.array([d.time]), d.qpos[None].copy(), d.qvel[None].copy(),
                      d.act[None].copy(), m_ctrl[None], d.sensordata[None].copy(),
                      d.qacc_warmstart[None].copy())


def linearizer(provider, m: mujoco.MjModel, d: mujoco.MjData):
    """A zero-argument call linearizing the knot at ``d`` (wasp through its horizon form, so its
    per-knot cache stays warm), and the Linearization it fills."""
    out = Linearization.allocate(m, 1)
    if provider.name == "wasp":
        trajectory = one_knot(d)
        return (lambda: provider.horizon(trajectory, [0], out)), out

    def call():
        provider.linearize(d, out.A[0], out.B[0], out.C[0] if m.nsensordata else None,
                           out.D[0] if m.nsensordata else None)

    return call, out


def knot_calls(name: str, m: mujoco.MjModel, d: mujoco.MjData) -> dict:
    """Timed calls for one knot at ``d`` (for :func:`interleaved`): ``lin NAME``, the analytic
    ``linearize`` on one thread, and ``fwd NAME``, ``mj_forward`` alone on a copy of the
    state."""
    provider = derivatives.make_provider("analytic", m, threads=1)
    out = Linearization.allocate(m, 1)
    scratch = mujoco.MjData(m)
    scratch.qpos[:], scratch.qvel[:], scratch.ctrl[:] = d.qpos, d.qvel, d.ctrl
    scratch.qacc_warmstart[:] = d.qacc_warmstart

    def lin():
        provider.linearize(d, out.A[0], out.B[0], out.C[0], out.D[0])

    def fwd():
        mujoco.mj_forward(m, scratch)

    return {f"lin {name}": lin, f"fwd {name}": fwd}


def interleaved(calls: dict, reps: int, burst: int = 3) -> dict[str, float]:
    """Median seconds per call, the methods taking turns within every repetition.

    Each turn is a burst of calls of which the last is timed: a planner linearizes knot after
    knot, so the code and the data of the method are in the caches, not evicted by the method
    timed before it.
    """
    times = {k: [] for k in calls}
    for f in calls.values():  # compile, warm caches
        f()
        f()
    for _ in range(reps):
        for name, f in calls.items():
            for _ in range(burst - 1):
                f()
            t0 = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t0)
    return {k: float(np.median(v)) for k, v in times.items()}


def bench_model(name: str, m: mujoco.MjModel, reps: int, integrators) -> list[Row]:
    rows = []
    for state in verify.STATES:
        d = verify.reference_state(m, state)
        providers = backends(m)
        calls, outs = {}, {}
        for method, p in providers.items():
            calls[method], outs[method] = linearizer(p, m, d)
        seconds = interleaved(calls, reps)
        for integrator in integrators:
            oracle = verify.oracle_model(m, integrator)
            od = verify.reference_state(oracle, state)
            A_ref, B_ref, C_ref, _ = verify.centered_fd(oracle, od, sensors=True)
            for method in providers:
                p = derivatives.make_provider(
                    "fd" if method.startswith("fd") else method.split()[0], oracle,
                    **({"centered": method == "fd centered"} if method.startswith("fd")
                       else {"threads": 1}))
                call, out = linearizer(p, oracle, od)
                for _ in range(6 if method == "wasp (warm)" else 0):
                    call()  # warm wasp's cache at this knot
                count = derivatives.fd_evaluations()
                call()
                count = derivatives.fd_evaluations() - count
                row = Row(name, state, integrator, m.nv, od.ncon, method,
                          seconds[method] * 1e6 if integrator == integrators[0] else float("nan"),
                          verify.relative_error(out.A[0], A_ref),
                          verify.relative_error(out.B[0], B_ref),
                          verify.relative_error(out.C[0], C_ref) if m.nsensordata else float("nan"),
                          count)
                rows.append(row)
                p.close()
        for p in providers.values():
            p.close()
    return rows


def rollout(m: mujoco.MjModel, knots: int) -> Trajectory:
    """Knots of a simulated trot start (warm starts as the planner's rollouts record them)."""
    d = verify.reference_state(m, "trotting")
    T = knots
    traj = Trajectory(np.zeros(T), np.zeros((T, m.nq)), np.zeros((T, m.nv)), np.zeros((T, m.na)),
                      np.zeros((T, m.nu)), np.zeros((T, m.nsensordata)), np.zeros((T, m.nv)))
    for t in range(T):
        traj.time[t], traj.qpos[t], traj.qvel[t] = d.time, d.qpos, d.qvel
        traj.ctrl[t] = d.ctrl
        mujoco.mj_step(m, d)
        traj.sensordata[t], traj.warmstart[t] = d.sensordata, d.qacc_warmstart
    return traj


def bench_horizon(m: mujoco.MjModel, reps: int) -> list[dict]:
    traj = rollout(m, HORIZON)
    knots = list(range(HORIZON))
    calls, providers = {}, []
    for threads in (1, 2):
        for backend in ("fd", "analytic", "wasp"):
            if backend not in derivatives.BACKENDS:
                continue
            p = derivatives.make_provider(backend, m, threads=threads)
            providers.append(p)
            out = Linearization.allocate(m, HORIZON)
            calls[f"{backend}, {threads} thread{'s' if threads > 1 else ''}"] = (
                lambda p=p, out=out: p.horizon(traj, knots, out))
    # the yardstick: one plain forward pass per knot, the floor of any method that linearizes
    # at MuJoCo's own solution
    d = mujoco.MjData(m)

    def forward_passes():
        for t in knots:
            d.time, d.qpos[:], d.qvel[:], d.act[:], d.ctrl[:] = (
                traj.time[t], traj.qpos[t], traj.qvel[t], traj.act[t], traj.ctrl[t])
            d.qacc_warmstart[:] = traj.warmstart[t]
            mujoco.mj_forward(m, d)

    calls["mj_forward only, 1 thread"] = forward_passes
    seconds = interleaved(calls, reps, burst=1)
    for p in providers:
        p.close()
    return [{"method": k, "ms_per_horizon": v * 1e3, "us_per_knot": v * 1e6 / HORIZON}
            for k, v in seconds.items()]


def markdown(rows: list[Row], horizon: list[dict], header: str) -> str:
    lines = [header, "", "Errors are relative Frobenius errors against centered differences at "
             "solver tolerance 1e-12 (fd centered is that reference at the same step: 0); fd "
             "evals are the simulations one call spends on differences.", "",
             "| model | state | integrator | ncon | method | µs/knot | err A | err B "
             "| err C | fd evals |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r.model} | {r.state} | {r.integrator} | {r.ncon} | {r.method} | "
                     f"{r.us_per_knot:.0f} | {r.err_A:.1e} | {r.err_B:.1e} | {r.err_C:.1e} | "
                     f"{r.fd_evaluations} |".replace("nan", "-"))
    lines += ["", f"A1 planning horizon, {HORIZON} knots with sensor Jacobians:", "",
              "| method | ms per horizon | µs per knot |", "|---|---|---|"]
    for h in horizon:
        lines.append(f"| {h['method']} | {h['ms_per_horizon']:.2f} | {h['us_per_knot']:.1f} |")
    return "\n".join(lines) + "\n"


def summary(rows: list[Row]) -> str:
    """Per model: median speed-up of analytic over forward fd, worst analytic errors."""
    out = []
    for name in dict.fromkeys(r.model for r in rows):
        mine = [r for r in rows if r.model == name]
        fd = np.array([r.us_per_knot for r in mine if r.method == "fd forward"
                       and np.isfinite(r.us_per_knot)])
        an = np.array([r.us_per_knot for r in mine if r.method == "analytic"
                       and np.isfinite(r.us_per_knot)])
        err = max(max(r.err_A, r.err_B) for r in mine if r.method == "analytic")
        out.append(f"{name:20s} analytic {np.median(an):7.0f} µs/knot, fd forward "
                   f"{np.median(fd):7.0f} µs/knot, ratio {np.median(fd / an):5.1f}x, "
                   f"worst analytic error {err:.1e}")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="?", default="bench_results")
    parser.add_argument("--reps", type=int, default=30, help="interleaved repetitions")
    parser.add_argument("--quick", action="store_true", help="A1 and reference H1 only")
    args = parser.parse_args()
    warnings.simplefilter("ignore", AnalyticFallbackWarning)
    out = Path(args.results)
    out.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    started = time.time()
    rows = []
    for name, m in models(args.quick).items():
        rows += bench_model(name, m, args.reps, ("euler", "implicitfast"))
        print(f"{name}: done", flush=True)
    task = make_task("quadruped_flat", robots.info("a1"))
    horizon = bench_horizon(task.planning_model(0.01), args.reps)
    load_after = os.getloadavg()
    header = (f"Derivative backends, {time.strftime('%Y-%m-%d %H:%M')}, "
              f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
              f"MuJoCo {mujoco.__version__}, load average before/after "
              f"{load_before[0]:.2f}/{load_after[0]:.2f}, {time.time() - started:.0f} s, "
              f"{args.reps} interleaved repetitions (medians)")
    with open(out / "derivatives.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["model", "state", "integrator", "nv", "ncon", "method", "us_per_knot",
                         "err_A", "err_B", "err_C", "fd_evaluations"])
        for r in rows:
            writer.writerow([r.model, r.state, r.integrator, r.nv, r.ncon, r.method,
                             f"{r.us_per_knot:.2f}", f"{r.err_A:.3e}", f"{r.err_B:.3e}",
                             f"{r.err_C:.3e}", r.fd_evaluations])
    with open(out / "horizon.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["method", "ms_per_horizon", "us_per_knot"])
        writer.writeheader()
        writer.writerows(horizon)
    text = markdown(rows, horizon, header)
    (out / "derivatives.md").write_text(text + "\n" + summary(rows) + "\n")
    print(text)
    print(summary(rows))


if __name__ == "__main__":
    main()
