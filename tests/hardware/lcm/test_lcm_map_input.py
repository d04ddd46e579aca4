"""Terrain maps over LCM (``map_input.source.type: lcm``) on udpm:// (multicast on loopback,
ttl 0): a map published by another LCM instance reaches the planning model's height field at
the next application between plans; a bad message (NaN, a wrong length, a resolution of zero)
is one warning line naming what is wrong and never reaches the planner."""

from __future__ import annotations

import logging
import threading
import time

import lcm
import numpy as np
import pytest
from unitree_helpers import wait_for

from hardware.lcm.lcm_types import height_map_t
from hardware.lcm.map_input import LcmMapSource, encode
from mpc.app.assembly import build_planner, build_task
from mpc.app.config import load_config
from mpc.app.runtime.map_updates import MapUpdates
from mpc.tasks.map_ground import MAP_GEOM
from mpc.tasks.terrain_map import HeightMap, stairs

#: How soon (ms) a published map must be in the planning model's field, applied every 5 ms
#: (a planner at 200 Hz; the stairs configs plan at 15-40 Hz, which adds their period).
DEADLINE_MS = 250.0
FLIGHT = stairs(rise=0.12)


@pytest.fixture(scope="module")
def planning():
    """The Go2 stairs config's task and planner with a map input (a 3 m x 1.5 m window)."""
    cfg = load_config("configs/go2_hw_stairs.yaml", [
        "plant={type: sim}", "task.map=null", "map_input.source={type: lcm}",
        "map_input.size=[3.0, 1.5]", "map_input.heights=[0.0, 0.8]"])
    task = build_task(cfg)
    planner = build_planner(cfg, task)
    yield task, planner
    planner.close()


@pytest.fixture
def updates(planning, udpm_url, request):
    """A fresh LCM map source on a channel of the test's own, applied to the task."""
    task, planner = planning
    channel = f"MAP_{request.node.name[-20:]}"
    source = LcmMapSource(udpm_url, channel)
    yield MapUpdates(source, task, planner), lcm.LCM(udpm_url), channel
    source.close()


def field(model) -> np.ndarray:
    f = model.hfield(MAP_GEOM).id
    n = model.hfield_nrow[f] * model.hfield_ncol[f]
    return model.hfield_data[model.hfield_adr[f]:model.hfield_adr[f] + n].copy()


