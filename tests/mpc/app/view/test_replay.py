"""mpc-replay on a virtual display: the recording is shown to its end, with the plan drawn."""

import numpy as np

from mpc.app.record.reader import load_run
from mpc.app.view import replay


def test_replay_shows_the_recording_to_its_end_with_the_planned_paths(display, trot_run):
    run = load_run(trot_run)
    player = replay.Replayer(run, speed=20.0)
    try:
        assert player.play() >= 1
        assert player.shown == len(run.series["state_time"]) - 1
        np.testing.assert_array_equal(player.data.qpos, run.series["state_qpos"][-1])
        np.testing.assert_allclose(player.data.mocap_pos[0, :2], [2.0, 0.0])
        # base and four foot paths, one line per segment between recorded knots
        knots = run.series["plan_base_path"].shape[1]
        assert player.handle.user_scn.ngeom == 5 * (knots - 1)
        assert player.handle.is_running()  # ended by the recording, not by the window
    finally:
        player.close()
    assert not player.handle.is_running()
    assert not any(t.is_alive() for t in player.window.render_threads)


def test_the_command_replays_at_the_chosen_speed_and_ends(display, trot_run):
    assert replay.main([str(trot_run), "--speed", "30"]) == 0


def test_an_old_run_directory_replays_without_planned_paths(display, old_run):
    player = replay.Replayer(load_run(old_run), speed=50.0)
    try:
        player.play()
        assert player.handle.user_scn.ngeom == 0
    finally:
        player.close()


def test_bad_input_gets_one_line_and_exit_code_2(tmp_path, monkeypatch, capsys, trot_run):
    assert replay.main([str(tmp_path / "missing")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert replay.main([str(trot_run), "--speed", "0"]) == 2
    assert "--speed must be > 0" in capsys.readouterr().err
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert replay.main([str(trot_run)]) == 2
    assert "needs a display" in capsys.readouterr().err


def test_the_replay_model_stands_on_the_runs_terrain():
    """A run on a ramp replays on the ramp (its ground only: loose slabs move unrecorded, and
    the recorded states keep the planning model's layout)."""
    import robots
    from mpc.app.view.replay import replay_model

    plain = replay_model(robots.info("a1"))
    ramp = replay_model(robots.info("a1"), [{"kind": "ramp", "slope": 10},
                                            {"kind": "slabs", "count": 3}])
    assert ramp.nq == plain.nq
    assert ramp.geom("terrain_piece1").size[0] > 0.7  # the slope's box
    assert "terrain_slab" not in " ".join(ramp.body(i).name for i in range(ramp.nbody))
