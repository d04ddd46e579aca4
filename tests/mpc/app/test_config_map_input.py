"""The ``map_input`` section (maps received while running): a bad option is one line naming
the key and exit code 2 from ``mpc-run``, before anything is built."""

from __future__ import annotations

import pytest

from mpc.app import cli
from mpc.app.config import load_config

LCM = "map_input.source={type: lcm, lcm_url: 'memq://'}"


@pytest.mark.parametrize("overrides, named", [
    ([LCM], "'map_input.source' is set but task.ground is 'level' (set task.ground: map)"),
    (["task.ground=map", "map_input.source={type: smoke}"],
     "map_input.source.type: unknown map source 'smoke'; available: lcm, ros2"),
    (["task.ground=map", "map_input.source={channel: X}"], "'map_input.source' needs a 'type'"),
    (["task.ground=map", "map_input.source={type: lcm, chanel: X}"],
     "unknown key 'map_input.source.chanel' (did you mean 'channel'?)"),
    (["task.ground=map", "map_input.source={type: ros2, topic: no_slash}"],
     "'no_slash' is not a ROS 2 topic name"),
    (["task.ground=map", LCM, "map_input.size=[0.0, 2.0]"], "'map_input.size[0]' must be > 0.0"),
    (["task.ground=map", LCM, "map_input.size=[2.0]"],
     "'map_input.size' must be a list of 2 numbers"),
    (["task.ground=map", LCM, "map_input.resolution=0"], "'map_input.resolution' must be > 0.0"),
    (["task.ground=map", LCM, "map_input.heights=[1.0, 0.0]"],
     "window heights must be [low, high] with low < high"),
    (["task.ground=map", LCM, "map_input.floor=2.0"],
     "window floor must lie within its heights [-0.5, 1.0], got 2.0"),
    (["task.ground=map", LCM, "map_input.size=[50.0, 50.0]", "map_input.resolution=0.01"],
     "window has 25010001 samples, at most 1000000"),
    (["task.ground=map", LCM, "map_input.sise=[1, 1]"],
     "unknown key 'map_input.sise' (did you mean 'size'?)"),
])
def test_a_bad_map_input_option_is_one_line_and_exit_2(overrides, named, tmp_path, capsys):
    args = ["a1_trot", "--mode", "lockstep", "--duration", "0.01", "--out", str(tmp_path / "r")]
    for item in overrides:
        args += ["--set", item]
    code = cli.main(args)
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and named in err, err
    assert "Traceback" not in err


def test_a_map_input_config_describes_its_window():
    cfg = load_config("configs/go2_hw_stairs.yaml", [
        "map_input.source={type: lcm, channel: MAP}", "map_input.size=[3.0, 1.5]",
        "map_input.ahead=0.6"])
    assert cfg.map_input.source == {"type": "lcm", "channel": "MAP"}
    window = cfg.map_input.window()
    assert (window.length, window.width, window.ahead, window.shape) == (3.0, 1.5, 0.6,
                                                                        (31, 61))
    assert load_config("configs/go2_hw_stairs.yaml").map_input.source == {}