def apply_until_changed(upd: MapUpdates, qpos, timeout: float = 2.0) -> float | None:
    """Apply every 5 ms (as between plans) until the terrain changes; the ms it took."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if upd.apply(qpos):
            return (time.monotonic() - start) * 1e3
        time.sleep(0.005)
    return None


def test_a_published_map_reaches_the_planning_models_field_in_time(updates):
    upd, tx, channel = updates
    model = upd.planner.model
    qpos = model.key_qpos[0].copy()
    upd.apply(qpos)  # the window placed at the start
    before = field(model)
    took = []
    for rise in (0.12, 0.08):
        flight = stairs(rise=rise)
        sender = threading.Thread(target=tx.publish, args=(channel, encode(flight)))
        sender.start()
        ms = apply_until_changed(upd, qpos)
        sender.join()
        assert ms is not None and ms < DEADLINE_MS, ms
        took.append(ms)
        window = upd.task.map_ground.window
        xs = window.origin[0] + 0.05 * np.arange(window.shape[1])
        assert np.allclose(window.heights[0], flight.height(xs, window.origin[1]), atol=1e-12)
        assert np.allclose(field(model).reshape(window.shape) * 0.8, window.heights, atol=1e-6)
    assert not np.array_equal(field(model), before)
    stats = upd.stats()
    assert stats["accepted"] == 2 and stats["applied"] == 2 and stats["refused"] == {}
    print(f"map applied {took[0]:.1f} ms, {took[1]:.1f} ms after publishing")


def bad_message(what: str) -> bytes:
    msg = height_map_t()
    msg.origin_x, msg.origin_y, msg.resolution = -1.0, -1.0, 0.05
    msg.rows, msg.cols = 4, 5
    heights = np.full(20, 0.3)
    if what == "nan":
        heights[7] = np.nan
    elif what == "length":
        heights = heights[:19]
    elif what == "resolution":
        msg.resolution = 0.0
    msg.heights = heights.tolist()
    msg.num_heights = len(msg.heights)
    return msg.encode()


@pytest.mark.parametrize("what, named", [
    ("nan", "heights must be finite: 1 NaN or inf, the first at row 1, col 2"),
    ("length", "19 heights for rows x cols = 4 x 5 = 20"),
    ("resolution", "resolution must be > 0, got 0.0")])
def test_a_bad_map_is_one_line_and_the_last_good_map_stays(updates, what, named, caplog):
    upd, tx, channel = updates
    model = upd.planner.model
    qpos = model.key_qpos[0].copy()
    tx.publish(channel, encode(FLIGHT))
    assert wait_for(lambda: upd.source.accepted == 1, 2.0)
    upd.apply(qpos)  # the good map (the window may hold it from an earlier test already)
    assert np.array_equal(upd.task.map_ground.window.source.heights, FLIGHT.heights)
    good, good_map = field(model), upd.task.map_ground.map
    with caplog.at_level(logging.WARNING, logger="hardware.lcm.map_input"):
        tx.publish(channel, bad_message(what))
        deadline = time.monotonic() + 2.0
        while upd.source.refused.total() == 0 and time.monotonic() < deadline:
            time.sleep(0.005)
        for _ in range(20):  # plans go on: the bad map never reaches the planner
            assert not upd.apply(qpos)
            time.sleep(0.005)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and named in lines[0] and "invalid" in lines[0], lines
    assert np.array_equal(field(model), good)
    assert upd.task.map_ground.map is good_map
    assert upd.stats()["refused"] == {"invalid": 1}


def test_bytes_that_are_no_map_are_refused_and_receiving_goes_on(updates):
    upd, tx, channel = updates
    qpos = upd.planner.model.key_qpos[0].copy()
    tx.publish(channel, b"\x00" * 40)
    tx.publish(channel, encode(HeightMap(np.full((3, 3), 0.05), 0.5, (-1.0, -1.0))))
    assert apply_until_changed(upd, qpos) is not None
    assert upd.stats()["refused"] == {"undecodable": 1}
    assert upd.task.map_ground.map.height(0.0, 0.0) == pytest.approx(0.05)


def test_a_terrain_change_clears_a_derivative_cache(udpm_url):
    """The wasp backend reuses derivatives across plans: on another ground they are another
    ground's, so a map that changes the terrain clears its cache (a map that changes nothing
    does not)."""
    cfg = load_config("configs/go2_hw_stairs.yaml", [
        "plant={type: sim}", "task.map=null", "map_input.source={type: lcm}",
        "map_input.size=[3.0, 1.5]", "map_input.heights=[0.0, 0.8]",
        "derivatives.backend=wasp"])
    task = build_task(cfg)
    planner = build_planner(cfg, task)
    source = LcmMapSource(udpm_url, "MAP_WASP")
    try:
        upd = MapUpdates(source, task, planner)
        model = planner.model
        qpos, qvel, act = model.key_qpos[0].copy(), np.zeros(model.nv), np.zeros(model.na)
        planner.reset(0.0, qpos, qvel, act)
        planner.iterate(0.0, qpos, qvel, act)
        cache = planner.provider.cache
        assert cache.filled.any()
        assert not upd.apply(qpos)  # nothing new: the cache stays
        assert cache.filled.any()
        lcm.LCM(udpm_url).publish("MAP_WASP", encode(FLIGHT))
        assert apply_until_changed(upd, qpos) is not None
        assert not cache.filled.any()
    finally:
        source.close()
        planner.close()
