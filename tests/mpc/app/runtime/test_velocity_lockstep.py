"""A short closed-loop lockstep run of the A1 in velocity mode: it follows a forward command,
and the run directory records commanded against achieved velocity. The 20 s profiles of every
robot are in scripts/eval_velocity.py."""

import numpy as np
import pytest

from mpc.app.run import run


@pytest.mark.slow
def test_a1_tracks_a_forward_command(tmp_path):
    summary = run("configs/a1_velocity.yaml", [
        "runtime.mode=lockstep", "runtime.duration=2.5",
        "command.source.profile=[[0, 0, 0, 0], [0.2, 0.5, 0, 0]]"], out=tmp_path)
    assert not summary["fell"] and summary["failed_iterations"] == 0
    with np.load(tmp_path / "timeseries.npz") as npz:
        t, command, velocity = npz["state_time"], npz["state_command"], npz["state_velocity"]
    assert command.shape == velocity.shape == (len(t), 3)
    steady = t >= 1.5  # the command reached 0.5 m/s at 0.7 s
    assert np.all(command[steady] == [0.5, 0.0, 0.0])
    error = np.abs((velocity[steady] - command[steady]).mean(axis=0))
    assert error[0] < 0.1 and error[1] < 0.1 and error[2] < 0.15, error
