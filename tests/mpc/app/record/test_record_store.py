"""The incremental run record and the atomic writes: what a reader finds whenever the writer
is cut off (a sample cut in half, an event line cut short, a write that fails midway)."""

from __future__ import annotations

import json
import os
import time
import tracemalloc

import numpy as np
import pytest

from mpc.app.record.atomic import atomic_output, write_atomic
from mpc.app.record.store import BLOCK_BYTES, RecordWriter, read_record, write_npz


def state_row(i: int) -> dict:
    return {"time": 0.01 * i, "qpos": np.arange(3.0) + i, "contacts": np.array([i % 2, 1], bool),
            "feedback_steps": 3 * i, "base_path": np.full((2, 3), i, np.float32)}


def plan_row(i: int) -> dict:
    return {"time": 0.02 * i, "ok": i % 3 != 0, "cost": float(i), "simulations": i}


@pytest.fixture
def writer(tmp_path):
    w = RecordWriter(tmp_path / "incremental", {"term_names": ["a", "b"], "phase_names": ["x"]},
                     period=3600.0)  # flushed by the tests themselves
    yield w
    w.close()


def test_read_record_returns_the_series_timeseries_npz_holds(writer, tmp_path):
    for i in range(5):
        writer.add("state", state_row(i))
        writer.add("plan", plan_row(i))
    writer.event(0.03, "WARNING", "plant damping: tilt")
    writer.event(float("nan"), "ERROR", "a message with ünïcode")
    writer.flush()
    series = read_record(writer.folder)
    np.testing.assert_array_equal(series["state_time"], 0.01 * np.arange(5))
    assert series["state_qpos"].shape == (5, 3) and series["state_qpos"][4, 2] == 6.0
    assert series["state_contacts"].dtype == bool and series["state_contacts"].shape == (5, 2)
    assert series["state_feedback_steps"].dtype == np.int64
    assert series["state_base_path"].dtype == np.float32
    np.testing.assert_array_equal(series["plan_ok"], [False, True, True, False, True])
    np.testing.assert_array_equal(series["event_time"][:1], [0.03])
    assert np.isnan(series["event_time"][1])
    assert list(series["event_message"]) == ["plant damping: tilt", "a message with ünïcode"]
    assert list(series["term_names"]) == ["a", "b"]
    # the fixed plan series the first sample did not have stay absent, not invented
    assert "plan_mu" not in series

    # written as timeseries.npz: the same arrays, dtypes and shapes
    write_npz(writer.folder, tmp_path / "timeseries.npz")
    with np.load(tmp_path / "timeseries.npz") as z:
        assert sorted(z.files) == sorted(series)
        for k in z.files:
            assert z[k].dtype == series[k].dtype, k
            np.testing.assert_array_equal(z[k], series[k])


def test_a_cut_sample_and_a_cut_event_line_are_left_out(writer):
    for i in range(3):
        writer.add("state", state_row(i))
    writer.event(0.0, "WARNING", "whole")
    writer.flush()
    with open(writer.folder / "state.bin", "ab") as f:  # half a record, as a power loss leaves
        f.write(b"\x01" * 7)
    with open(writer.folder / "events.jsonl", "ab") as f:
        f.write(b'{"time": 0.5, "level": "ERR')
    series = read_record(writer.folder)
    assert len(series["state_time"]) == 3 and len(series["state_qpos"]) == 3
    assert list(series["event_message"]) == ["whole"]


def test_a_group_without_samples_gives_the_empty_fixed_series(writer, tmp_path):
    writer.add("state", state_row(0))
    writer.flush()
    write_npz(writer.folder, tmp_path / "timeseries.npz")
    with np.load(tmp_path / "timeseries.npz") as z:
        for k in ("plan_time", "plan_ok", "plan_timings", "event_time", "event_message"):
            assert len(z[k]) == 0, k


def test_samples_are_on_disk_after_each_flush_period(tmp_path):
    w = RecordWriter(tmp_path / "incremental", {}, period=0.05)
    try:
        for i in range(4):
            w.add("state", state_row(i))
        deadline = time.monotonic() + 10.0  # a loaded machine may delay the writer thread
        while time.monotonic() < deadline and len(read_record(w.folder)["state_time"]) < 4:
            time.sleep(0.02)
        assert len(read_record(w.folder)["state_time"]) == 4
        assert not w._queue  # nothing held in memory once written
    finally:
        w.close()


def test_a_sample_that_differs_from_the_first_is_recorded_without_the_odd_series(writer):
    writer.add("state", state_row(0))
    odd = state_row(1)
    odd["qpos"] = np.zeros(5)  # another shape
    del odd["contacts"]
    odd["new"] = 1.0
    writer.add("state", odd)
    writer.flush()
    series = read_record(writer.folder)
    assert len(series["state_time"]) == 2
    assert np.isnan(series["state_qpos"][1]).all()
    assert not series["state_contacts"][1].any()
    assert "state_new" not in series


