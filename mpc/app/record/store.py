"""The run record on disk while the run goes on: what a run killed at any moment leaves.

The public record of a run (``timeseries.npz``, ``summary.json``, ``events.log``) is complete
once the run has closed. While it runs, the recorder appends its samples to ``incremental/``
in the run directory, from a thread of its own once every :data:`FLUSH_PERIOD` (the control
threads only queue them), each file flushed and fsync'ed:

    incremental/schema.json   the fields of each group and the name lists (rewritten
                              atomically when a group gets its first sample)
    incremental/state.bin     state samples: fixed-size records (the numpy structured dtype
                              that the schema describes), appended
    incremental/plan.bin      planner iterations, likewise
    incremental/events.jsonl  warnings and errors, one JSON object per line

A record holds one sample of every series of its group, so the series of a group always
have the same length, and a record cut short (a power loss; a kill cannot cut a write) is
recognised by the file's length and left out, as is a cut last line of the events. A write
that fails (a full disk) is cut back to the last whole record: that second's samples are lost
(logged once), the ones after it are recorded whole. Readers
call :func:`read_record`, which returns the arrays ``timeseries.npz`` holds, so a killed run
reads like a closed one up to its last flush; at close :func:`write_npz` turns the folder into
``timeseries.npz``, one series at a time, so memory does not grow with the run's length.

Why this form: a fixed number of files whatever the length of the run (a chunk file per
second would leave 86 400 files a day), appends that never rewrite what is on disk, samples
that are whole or absent, and nothing beyond numpy and the standard library.

The fields of a group are those of its first sample (a session gives each optional series
at every report or never). A later sample that lacks one gets NaN (False, 0) there and one
with a field of another shape or an unknown one is recorded without it; either is logged
once per field.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import threading
import zipfile
from collections import deque
from pathlib import Path
from typing import BinaryIO

import numpy as np

from mpc.app.record.atomic import atomic_output, write_atomic

log = logging.getLogger(__name__)

#: The folder in the run directory.
INCREMENTAL = "incremental"
#: Seconds of wall time between flushes: what a killed run can lose.
FLUSH_PERIOD = 1.0
#: Series that timeseries.npz always holds (empty arrays when the group has no sample).
GROUPS = {"state": ("time", "qpos", "qvel", "ctrl", "contacts"),
          "plan": ("time", "ok", "cost", "stage_cost", "term_costs", "timings", "mu", "alpha",
                   "simulations", "wall_time")}
FORMAT = "legged-mpc incremental run record"
VERSION = 1
#: Bytes of records (or events) copied at a time when timeseries.npz is written.
BLOCK_BYTES = 4 << 20


class RecordWriter:
    """Queues samples (any thread, O(1)) and appends them to ``folder`` every ``period``
    seconds from a writer thread; at most ``capacity`` samples wait (a disk slower than the
    run drops the excess, counted in :attr:`dropped` and logged once).

    ``folder`` must not exist or be empty (a folder that :func:`mpc.run.claim_run_dir` made
    for this run): one that holds a record is another run's, and is refused."""

    def __init__(self, folder: Path, names: dict[str, list[str]], period: float = FLUSH_PERIOD,
                 capacity: int = 20_000):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        if any(self.folder.iterdir()):
            raise FileExistsError(f"{self.folder} holds another run's record")
        self.names = {k: [str(n) for n in v] for k, v in names.items()}
        self.period = float(period)
        self.capacity = int(capacity)
        #: Fields per group: (name, dtype string, shape), from the group's first sample.
        self.fields: dict[str, list[tuple[str, str, tuple[int, ...]]]] = {}
        self._dtypes: dict[str, np.dtype] = {}
        self._files: dict[str, BinaryIO] = {}
        #: Bytes of whole records (lines) in each file, as of the last flush.
        self._whole: dict[str, int] = {}
        self._queue: deque[tuple[str, object]] = deque()
        self.dropped = 0
        self._warned: set[tuple[str, str]] = set()
        self._write_schema()
        self._file("events")  # the files stay open for the whole run (closed in close())
        self._flush_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="run-record", daemon=True)
        self._thread.start()

    # --- any thread ---------------------------------------------------------------------------
    def add(self, group: str, row: dict[str, object]) -> None:
        """Queue one sample of ``group`` (``row``: series name to value; the writer owns it)."""
        self._put(group, row)

    def event(self, time: float, level: str, message: str) -> None:
        self._put("events", (time, level, message))

    def _put(self, group: str, item: object) -> None:
        if len(self._queue) >= self.capacity:
            self.dropped += 1
            if self.dropped == 1:
                self._warn_once(group, "dropped", "run record: the disk does not keep up, "
                                "samples are dropped (the count is logged at close)")
            return
        self._queue.append((group, item))

    # --- the writer ---------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.wait(self.period):
            try:
                self.flush()
            except Exception:  # e.g. a full disk: keep the run going, say so once
                if ("flush", "error") not in self._warned:
                    self._warned.add(("flush", "error"))
                    log.exception("run record: writing %s failed", self.folder)

    def flush(self) -> None:
        """Append what is queued, then flush and fsync the files written."""
        with self._flush_lock:
            items = [self._queue.popleft() for _ in range(len(self._queue))]
            groups: dict[str, list] = {}
            for group, item in items:
                groups.setdefault(group, []).append(item)
            written = []
            for group, rows in groups.items():
                if group == "events":
                    data = b"".join(json.dumps({"time": _finite(t), "level": lv, "message": m},
                                               ensure_ascii=False).encode() + b"\n"
                                    for t, lv, m in rows)
                else:
                    data = self._records(group, rows).tobytes()
                f = self._file(group)
                try:
                    f.write(data)
                    f.flush()
                except OSError:  # e.g. a full disk: no cut record may stay before later ones
                    self._truncate(group)
                    raise
                written.append(group)
            for group in written:
                f = self._files[group]
                os.fsync(f.fileno())
                self._whole[group] = f.tell()

    def close(self, timeout: float = 30.0) -> None:
        """Stop the writer thread after a last flush; the files stay. Raises OSError if the
        writer is still stuck in a write after ``timeout`` seconds (a failing disk)."""
        self._stop.set()
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise OSError(f"run record: the writer of {self.folder} did not finish")
        try:
            self.flush()
        finally:
            for f in self._files.values():
                f.close()
            if self.dropped:
                log.error("run record: %d samples were dropped (the disk did not keep up)",
                          self.dropped)

    def _path(self, group: str) -> Path:
        return self.folder / ("events.jsonl" if group == "events" else f"{group}.bin")

    def _file(self, group: str) -> BinaryIO:
        if group not in self._files:
            self._files[group] = open(self._path(group), "ab")  # noqa: SIM115
            self._whole.setdefault(group, self._files[group].tell())
        return self._files[group]

    def _truncate(self, group: str) -> None:
        """Cut ``group``'s file back to its whole records (after a failed write); it is
        opened again at the next flush."""
        f = self._files.pop(group)
        with contextlib.suppress(OSError):
            f.close()  # the part of the write still buffered may fail again: dropped
        with contextlib.suppress(OSError):
            os.truncate(self._path(group), self._whole[group])

    def _records(self, group: str, rows: list[dict]) -> np.ndarray:
        """``rows`` as records of the group's dtype (fixed by its first sample)."""
        if group not in self._dtypes:
            first = {k: np.asarray(v) for k, v in rows[0].items()}
            self.fields[group] = [(k, v.dtype.str, v.shape) for k, v in first.items()]
            self._dtypes[group] = _dtype(self.fields[group])
            self._write_schema()  # before the first record: a reader needs it to read them
        dtype = self._dtypes[group]
        out = np.zeros(len(rows), dtype)
        for name in dtype.names:
            column = out[name]
            if column.dtype.kind in "fc":
                column[...] = np.nan
            try:
                column[...] = [row[name] for row in rows]
            except (KeyError, ValueError, TypeError):  # the slow way, sample by sample
                for i, row in enumerate(rows):
                    try:
                        column[i] = row[name]
                    except (KeyError, ValueError, TypeError):
                        self._warn_once(group, name, f"run record: a {group} sample without "
                                        f"series {name!r} of its first sample's shape")
        for row in rows:
            if len(row) != len(dtype.names) or any(k not in dtype.fields for k in row):
                for k in row:
                    if k not in dtype.fields:
                        self._warn_once(group, k, f"run record: series {group}_{k} started "
                                        "after the first sample; not recorded")
        return out

    def _warn_once(self, group: str, name: str, message: str) -> None:
        if (group, name) not in self._warned:
            self._warned.add((group, name))
            log.error("%s", message)

    def _write_schema(self) -> None:
        write_atomic(self.folder / "schema.json", json.dumps({
            "format": FORMAT, "version": VERSION, "flush_period_s": self.period,
            "groups": {g: [[n, dt, list(shape)] for n, dt, shape in f]
                       for g, f in self.fields.items()},
            "names": self.names}, indent=1) + "\n")


