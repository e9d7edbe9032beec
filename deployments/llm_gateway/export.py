"""The request export (``observability.export``): one JSON line per finished request.

Every request that went through the rings (``/v1/*``) becomes one line of
``<output_dir>/requests-<UTC date>-<writer>.jsonl``: the fields of the spend and audit
records (time, request id, key fingerprint, route, model, endpoint, status, tokens, cost,
latency, cache, stream, fallback, security decisions), never the prompt, the answer or
the key. ``output_dir`` is relative to the gateway's ``data_dir`` unless absolute.

- Off the request path: ``add`` only appends to a bounded in-memory queue; a full queue
  drops the line and counts it (``llm_proxy_export_dropped_total``), it never blocks.
  ``flush`` (every 0.5 s) encodes the batch in a worker thread and writes it with one
  ``write`` to the file it keeps open for the day.
- One file per process (``<writer>`` is the Serve replica id, or ``pid<n>`` outside
  Serve): replicas on one node never share a file, so lines never interleave. The open
  file holds an exclusive ``flock``; a file nobody holds belongs to a process that is gone.
- With ``scrub_pii`` every string but the time and the key fingerprint goes through
  ``masking.scrub`` (the audit trail's masking).
- Rotation at the UTC day change (checked at each flush, with or without traffic): the
  day's file is closed and, with ``compress_on_rotate``, gzipped to ``.jsonl.gz``
  (written to a temporary file, fsynced, renamed, then the plain file removed). At
  startup and at each rotation, plain files of earlier days that no live process holds
  (a crash, a replica that went away) are compressed the same way. A partial last line
  left by a crash is cut off before the file is reopened or compressed.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import gzip
import io
import json
import os
import re
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from actors.llm_gateway.budget import utc_day
from deployments.llm_gateway.masking import bound_all, scrub
from rayfleet.logs import get_logger
from rayfleet.serving import replica_id
from rayfleet.tasks import Wake

log = get_logger("llm_gateway")

_PLAIN = re.compile(r"^requests-(\d{4}-\d{2}-\d{2})-[A-Za-z0-9_.~-]+\.jsonl$")
_TMP = re.compile(r"^\.requests-.*\.tmp$")
_NOT_SCRUBBED = ("time", "key_fingerprint")  # written by the gateway in a fixed format
STALE_TMP_SECONDS = 3600.0


def utc_time(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def writer_name() -> str:
    """The per-process part of the file name: the Serve replica id inside Serve, else ``pid<n>``."""
    replica = replica_id() if "ray.serve" in sys.modules else "local"  # a replica has Serve imported
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", replica)[:64]
    return name if name and name != "local" else f"pid{os.getpid()}"


def _complete_length(f: IO[bytes]) -> int:
    """The length of the file up to and including its last newline (a crash may leave a partial line)."""
    size = f.seek(0, os.SEEK_END)
    pos = size
    while pos > 0:
        step = min(pos, 65536)
        f.seek(pos - step)
        chunk = f.read(step)
        at = chunk.rfind(b"\n")
        if at >= 0:
            return pos - step + at + 1
        pos -= step
    return 0


def compress(path: Path) -> bool:
    """Gzip ``path`` to ``path.gz`` atomically, then remove ``path``; False when a live writer holds it
    or another process compressed it first."""
    try:
        f = open(path, "rb")  # held for its lock
    except FileNotFoundError:
        return False
    with f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        if not path.exists():
            return False  # compressed and removed between our open and our lock
        length = _complete_length(f)
        f.seek(0)
        target = path.with_name(path.name + ".gz")
        tmp = path.with_name(f".{path.name}.gz.{os.getpid()}.tmp")
        try:
            with open(tmp, "wb") as raw:
                with gzip.GzipFile(filename=path.name, mode="wb", fileobj=raw, mtime=0) as z:
                    left = length
                    while left > 0:
                        chunk = f.read(min(left, 1 << 20))
                        if not chunk:
                            break
                        z.write(chunk)
                        left -= len(chunk)
                raw.flush()
                os.fsync(raw.fileno())
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            dir_fd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        return True


def check_writable(directory: Path) -> None:
    """Create ``directory`` and write a probe file in it; a clear error when that is impossible."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe = directory / f".requests-probe-{os.getpid()}.tmp"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise ValueError(
            f"observability.export.output_dir: cannot write to {directory} ({exc.strerror or type(exc).__name__})"
        ) from None


