"""mpc-run: one-line errors with exit code 2 for bad input, never a traceback."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mpc.app import cli

REPO = Path(__file__).resolve().parents[3]


def mpc_run(*args, env=None, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "mpc.app.cli", *args], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=600)


def assert_usage_error(res, fragment):
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr + res.stdout
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, res.stderr
    assert fragment in lines[0]


def test_missing_config_file():
    assert_usage_error(mpc_run("configs/nope.yaml"), "config file not found: configs/nope.yaml")


def test_invalid_yaml(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("robot: a1\ntask: {name: quadruped_flat\n")
    assert_usage_error(mpc_run(str(p)), "invalid YAML")


def test_unknown_robot():
    assert_usage_error(mpc_run("configs/a1_trot.yaml", "--set", "robot=b2"),
                       "unknown robot 'b2'")


def test_unknown_backend():
    assert_usage_error(mpc_run("configs/a1_trot.yaml", "--backend", "magic"),
                       "unknown derivative backend 'magic'")


def test_bad_option_value():
    assert_usage_error(mpc_run("configs/a1_trot.yaml", "--duration", "soon"), "--duration")
    assert_usage_error(mpc_run("configs/a1_trot.yaml", "--mode", "fast"), "--mode")
    assert_usage_error(mpc_run("configs/a1_trot.yaml", "--set", "planner.horizon"),
                       "expected KEY=VALUE")


def test_viewer_without_display(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    res = mpc_run("configs/a1_trot.yaml", "--viewer", "--mode", "lockstep", "--duration",
                  "0.1", "--out", str(tmp_path / "run"), env=env)
    assert_usage_error(res, "--viewer needs a display")


def test_list_shows_shipped_configs_with_descriptions():
    res = mpc_run("--list")
    assert res.returncode == 0
    line = next(ln for ln in res.stdout.splitlines() if ln.startswith("a1_trot"))
    assert "A1" in line


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "mpc-run"
    assert script.exists(), "pip install must provide the mpc-run console script"


@pytest.fixture(scope="module")
def short_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "run"
    res = mpc_run("configs/a1_trot.yaml", "--mode", "lockstep", "--backend", "fd",
                  "--duration", "0.3", "--quiet", "--out", str(out))
    assert res.returncode == 0, res.stderr
    return out


SUMMARY_KEYS = ["robot", "task", "backend", "mode", "sim_time_s", "wall_time_s", "fell",
                "goal_distance_start_m", "goal_distance_end_m", "mean_cost",
                "planner_iterations", "planning_rate_hz", "iteration_ms_median",
                "iteration_ms_p95", "derivative_ms_median", "feedback_rate_hz",
                "fd_evaluations"]


def test_run_directory_contents(short_run):
    summary = json.loads((short_run / "summary.json").read_text())
    for key in SUMMARY_KEYS:
        assert key in summary
    assert summary["mode"] == "lockstep" and summary["backend"] == "fd"
    assert summary["sim_time_s"] == pytest.approx(0.3)
    assert summary["fd_evaluations"] > 0
    assert (short_run / "config.yaml").exists()
    import numpy as np

    series = np.load(short_run / "timeseries.npz")
    for key in ("state_time", "state_qpos", "state_qvel", "state_ctrl", "state_contacts",
                "plan_term_costs", "plan_timings"):
        assert key in series
    assert series["state_qpos"].shape[1] == 19


def test_velocity_mode_bad_input_is_one_line(tmp_path):
    assert_usage_error(mpc_run("configs/a1_trot.yaml", "--set", "task.mode=velocity"),
                       "task.mode velocity needs 'command.source.type'")
    assert_usage_error(mpc_run("configs/a1_velocity.yaml", "--set", "command.source.type=joy"),
                       "unknown command source 'joy'")
    assert_usage_error(mpc_run("configs/a1_velocity.yaml", "--set",
                               "command.source.profile=[[0, 1]]"), "profile")
    assert_usage_error(mpc_run("configs/a1_velocity.yaml", "--set",
                               "command.source={type: keyboard}", "--duration", "0.1"),
                       "keyboard needs --viewer")
    assert_usage_error(mpc_run("configs/a1_velocity.yaml", "--set",
                               "command.source={type: unitree_remote}", "--mode", "lockstep",
                               "--duration", "0.1", "--out", str(tmp_path / "r")),
                       "needs a Unitree robot plant")


def test_without_a_viewer_glfw_is_not_loaded(tmp_path):
    """Nothing is drawn without --viewer, so MuJoCo is told not to load GLFW, whose import
    probes each library in a Python subprocess: a Ctrl-C at that moment printed that
    subprocess's traceback (and the link process inherits the setting)."""
    env = {k: v for k, v in os.environ.items() if k != "MUJOCO_GL"}
    probe = ("import sys\nfrom mpc.app.cli import main\n"
             f"code = main(['configs/a1_trot.yaml', '--mode', 'lockstep', '--duration', '0.02', "
             f"'--quiet', '--out', {str(tmp_path / 'run')!r}])\n"
             "print(code, 'glfw' in sys.modules)")
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         cwd=REPO, env=env, timeout=600)
    assert res.stdout.strip().splitlines()[-1] == "0 False", res.stdout + res.stderr


#: mpc-run's entry point as its console script calls it (no arguments), after ``setup``.
AS_PROGRAM = ("import sys\n{setup}\nfrom mpc.app.cli import main\n"
              "sys.argv = ['mpc-run', *{args!r}]\nmain()\n")


def run_as_program(setup: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", AS_PROGRAM.format(setup=setup, args=args)],
                          capture_output=True, text=True, cwd=REPO, timeout=120)


def test_mpc_run_does_not_wait_for_busy_threads_at_its_exit():
    """A Ctrl-C while a first run compiles leaves pool workers compiling kernels that will
    never be used; the interpreter's exit would join them (over 100 s was seen)."""
    setup = ("import time\nfrom concurrent.futures import ThreadPoolExecutor\n"
             "ThreadPoolExecutor(1).submit(time.sleep, 60)")
    start = time.monotonic()
    res = run_as_program(setup, "--list")
    assert res.returncode == 0 and "a1_trot" in res.stdout, res.stderr
    assert time.monotonic() - start < 30


def test_the_exit_status_is_mpc_runs_own():
    """CPython exits by SIGINT after a KeyboardInterrupt that passed through exec()'d code
    (numba's generated code while kernels compile), even one the program caught: mpc-run
    ends with its own status."""
    setup = "try:\n    exec('raise KeyboardInterrupt')\nexcept KeyboardInterrupt:\n    pass"
    res = run_as_program(setup, "configs/nope.yaml")
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert res.stderr.strip() == "mpc-run: error: config file not found: configs/nope.yaml"


def test_a_signal_while_an_extension_module_initializes_is_an_interrupt(monkeypatch, capsys):
    """A SIGINT while ``import mujoco`` initializes its extension surfaces as ImportError
    ("initialization failed") caused by the KeyboardInterrupt: the signal storm's run 1 in 6
    ended with that traceback and exit code 1."""
    def importing(argv):
        try:
            raise KeyboardInterrupt("SIGINT")
        except KeyboardInterrupt as e:
            raise ImportError("initialization failed") from e

    monkeypatch.setattr(cli, "_main", importing)
    assert cli.main(["a1_trot"]) == cli.EXIT_INTERRUPTED
    assert capsys.readouterr().err == "mpc-run: interrupted by SIGINT before the run started\n"

    def broken(argv):
        raise ImportError("no module named x")

    monkeypatch.setattr(cli, "_main", broken)
    with pytest.raises(ImportError, match="no module named x"):
        cli.main(["a1_trot"])