def _dtype(fields) -> np.dtype:
    return np.dtype([(str(n), dt, tuple(shape)) for n, dt, shape in fields])


def _finite(value: float) -> float | None:
    return value if np.isfinite(value) else None


# --- reading ----------------------------------------------------------------------------------
def _schema(folder: Path) -> dict:
    schema = json.loads((folder / "schema.json").read_text())
    if schema.get("format") != FORMAT or schema.get("version") != VERSION:
        raise ValueError(f"{folder}: not a version {VERSION} incremental run record")
    return schema


def _groups(folder: Path, schema: dict):
    """(group, dtype or None, path, whole records) for the fixed groups and any other."""
    for group in dict.fromkeys([*GROUPS, *schema["groups"]]):
        fields = schema["groups"].get(group)
        path = folder / f"{group}.bin"
        if not fields:
            yield group, None, path, 0
            continue
        dtype = _dtype(fields)
        size = path.stat().st_size if path.is_file() else 0
        yield group, dtype, path, size // dtype.itemsize


def _event_lines(folder: Path):
    """(time, level, message) of each whole line of events.jsonl."""
    path = folder / "events.jsonl"
    if not path.is_file():
        return
    with open(path, "rb") as f:
        for line in f:
            if not line.endswith(b"\n"):
                return  # cut by a power loss
            try:
                e = json.loads(line)
            except ValueError:
                return
            yield (np.nan if e["time"] is None else float(e["time"]), str(e["level"]),
                   str(e["message"]))


