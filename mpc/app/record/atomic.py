"""Atomic file writes: a file is either absent or whole, whenever the process is killed.

The content goes to a temporary file in the destination's folder (a rename is atomic only
within one file system), is flushed and fsync'ed, then renamed over the destination, and the
folder is fsync'ed so that the rename itself survives a power loss. A reader never sees a
half-written file: it sees the old one, none, or the new one.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


def fsync_dir(folder: Path) -> None:
    """Make the entries of ``folder`` (a rename, a new file) durable."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_output(path: str | Path) -> Iterator[BinaryIO]:
    """A binary file to write ``path``'s new content to; it replaces ``path`` when the block
    ends without an exception (else it is removed and ``path`` is left as it was)."""
    path = Path(path)
    # a new name opened exclusively ("x"), not mkstemp: the file gets the permissions any
    # file gets (the umask's), where mkstemp's are the owner's alone
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    created = False
    try:
        with open(tmp, "xb") as f:
            created = True
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if created:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def write_atomic(path: str | Path, data: bytes | str) -> None:
    """Replace ``path`` by ``data`` (text is written as UTF-8) atomically."""
    with atomic_output(path) as f:
        f.write(data.encode() if isinstance(data, str) else data)
