"""Append-only record files written with fsync, for the event log and the Raft state.

Each record is one line `<crc32 hex8> <json>\\n`. An append is flushed and fsynced before
it returns, so a record the node acknowledged survives a crash of the process or of the
machine. At open, the file is read up to the first record that is incomplete (no newline)
or whose checksum does not match: that record and anything after it is a torn write (the
crash happened while appending) and the file is truncated back to the last good record,
so the next append does not glue itself onto half a line. `rewrite` replaces the whole
file atomically (temporary file, fsync, rename, fsync of the directory) for compaction;
`write_record` / `read_record` do the same for a file of one checksummed record (a snapshot).
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def _line(record: Any) -> bytes:
    data = json.dumps(record, separators=(",", ":")).encode()
    return b"%08x %s\n" % (zlib.crc32(data), data)


def _parse(line: bytes) -> Any:
    """The record of a complete line, or None when its checksum or JSON is bad."""
    crc, _, data = line.rstrip(b"\n").partition(b" ")
    try:
        if int(crc, 16) != zlib.crc32(data) or len(crc) != 8:
            return None
        return json.loads(data)
    except ValueError:
        return None


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data` so that a crash leaves either the old or the new content."""
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(path)
    fsync_dir(path.parent)


def write_record(path: Path, record: Any) -> None:
    """Write one checksummed record to `path` atomically (a crash leaves the old file or the new one)."""
    write_atomic(path, _line(record))


def read_record(path: Path) -> Any:
    """The record `write_record` wrote; None when the file is missing, torn or fails its checksum."""
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    return _parse(raw) if raw.endswith(b"\n") and raw.count(b"\n") == 1 else None


class RecordLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.torn_bytes = 0  # how much a torn tail held when the file was opened (0: none)
        self.records: list[Any] = []
        self._load()
        self._fh = self.path.open("ab")

    def _load(self) -> None:
        if not self.path.exists():
            self.path.touch()
            fsync_dir(self.path.parent)
            return
        raw = self.path.read_bytes()
        good = 0
        for line in raw.splitlines(keepends=True):
            record = _parse(line) if line.endswith(b"\n") else None
            if record is None:
                break
            self.records.append(record)
            good += len(line)
        if good < len(raw):
            self.torn_bytes = len(raw) - good
            with self.path.open("r+b") as fh:
                fh.truncate(good)
                fh.flush()
                os.fsync(fh.fileno())

    def append(self, records: Iterable[Any]) -> None:
        """Append and fsync; returns once the records are on stable storage."""
        data = b"".join(_line(r) for r in records)
        if not data:
            return
        self._fh.write(data)
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def rewrite(self, records: Iterable[Any]) -> None:
        """Replace every record (compaction), atomically."""
        self._fh.close()
        write_atomic(self.path, b"".join(_line(r) for r in records))
        self._fh = self.path.open("ab")

    def close(self) -> None:
        self._fh.close()
