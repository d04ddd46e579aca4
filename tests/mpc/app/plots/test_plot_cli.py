"""mpc-plot: figures and the report written; bad input and a missing matplotlib get one line
and exit code 2."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mpc.app.plots import cli
from mpc.app.plots.figures import FIGURES

ROOT = Path(__file__).resolve().parents[4]


def test_writes_a_png_per_figure_and_the_report(trot_run, damped_run, tmp_path, capsys):
    assert cli.main([str(trot_run), str(damped_run), "--out", str(tmp_path)]) == 0
    for name in FIGURES:
        assert (tmp_path / f"{name}.png").read_bytes().startswith(b"\x89PNG")
    assert (tmp_path / "report.html").stat().st_size > 10_000
    assert str(tmp_path / "report.html") in capsys.readouterr().out


def test_one_run_writes_into_its_own_plots_folder(old_run):
    assert cli.main([str(old_run)]) == 0
    assert (old_run / "plots" / "gait.png").is_file()


def bad_npz(tmp_path):
    (tmp_path / "config.yaml").write_text("robot: a1\n")
    (tmp_path / "timeseries.npz").write_bytes(b"not a zip")
    return tmp_path


@pytest.mark.parametrize("make, expected", [
    (lambda p: p / "missing", "no such directory"),
    (lambda p: p, "not a run directory (no timeseries.npz or config.yaml)"),
    (bad_npz, "timeseries.npz: unreadable"),
])
def test_bad_input_gets_one_line_and_exit_code_2(tmp_path, capsys, make, expected):
    assert cli.main([str(make(tmp_path))]) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1


def test_a_run_without_states_is_named(tmp_path, capsys):
    (tmp_path / "config.yaml").write_text("robot: a1\n")
    np.savez(tmp_path / "timeseries.npz", state_time=np.array([]))
    assert cli.main([str(tmp_path)]) == 2
    assert "no state samples recorded" in capsys.readouterr().err


def test_missing_matplotlib_gets_the_install_hint(trot_run):
    # a fresh interpreter in which importing matplotlib fails, as where it is not installed
    code = ("import sys; sys.modules['matplotlib'] = None; from mpc.app.plots.cli import main; "
            f"sys.exit(main([{str(trot_run)!r}]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert done.returncode == 2
    assert done.stderr == cli.HINT + "\n"
    assert not (trot_run / "plots").exists()