def test_a_full_queue_drops_samples_and_counts_them(tmp_path):
    w = RecordWriter(tmp_path / "incremental", {}, period=3600.0, capacity=10)
    for i in range(25):
        w.add("state", state_row(i))
    assert len(w._queue) == 10 and w.dropped == 15
    w.close()
    assert len(read_record(w.folder)["state_time"]) == 10


def test_the_npz_is_copied_in_blocks(writer, tmp_path, monkeypatch):
    monkeypatch.setattr("mpc.app.record.store.BLOCK_BYTES", 150)  # 2 records, 1 to 9 events
    for i in range(11):
        writer.add("state", state_row(i))
        writer.event(i, "WARNING", "x" * i)
    writer.flush()
    write_npz(writer.folder, tmp_path / "timeseries.npz")
    with np.load(tmp_path / "timeseries.npz") as z:
        np.testing.assert_array_equal(z["state_qpos"], read_record(writer.folder)["state_qpos"])
        assert list(z["event_message"]) == ["x" * i for i in range(11)]


def test_a_record_in_a_used_folder_is_refused(writer):
    with pytest.raises(FileExistsError, match="another run's record"):
        RecordWriter(writer.folder, {})


def test_an_atomic_write_that_fails_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "summary.json"
    write_atomic(path, json.dumps({"old": True}))
    with pytest.raises(RuntimeError), atomic_output(path) as f:
        f.write(b'{"new": tr')
        raise RuntimeError("killed midway")
    assert json.loads(path.read_text()) == {"old": True}
    assert os.listdir(tmp_path) == ["summary.json"]


def test_timeseries_npz_cut_off_midway_is_not_left_behind(writer, tmp_path, monkeypatch):
    """The series are in the zip when the events fail: nothing of it may be found."""
    writer.add("state", state_row(0))
    writer.flush()

    def fail(*_args):
        raise OSError("no space left on device")

    monkeypatch.setattr("mpc.app.record.store._put_events", fail)
    with pytest.raises(OSError, match="no space"):
        write_npz(writer.folder, tmp_path / "timeseries.npz")
    assert sorted(os.listdir(tmp_path)) == ["incremental"]


def test_writing_timeseries_npz_takes_memory_of_a_block_not_of_the_run(tmp_path):
    """24 MB of planner iterations with their planned paths (1.2 kB each) become
    timeseries.npz holding no more than a few blocks in memory at any time."""
    w = RecordWriter(tmp_path / "incremental", {}, period=3600.0)
    row = {"time": 0.0, "cost": 1.0, "base_path": np.zeros((18, 3), np.float32),
           "foot_paths": np.zeros((4, 18, 3), np.float32), "timings": np.zeros(6)}
    for _ in range(20):
        for _ in range(1000):
            w.add("plan", dict(row))
        w.flush()
    w.close()
    assert (w.folder / "plan.bin").stat().st_size > 20e6
    tracemalloc.start()
    try:
        write_npz(w.folder, tmp_path / "timeseries.npz")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * BLOCK_BYTES, peak
    with np.load(tmp_path / "timeseries.npz") as z:
        assert z["plan_foot_paths"].shape == (20_000, 4, 18, 3)


def test_an_atomic_write_gives_the_file_the_permissions_any_new_file_gets(tmp_path):
    write_atomic(tmp_path / "summary.json", "{}")
    (tmp_path / "plain").write_text("{}")
    assert (tmp_path / "summary.json").stat().st_mode == (tmp_path / "plain").stat().st_mode


class FullDisk:
    """A file that takes half of a write, then fails as a full disk does."""

    def __init__(self, f):
        self.f = f

    def write(self, data: bytes) -> None:
        self.f.write(data[:len(data) // 2])
        self.f.flush()
        raise OSError(28, "No space left on device")

    def __getattr__(self, name):
        return getattr(self.f, name)


@pytest.mark.parametrize("full", ["state", "events"])
def test_a_write_that_fails_midway_leaves_no_cut_record_before_later_ones(writer, full):
    """What the failed flush took is lost; what comes after it reads whole."""
    for i in range(3):
        writer.add("state", state_row(i))
    writer.event(0.0, "WARNING", "first")
    writer.flush()
    writer._files[full] = FullDisk(writer._files[full])
    writer.event(0.1, "WARNING", "lost")  # written before the states (kept if they fail)
    writer.add("state", state_row(3))
    with pytest.raises(OSError, match="No space"):
        writer.flush()
    for i in range(6, 9):  # the disk has room again
        writer.add("state", state_row(i))
    writer.event(0.2, "WARNING", "third")
    writer.flush()
    series = read_record(writer.folder)
    kept = [0, 1, 2, 6, 7, 8]
    np.testing.assert_array_equal(series["state_feedback_steps"], 3 * np.array(kept))
    np.testing.assert_array_equal(series["state_qpos"][:, 0], kept)
    assert list(series["event_message"]) == (["first", "lost", "third"] if full == "state"
                                             else ["first", "third"])
