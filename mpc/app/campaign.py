"""Campaigns: many independent runs (cases) on Ray, each result stored as it finishes, resumable.

    from mpc.app.campaign import Campaign
    results = Campaign(run_case, "bench_results/terrain/cases").run(cases)

A case is a plain JSON-able mapping; ``run_case(case)`` runs it and returns a JSON-able mapping
(a lockstep run is deterministic, so the same case gives the same result wherever it runs).
Each result is written to ``<folder>/<key>.json`` (with its case) the moment it comes back,
``key`` being a stable hash of the case (:func:`case_key`: SHA-256 of its canonical JSON). A
rerun of the same campaign skips every case whose file exists, so a campaign interrupted
(Ctrl-C, a machine that went away) resumes where it stopped. A case that raises is written to
``<key>.error`` (its traceback) and run again next time. A case whose ``run_case`` raises
KeyboardInterrupt (a run a signal cut short is not a result) is neither: the campaign stops
there, raising KeyboardInterrupt, with the cases finished before stored; on Ray a worker's
interrupted case does the same in the driver. :func:`init_ray` keeps the caller's SIGTERM
handler (``ray.init`` would put one of its own that exits the process).

Engines: ``ray`` (default when Ray is installed: ``pip install 'legged-mpc[campaign]'``) or
``serial`` (one after another in this process: the reference the Ray results must equal, and
what runs where Ray is not installed).

Threads. A lockstep run plans with ``planner.threads`` rollout threads and
``derivatives.<backend>.threads`` derivative threads (numba kernels release the GIL; no numba
parallel loops, so ``NUMBA_NUM_THREADS`` only bounds numba's own pool). A campaign declares how
many one case uses (``cpus_per_case``); Ray then runs at most ``num_cpus / cpus_per_case``
cases at once on a node, so its workers never oversubscribe the cores. The thread count is part
of a case, not a free choice: the planner's batched line search rolls out thread-sized batches
of candidates, so a run with 1 thread plans differently from one with 2
(``tests/mpc/test_campaign.py``). On the 2-core development machine the hardware configs (2
threads) run one at a time.

A local instance's workers get this process's ``sys.path`` as their ``PYTHONPATH`` (a script's
own folder included), so they import what the driver imports.

Local Ray on loopback. ``ray.init()`` with no address starts a local instance whose every
advertised address is ``127.0.0.2`` (``_node_ip_address``; Ray turns ``127.0.0.1`` and
``localhost`` into the machine's network address on purpose, any other loopback address is
kept), without the dashboard, so all of its traffic stays on the loopback interface. Measured
with ``ss -tlnp`` on Ray 2.60 (2026-11): the GCS, raylet and worker gRPC servers still *listen*
on every interface (``*:port``); only the runtime-env agent binds to 127.0.0.2 alone. Ray 2.59+
protects a local instance with token authentication (a token generated into
``~/.ray/auth_token``), so what listens outside answers no one without the token.

On a cluster (token authentication, Ray 2.52+):

1. Generate a token once, ``ray get-auth-token --generate`` (written to ``~/.ray/auth_token``),
   and give it to every node and to the driver: copy that file, or set ``RAY_AUTH_TOKEN`` (or
   ``RAY_AUTH_TOKEN_PATH``) in their environment. Set ``RAY_AUTH_MODE=token`` on every node and
   the driver.
2. Install the project on every node (``pip install 'legged-mpc[campaign]'`` from the same
   commit), so that workers import the same code; or pass ``runtime_env={"working_dir": ...}``.
3. Head: ``RAY_AUTH_MODE=token ray start --head --port 6379``; each other node:
   ``RAY_AUTH_MODE=token ray start --address HEAD:6379``.
4. On a node of the cluster: ``python scripts/eval_terrain.py --address auto`` (or ``--address
   HEAD:6379``); from elsewhere through Ray Client (``pip install 'ray[client]'``):
   ``--address ray://HEAD:10001``; or as a job: ``ray job submit --address http://HEAD:8265
   --working-dir . -- python scripts/eval_terrain.py --address auto``. The output folder is
   the driver's: results come back to it.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

#: The loopback address a local Ray instance advertises (see the module docstring).
LOCAL_NODE_IP = "127.0.0.2"

RunCase = Callable[[dict], dict]


def case_key(case: dict) -> str:
    """A stable name for ``case``: the first 16 hex digits of the SHA-256 of its canonical JSON
    (sorted keys, no spaces), the same in every process and on every machine."""
    text = json.dumps(case, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def ray_available() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass
class Campaign:
    """Runs cases through ``run_case`` and keeps their results in ``folder``."""

    run_case: RunCase
    folder: Path
    #: ``ray`` or ``serial``.
    engine: str = "ray"
    #: Ray address (None: a local instance on loopback; ``auto``, ``HOST:PORT``, ``ray://...``).
    address: str | None = None
    #: CPUs (threads) one case uses; Ray schedules by it.
    cpus_per_case: int = 1
    #: CPUs of a local Ray instance (None: the machine's).
    num_cpus: int | None = None
    #: Called with (case, result) as each case finishes (also for skipped ones: result loaded).
    on_result: Callable[[dict, dict], None] | None = None
    #: Cases that raised in the last :meth:`run`: (case, traceback).
    failures: list = field(default_factory=list)

    def __post_init__(self) -> None:
        self.folder = Path(self.folder)
        if self.engine not in ("ray", "serial"):
            raise ValueError(f"engine must be ray or serial, got {self.engine!r}")
        if self.cpus_per_case < 1:
            raise ValueError(f"cpus_per_case must be >= 1, got {self.cpus_per_case}")

    # --- storage ---------------------------------------------------------------------------
    def path(self, case: dict) -> Path:
        return self.folder / f"{case_key(case)}.json"

    def stored(self, case: dict) -> dict | None:
        """The stored result of ``case``, or None if it has not finished."""
        try:
            record = json.loads(self.path(case).read_text())
        except (OSError, ValueError):
            return None
        return record["result"] if record.get("case") == case else None

    def store(self, case: dict, result: dict) -> None:
        """Write the result atomically (a half-written file never counts as finished)."""
        path = self.path(case)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"case": case, "result": result}, sort_keys=True,
                                  allow_nan=False) + "\n")
        os.replace(tmp, path)
        path.with_suffix(".error").unlink(missing_ok=True)

    def _failed(self, case: dict, error: str) -> None:
        self.failures.append((case, error))
        self.path(case).with_suffix(".error").write_text(error)

    # --- running ---------------------------------------------------------------------------
    def run(self, cases: Iterable[dict]) -> list[dict | None]:
        """Run every case not finished yet; returns the results in the order of ``cases``
        (None for a case that raised: see :attr:`failures`)."""
        cases = list(cases)
        for c in cases:
            case_key(c)  # JSON-able, or fail before anything runs
        self.folder.mkdir(parents=True, exist_ok=True)
        self.failures = []
        results: dict[str, dict | None] = {}
        todo = []
        for c in cases:
            done = self.stored(c)
            if done is not None:
                results[case_key(c)] = done
                if self.on_result is not None:
                    self.on_result(c, done)
            elif case_key(c) not in {case_key(t) for t in todo}:
                todo.append(c)
        if todo:
            run = self._run_ray if self.engine == "ray" else self._run_serial
            for case, result in run(todo):
                results[case_key(case)] = result
        return [results.get(case_key(c)) for c in cases]

    def _finish(self, case: dict, result: dict | None, error: str | None):
        if error is not None:
            self._failed(case, error)
            return case, None
        self.store(case, result)
        if self.on_result is not None:
            self.on_result(case, result)
        return case, result

    def _run_serial(self, todo: list[dict]):
        for case in todo:
            result, error = _guarded(self.run_case, case)
            yield self._finish(case, result, error)

    def _run_ray(self, todo: list[dict]):
        import ray

        started = not ray.is_initialized()
        if started:
            init_ray(self.address, self.num_cpus)
        try:
            threads = str(self.cpus_per_case)
            env = {"NUMBA_NUM_THREADS": threads, "OMP_NUM_THREADS": threads}
            if self.address is None:  # local workers import what this process imports
                env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
            remote = ray.remote(num_cpus=self.cpus_per_case, max_retries=0,
                                runtime_env={"env_vars": env})(_guarded_remote)
            pending = {remote.remote(self.run_case, case): case for case in todo}
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    case = pending.pop(ref)
                    try:
                        result, error, interrupted = ray.get(ref)
                    except ray.exceptions.RayError as e:  # a worker that died, say
                        result, error, interrupted = None, f"{type(e).__name__}: {e}", None
                    if interrupted is not None:  # not a result: stop as Ctrl-C here would
                        raise KeyboardInterrupt(interrupted)
                    yield self._finish(case, result, error)
        finally:
            if started:
                ray.shutdown()


def init_ray(address: str | None = None, num_cpus: int | None = None) -> None:
    """Connect to the Ray cluster at ``address``, or start a local instance that advertises
    only a loopback address and runs no dashboard (see the module docstring)."""
    import ray

    main = threading.current_thread() is threading.main_thread()
    sigterm = signal.getsignal(signal.SIGTERM) if main else None
    try:
        if address is not None:
            ray.init(address=address, log_to_driver=False)
            return
        ray.init(_node_ip_address=LOCAL_NODE_IP, include_dashboard=False, num_cpus=num_cpus,
                 log_to_driver=False)
    finally:
        # ray.init puts a SIGTERM handler that exits the process (SystemExit): a caller's
        # own (eval_terrain's KeyboardInterrupt) is kept; without one, Ray's stays
        if callable(sigterm):
            signal.signal(signal.SIGTERM, sigterm)


def _guarded_remote(run_case: RunCase, case: dict) -> tuple[dict | None, str | None,
                                                              str | None]:
    """:func:`_guarded` in a Ray worker, and what interrupted the case if KeyboardInterrupt
    did (the worker got a signal: a terminal's Ctrl-C reaches the whole process group), for
    the driver to stop the campaign with."""
    try:
        return (*_guarded(run_case, case), None)
    except KeyboardInterrupt as e:
        return None, None, str(e.args[0]) if e.args else "KeyboardInterrupt"


def _guarded(run_case: RunCase, case: dict) -> tuple[dict | None, str | None]:
    """(result, None), or (None, traceback) if the case raised: one bad case does not end the
    campaign."""
    try:
        result = run_case(case)
        json.dumps(result, allow_nan=False)
        return result, None
    except Exception:
        return None, traceback.format_exc()
