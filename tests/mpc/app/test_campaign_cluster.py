"""A campaign submitted to a Ray cluster by its address: a head node started with ``ray start``
on loopback (127.0.0.2, token authentication with a token of this test's own), the user's
command ``python scripts/eval_terrain.py --address HEAD:PORT`` run against it, its results equal
byte for byte to the same cases run serially in this process; a driver with the wrong token is
refused with one line of its own (after Ray's log) and exit code 2. The cluster is stopped
after the test (``ray stop`` stops every Ray process of this machine: the suite runs its Ray
tests one after another)."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from mpc.app.campaign import LOCAL_NODE_IP

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "scripts"))
import eval_terrain  # noqa: E402

RAY = str(Path(sys.executable).parent / "ray")
ARGS = ["--configs", "go2_hw", "--terrains", "step_down_8cm", "--seeds", "0", "1",
        "--duration", "0.3"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOCAL_NODE_IP, 0))
        return s.getsockname()[1]


@pytest.fixture
def cluster():
    """(address, environment with the token) of a one-node cluster on loopback. Its session
    folder is short: Ray's Unix sockets live there, and a socket path may not pass 107 bytes."""
    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(16)}
    address = f"{LOCAL_NODE_IP}:{free_port()}"
    subprocess.run([RAY, "start", "--head", f"--node-ip-address={LOCAL_NODE_IP}",
                    f"--port={address.split(':')[1]}", "--include-dashboard=false",
                    "--num-cpus=2", "--disable-usage-stats", f"--temp-dir={temp}"],
                   env=env, check=True, capture_output=True, timeout=180)
    try:
        yield address, env
    finally:
        subprocess.run([RAY, "stop", "--force"], env=env, capture_output=True, timeout=120)
        shutil.rmtree(temp, ignore_errors=True)


def test_a_campaign_given_a_cluster_address_runs_there_with_the_same_results(cluster, tmp_path):
    address, env = cluster
    run = subprocess.run([sys.executable, "scripts/eval_terrain.py", *ARGS, "--address", address,
                          "--out", str(tmp_path / "cluster")], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert eval_terrain.main([*ARGS, "--engine", "serial", "--out", str(tmp_path / "serial")]) == 0
    serial = sorted((tmp_path / "serial" / "cases").glob("*.json"))
    assert len(serial) == 2
    for path in serial:
        assert (tmp_path / "cluster" / "cases" / path.name).read_bytes() == path.read_bytes()

    wrong = {**env, "RAY_AUTH_TOKEN": secrets.token_hex(16)}
    refused = subprocess.run([sys.executable, "scripts/eval_terrain.py", *ARGS, "--address",
                              address, "--out", str(tmp_path / "refused")], cwd=ROOT, env=wrong,
                             capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines()[-1].startswith(
        f"eval_terrain: error: --address {address}: ")
    assert not list((tmp_path / "refused").glob("cases/*.json"))