def read_record(folder: str | Path) -> dict[str, np.ndarray]:
    """The arrays of ``timeseries.npz`` (same keys, dtypes and meaning) from an incremental
    record, up to its last whole sample. Raises OSError or ValueError if it cannot."""
    folder = Path(folder)
    schema = _schema(folder)
    series: dict[str, np.ndarray] = {}
    for group, dtype, path, n in _groups(folder, schema):
        if dtype is None:
            series.update({f"{group}_{k}": np.array([]) for k in GROUPS.get(group, ())})
            continue
        data = np.fromfile(path, dtype, count=n) if n else np.zeros(0, dtype)
        series.update({f"{group}_{k}": np.ascontiguousarray(data[k]) for k in dtype.names})
    events = list(_event_lines(folder))
    series["event_time"] = np.array([e[0] for e in events], dtype=float)
    series["event_level"] = np.array([e[1] for e in events], dtype=str)
    series["event_message"] = np.array([e[2] for e in events], dtype=str)
    series.update({k: np.array(v) for k, v in schema["names"].items()})
    return series


# --- timeseries.npz ---------------------------------------------------------------------------
def write_npz(folder: str | Path, dest: str | Path) -> None:
    """Write the incremental record in ``folder`` as ``dest`` (``timeseries.npz``, as
    ``np.savez_compressed`` writes it), atomically, copying one series and about
    :data:`BLOCK_BYTES` of records at a time."""
    folder = Path(folder)
    schema = _schema(folder)
    with atomic_output(dest) as f, zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED,
                                                   allowZip64=True) as zf:
        for group, dtype, path, n in _groups(folder, schema):
            if dtype is None:
                for k in GROUPS.get(group, ()):
                    _put(zf, f"{group}_{k}", np.array([]))
                continue
            for name in dtype.names:
                sub = dtype[name]
                with zf.open(f"{group}_{name}.npy", "w", force_zip64=True) as entry, \
                        open(path, "rb") as src:
                    _header(entry, sub.base, (n, *sub.shape))
                    block = max(1, BLOCK_BYTES // dtype.itemsize)
                    for start in range(0, n, block):
                        chunk = np.fromfile(src, dtype, count=min(block, n - start))
                        entry.write(np.ascontiguousarray(chunk[name]).tobytes())
        _put_events(zf, folder)
        for k, v in schema["names"].items():
            _put(zf, k, np.array(v))


def _header(entry, dtype: np.dtype, shape: tuple[int, ...]) -> None:
    np.lib.format.write_array_header_1_0(entry, {
        "descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False,
        "shape": tuple(int(s) for s in shape)})


def _put(zf: zipfile.ZipFile, key: str, array: np.ndarray) -> None:
    with zf.open(f"{key}.npy", "w", force_zip64=True) as entry:
        np.lib.format.write_array(entry, np.asanyarray(array), allow_pickle=False)


def _put_events(zf: zipfile.ZipFile, folder: Path) -> None:
    """The events as event_time, event_level, event_message: a pass for the count and the
    longest strings, then one per array, about :data:`BLOCK_BYTES` of them at a time."""
    n, width = 0, [1, 1]
    for _t, level, message in _event_lines(folder):
        n += 1
        width = [max(width[0], len(level)), max(width[1], len(message))]
    for i, (key, dtype) in enumerate((("event_time", np.dtype(float)),
                                      ("event_level", np.dtype(f"<U{width[0]}")),
                                      ("event_message", np.dtype(f"<U{width[1]}")))):
        with zf.open(f"{key}.npy", "w", force_zip64=True) as entry:
            _header(entry, dtype, (n,))
            size = max(1, BLOCK_BYTES // dtype.itemsize)
            block: list = []
            for event in _event_lines(folder):
                block.append(event[i])
                if len(block) == size:
                    entry.write(np.array(block, dtype).tobytes())
                    block = []
            if block:
                entry.write(np.array(block, dtype).tobytes())


def remove(folder: str | Path) -> None:
    """Delete the incremental record (once timeseries.npz holds it)."""
    shutil.rmtree(folder)
