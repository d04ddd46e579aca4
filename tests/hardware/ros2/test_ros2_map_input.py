"""Terrain maps from a ROS 2 topic over real DDS on loopback (``map_input.source.type: ros2``):
a ``legged_mpc_msgs/msg/HeightMap`` serialized by rosbags from the message definition (as a
ROS 2 node would send it, not by this project's code) reaches the planning model's height
field; a bad one is one warning line and the last good map stays."""

from __future__ import annotations

import logging
import time

import numpy as np
import pytest
from rosbags.typesys import Stores, get_typestore
from rosbags.typesys.store import Typestore
from unitree_helpers import wait_for

from hardware.ros2 import dds
from hardware.ros2.map_input import HeightMapMsg, Ros2MapSource
from mpc.app.assembly import build_planner, build_task
from mpc.app.config import load_config
from mpc.app.runtime.map_updates import MapUpdates
from mpc.tasks.map_ground import MAP_GEOM
from mpc.tasks.terrain_map import stairs

#: The message definition as docs/terrain.md gives it to ROS 2 users.
HEIGHT_MAP_MSG = """
std_msgs/Header header
float64 resolution
float64 origin_x
float64 origin_y
uint32 rows
uint32 cols
float64[] heights
"""
NAME = "legged_mpc_msgs/msg/HeightMap"


@pytest.fixture(scope="module")
def store() -> Typestore:
    from rosbags.typesys import get_types_from_msg

    s = get_typestore(Stores.ROS2_HUMBLE)
    s.register(get_types_from_msg(HEIGHT_MAP_MSG, NAME))
    return s


def ros_bytes(store, heights: np.ndarray, resolution: float, origin, rows: int,
              cols: int) -> bytes:
    T = store.types
    header = T["std_msgs/msg/Header"](T["builtin_interfaces/msg/Time"](1, 2), "odom")
    msg = T[NAME](header, resolution, origin[0], origin[1], rows, cols,
                  np.asarray(heights, dtype=np.float64))
    return bytes(store.serialize_cdr(msg, NAME))


@pytest.fixture(scope="module")
def planning():
    cfg = load_config("configs/go2_hw_stairs.yaml", [
        "plant={type: sim}", "task.map=null", "map_input.source={type: ros2}",
        "map_input.size=[3.0, 1.5]", "map_input.heights=[0.0, 0.8]"])
    task = build_task(cfg)
    planner = build_planner(cfg, task)
    yield task, planner
    planner.close()


@pytest.fixture
def updates(planning, ros2_settings):
    task, planner = planning
    source = Ros2MapSource(ros2=ros2_settings)
    dp = dds.participant(ros2_settings.domain_id, "lo")
    writer = dds.Writer(dp, "/mpc/height_map", HeightMapMsg)
    assert wait_for(lambda: source.reader.matched() >= 1, 5.0)
    yield MapUpdates(source, task, planner), writer
    source.close()


def field(model) -> np.ndarray:
    f = model.hfield(MAP_GEOM).id
    n = model.hfield_nrow[f] * model.hfield_ncol[f]
    return model.hfield_data[model.hfield_adr[f]:model.hfield_adr[f] + n].copy()


def apply_until_changed(upd: MapUpdates, qpos, timeout: float = 3.0) -> float | None:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if upd.apply(qpos):
            return (time.monotonic() - start) * 1e3
        time.sleep(0.005)
    return None


def test_a_ros2_height_map_reaches_the_planning_models_field(updates, store):
    upd, writer = updates
    model = upd.planner.model
    qpos = model.key_qpos[0].copy()
    flight = stairs(rise=0.12)
    rows, cols = flight.shape
    writer.write_bytes(ros_bytes(store, flight.heights.ravel(), flight.resolution,
                                 flight.origin, rows, cols))
    ms = apply_until_changed(upd, qpos)
    assert ms is not None and ms < 500.0, ms
    window = upd.task.map_ground.window
    xs = window.origin[0] + 0.05 * np.arange(window.shape[1])
    assert np.allclose(window.heights[0], flight.height(xs, window.origin[1]), atol=1e-12)
    assert np.allclose(field(model).reshape(window.shape) * 0.8, window.heights, atol=1e-6)
    assert upd.stats()["accepted"] == 1
    print(f"map applied {ms:.1f} ms after writing")


def test_a_ros2_map_of_the_wrong_length_is_one_line_and_the_last_good_map_stays(
        updates, store, caplog):
    upd, writer = updates
    model = upd.planner.model
    qpos = model.key_qpos[0].copy()
    flight = stairs(rise=0.08)
    rows, cols = flight.shape
    writer.write_bytes(ros_bytes(store, flight.heights.ravel(), 0.05, flight.origin, rows,
                                 cols))
    assert apply_until_changed(upd, qpos) is not None
    good = field(model)
    with caplog.at_level(logging.WARNING, logger="hardware.ros2.map_input"):
        writer.write_bytes(ros_bytes(store, np.zeros(rows * cols - 1), 0.05, flight.origin,
                                     rows, cols))
        assert wait_for(lambda: upd.source.refused.total() == 1, 3.0)
        assert not upd.apply(qpos)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1, lines
    assert f"{rows * cols - 1} heights for rows x cols = {rows} x {cols}" in lines[0]
    assert np.array_equal(field(model), good)
    assert upd.stats()["refused"] == {"invalid": 1}


def test_the_projects_message_has_the_bytes_of_the_ros2_definition(store):
    """What a ROS 2 node sends is what this project's type sends and reads, byte for byte."""
    from hardware.ros2 import cdr
    from hardware.ros2.map_input import message
    from hardware.ros2.messages import Header, Time

    flight = stairs(rise=0.12, width=0.5)
    rows, cols = flight.shape
    ours = message(flight)
    ours.header = Header(Time(1, 2), "odom")
    theirs = ros_bytes(store, flight.heights.ravel(), flight.resolution, flight.origin, rows,
                       cols)
    assert cdr.encode(ours) == theirs
    back = HeightMapMsg.deserialize(theirs)
    assert (back.rows, back.cols, back.resolution) == (rows, cols, flight.resolution)
    assert np.array_equal(np.asarray(back.heights), flight.heights.ravel())
