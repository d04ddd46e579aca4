"""Campaigns (mpc.app.campaign): results stored per case as they finish, a rerun resumes, and real
lockstep runs give the same results on Ray as in this process."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import pytest
import ray

from mpc.app.campaign import LOCAL_NODE_IP, Campaign, case_key, init_ray

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))
import eval_terrain


def test_the_key_of_a_case_is_its_content_not_its_key_order():
    a = {"config": "a1_hw", "seed": 1, "set": ["x=1"]}
    b = {"set": ["x=1"], "seed": 1, "config": "a1_hw"}
    assert case_key(a) == case_key(b) and len(case_key(a)) == 16
    assert case_key(a) != case_key({**a, "seed": 2})
    # stable across processes and versions: the SHA-256 of the canonical JSON
    assert case_key({"a": 1}) == "015abd7f5cc57a2d"


class Counting:
    """A case function that counts its calls and can be told to fail or be interrupted."""

    def __init__(self, fail_on: int | None = None, interrupt_on: int | None = None):
        self.calls: list[int] = []
        self.fail_on, self.interrupt_on = fail_on, interrupt_on

    def __call__(self, case: dict) -> dict:
        self.calls.append(case["n"])
        if case["n"] == self.interrupt_on:
            raise KeyboardInterrupt
        if case["n"] == self.fail_on:
            raise RuntimeError("boom")
        return {"square": case["n"] ** 2}


def test_an_interrupted_campaign_resumes_without_redoing_finished_cases(tmp_path):
    cases = [{"n": n} for n in range(5)]
    first = Counting(interrupt_on=3)
    with pytest.raises(KeyboardInterrupt):
        Campaign(first, tmp_path, engine="serial").run(cases)
    assert first.calls == [0, 1, 2, 3]
    assert len(list(tmp_path.glob("*.json"))) == 3  # each stored as it finished
    again = Counting()
    results = Campaign(again, tmp_path, engine="serial").run(cases)
    assert again.calls == [3, 4]
    assert results == [{"square": n * n} for n in range(5)]
    stored = json.loads((tmp_path / f"{case_key(cases[4])}.json").read_text())
    assert stored == {"case": cases[4], "result": {"square": 16}}


def test_a_case_that_raises_is_recorded_and_run_again_next_time(tmp_path):
    cases = [{"n": n} for n in range(3)]
    campaign = Campaign(Counting(fail_on=1), tmp_path, engine="serial")
    assert campaign.run(cases) == [{"square": 0}, None, {"square": 4}]
    assert len(campaign.failures) == 1 and "RuntimeError: boom" in campaign.failures[0][1]
    assert (tmp_path / f"{case_key(cases[1])}.error").is_file()
    fixed = Counting()
    assert Campaign(fixed, tmp_path, engine="serial").run(cases)[1] == {"square": 1}
    assert fixed.calls == [1]
    assert not (tmp_path / f"{case_key(cases[1])}.error").exists()


def test_a_case_interrupted_in_a_ray_worker_stops_the_campaign_and_is_not_kept(tmp_path):
    """A run a signal cut short in a worker (a terminal's Ctrl-C reaches the whole process
    group) comes back as KeyboardInterrupt in the driver: not stored, not an error, the cases
    finished before kept. ray.init leaves the caller's SIGTERM handler in place."""
    cases = [{"n": n} for n in range(3)]

    def mine(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, mine)
    try:
        init_ray(num_cpus=2)
        assert signal.getsignal(signal.SIGTERM) is mine
        campaign = Campaign(Counting(interrupt_on=1), tmp_path, engine="ray", cpus_per_case=2)
        with pytest.raises(KeyboardInterrupt):
            campaign.run(cases)
    finally:
        ray.shutdown()
        signal.signal(signal.SIGTERM, previous)
    assert campaign.stored(cases[0]) == {"square": 0}
    assert campaign.stored(cases[1]) is None and not campaign.failures
    assert not list(tmp_path.glob("*.error"))


def tiny_cases() -> list[dict]:
    base = {"estimator": "config", "delay_ms": 6.0, "plan_latency_ms": 20.0,
            "plant_model": "reference", "goal": 2.0, "speed": 0.3, "duration": 0.3,
            "threads": 1, "set": []}
    return [{**base, "config": "go1_hw", "terrain": "step_up_8cm", "seed": 0},
            {**base, "config": "a1_hw", "terrain": "slope_up_4", "seed": 1,
             "plant_model": "own"}]


def test_lockstep_runs_give_the_same_results_on_ray_and_in_this_process(tmp_path):
    cases = tiny_cases()
    serial = Campaign(eval_terrain.run_case, tmp_path / "serial", engine="serial").run(cases)
    init_ray(num_cpus=2)
    try:
        # every address the local instance advertises is on loopback
        assert ray.util.get_node_ip_address() == LOCAL_NODE_IP
        assert ray.get_runtime_context().gcs_address.startswith(f"{LOCAL_NODE_IP}:")
        on_ray = Campaign(eval_terrain.run_case, tmp_path / "ray", engine="ray").run(cases)
    finally:
        ray.shutdown()
    assert on_ray == serial
    assert all(r is not None and r["sim_time_s"] > 0.25 for r in serial)
    for c in cases:  # byte for byte
        assert ((tmp_path / "ray" / f"{case_key(c)}.json").read_bytes()
                == (tmp_path / "serial" / f"{case_key(c)}.json").read_bytes())


def test_the_thread_count_is_part_of_a_case():
    """The batched line search rolls out thread-sized batches: 1 and 2 threads plan
    differently, so the campaign keys a case by its thread count."""
    case = tiny_cases()[0]
    assert eval_terrain.run_case(case) != eval_terrain.run_case({**case, "threads": 2})
    assert case_key(case) != case_key({**case, "threads": 2})