class RequestExport:
    """The replica side: a bounded queue, flushed in batches to this process's file of the day."""

    def __init__(
        self,
        directory: Path,
        *,
        scrub_pii: bool,
        compress_on_rotate: bool,
        writer: str,
        clock: Callable[[], float] = time.time,
        max_pending: int = 20_000,
        on_drop: Callable[[int], None] | None = None,
    ) -> None:
        check_writable(directory)
        self.directory = directory
        self.scrub_pii = scrub_pii
        self.compress_on_rotate = compress_on_rotate
        self.writer = writer
        self.clock = clock
        self.max_pending = max_pending
        self.on_drop = on_drop
        self.pending: list[tuple[float, dict[str, Any]]] = []
        self.dropped = 0
        self.wake = Wake()  # set by ``add``: the queued lines wait for ``flush``
        self.written = 0
        self.day: str | None = None
        self._file: io.FileIO | None = None
        self._lock = asyncio.Lock()

    def path(self, day: str) -> Path:
        return self.directory / f"requests-{day}-{self.writer}.jsonl"

    def add(self, ts: float, record: dict[str, Any]) -> None:
        """Queue one request's line (never blocks: a full queue drops it and counts the drop)."""
        if len(self.pending) >= self.max_pending:
            self._drop(1)
            return
        self.pending.append((ts, record))
        self.wake.set()

    def _drop(self, count: int) -> None:
        self.dropped += count
        if self.on_drop is not None:
            self.on_drop(count)

    async def flush(self) -> None:
        async with self._lock:
            batch, self.pending = self.pending, []
            today = utc_day(self.clock())
            if batch or (self.day is not None and self.day != today):
                try:
                    await asyncio.to_thread(self._write, batch, today)
                except OSError as exc:  # disk full, folder gone: these lines are lost, and counted
                    self._drop(len(batch))
                    log.warning("request export write failed", extra={"lines": len(batch), "error": str(exc)})

    async def recover(self) -> int:
        """Compress the plain files of earlier days that no live process holds (startup)."""
        async with self._lock:
            return await asyncio.to_thread(self._compress_leftovers, utc_day(self.clock()))

    async def close(self) -> None:
        """Write what is queued and close today's file (it is compressed once its day is over)."""
        await self.flush()
        async with self._lock:
            self._close()

    # -- the worker thread's side ---------------------------------------------
    def _line(self, ts: float, record: dict[str, Any]) -> bytes:
        line: dict[str, Any] = {"time": utc_time(ts), **record}
        prepare = scrub if self.scrub_pii else bound_all
        line = {k: v if k in _NOT_SCRUBBED else prepare(v) for k, v in line.items()}
        return json.dumps(line, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"

    def _write(self, batch: list[tuple[float, dict[str, Any]]], today: str) -> None:
        if self.day is not None and self.day != today:
            self._rotate()
        if not batch:
            return
        if self._file is None:
            self._open(today)
        assert self._file is not None
        data = memoryview(b"".join(self._line(ts, record) for ts, record in batch))
        start = self._file.tell()
        try:
            while data:
                data = data[self._file.write(data) or 0 :]
        except OSError:
            with contextlib.suppress(OSError):
                self._file.truncate(start)  # no partial line for the next batch to run into
            raise
        self.written += len(batch)

    def _open(self, day: str) -> None:
        base = self.writer.rsplit("~", 1)[0]
        for attempt in range(100):
            # another writer of this process with the same name (two gateways in one process) holds
            # the file: take the next free name rather than share it
            self.writer = base if attempt == 0 else f"{base}~{attempt}"
            f = open(self.path(day), "a+b", buffering=0)  # kept open for the day; unbuffered: one write per batch
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                f.close()
        else:
            raise OSError(f"every export file name of writer {base!r} is held by another writer")
        try:
            size = f.seek(0, os.SEEK_END)
            complete = _complete_length(f)
            if complete != size:
                f.truncate(complete)
            f.seek(0, os.SEEK_END)
        except BaseException:
            f.close()
            raise
        self._file, self.day = f, day

    def _close(self) -> None:
        if self._file is not None:
            self._file.close()  # releases the lock
            self._file = None

    def _rotate(self) -> None:
        """Close the day's file; with compression, gzip it and any other leftover of an earlier day
        (a failure is logged and the file stays plain for the next pass)."""
        self.day = None
        self._close()
        self._compress_leftovers(utc_day(self.clock()))

    def _compress_leftovers(self, today: str) -> int:
        if not self.compress_on_rotate:
            return 0
        done = 0
        for entry in sorted(self.directory.iterdir()):
            match = _PLAIN.match(entry.name)
            if match and match.group(1) < today:
                try:
                    done += compress(entry)
                except OSError as exc:
                    log.warning("compressing an export file failed", extra={"file": entry.name, "error": str(exc)})
            elif _TMP.match(entry.name):
                with contextlib.suppress(OSError):
                    if time.time() - entry.stat().st_mtime > STALE_TMP_SECONDS:
                        entry.unlink()  # a compression cut short by a crash
        return done
