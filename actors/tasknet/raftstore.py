"""What a validator's Raft keeps on disk: `raft.log` and its snapshots (wal.py's fsynced files).

`raft.log` holds `{hard: [term, voted_for]}` and `{from: i, entries}` records (drop the entries
after the absolute index `i`, append these), each appended and fsynced before messages are sent.
A snapshot is `raft-snap-<index>.json`, one checksummed record written atomically (temporary
file, fsync, rename, fsync of the directory): a crash while writing it leaves the previous one.

A local compaction writes the new snapshot, then rewrites `raft.log` from the *previous*
snapshot's index and deletes the snapshots older than that one: if the newest snapshot does not
verify at start (torn, bad checksum, wrong shape), the previous one and the log after it rebuild
the same state. A snapshot installed from the leader replaces the log: `raft.log` is rewritten
from its index and the other snapshots are deleted. At start the newest snapshot that verifies and
that the log reaches is loaded, and the log suffix after it replayed (dropped when the entry at the
snapshot's index has another term: the snapshot replaced a log that diverged).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from actors.tasknet.raft import HardState, LogEntry, RaftCore, Snapshot, parse_snapshot
from actors.tasknet.wal import RecordLog, fsync_dir, read_record, write_record

SNAPSHOT_NAME = re.compile(r"^raft-snap-(\d{20})\.json$")


class RaftStorageError(Exception):
    """The log starts after a snapshot index and no snapshot that verifies covers what it lacks."""


class RaftStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.file: RecordLog | None = None
        self.snapshots_refused = 0  # snapshot files that did not verify at start
        self._saved: tuple[int, str | None, int, list[int]] = (0, None, 0, [])  # term, vote, base, log terms
        self._records = 0

    # ----- start
    def load(self) -> HardState:
        """Replay raft.log over the newest snapshot that verifies."""
        self.file = RecordLog(self.folder / "raft.log")
        records, self.file.records = self.file.records, []
        legacy = self.folder / "raft.json"  # the format before the fsynced log
        if legacy.exists() and not records:
            raw = json.loads(legacy.read_text())
            records = [{"hard": [raw["term"], raw["voted_for"]]}, {"from": 0, "entries": raw["log"]}]
        hard = HardState()
        base: int | None = None  # the index the file's log starts after (its first entries record)
        entries: list[LogEntry] = []
        for record in records:
            if "hard" in record:
                hard.term, hard.voted_for = record["hard"]
                continue
            start = int(record["from"])
            if base is None or start < base:  # the first record, or one before the file's base: the log starts there
                base, entries = start, []
            del entries[start - base :]
            entries.extend(record["entries"])
        base = base or 0
        hard.snapshot = self._newest_snapshot(base)
        if hard.snapshot is None and base > 0:
            raise RaftStorageError(f"raft.log starts after index {base} and no snapshot there verifies")
        hard.log = _after(hard.snapshot, base, entries)
        self._remember(hard)
        self._records = len(records)
        if legacy.exists():
            self.rewrite(hard)
            legacy.unlink()
        return hard

    def _newest_snapshot(self, base: int) -> Snapshot | None:
        """The newest snapshot file that verifies and that the log reaches (index >= its base)."""
        for index, path in sorted(self._snapshot_files(), reverse=True):
            snap = parse_snapshot(read_record(path))
            if snap is not None and snap["index"] == index and index >= base:
                return snap
            self.snapshots_refused += 1
        return None

    def _snapshot_files(self) -> list[tuple[int, Path]]:
        found = []
        for path in self.folder.iterdir():
            match = SNAPSHOT_NAME.match(path.name)
            if match:
                found.append((int(match.group(1)), path))
        return found

    # ----- writing
    def persist(self, raft: RaftCore) -> None:
        """Append what changed since the last call (term and vote, the log from its first changed
        entry), fsynced; an installed snapshot is written first and replaces the log."""
        if not raft.dirty:
            return
        raft.dirty = False
        hard = raft.hard
        if raft.snapshot_installed and hard.snapshot is not None:
            raft.snapshot_installed = False
            self._write_snapshot(hard.snapshot)
            self.rewrite(hard)
            return
        term, voted_for, base, terms = self._saved
        if base != raft.snap_index():  # compacted outside `compact`: start the file at the snapshot
            self.rewrite(hard)
            return
        records: list[dict[str, Any]] = []
        if (term, voted_for) != (hard.term, hard.voted_for):
            records.append({"hard": [hard.term, hard.voted_for]})
        same = 0  # Raft's log matching: the same index and term hold the same entry
        while same < min(len(terms), len(hard.log)) and terms[same] == hard.log[same]["term"]:
            same += 1
        if same < len(terms) or same < len(hard.log):
            records.append({"from": base + same, "entries": hard.log[same:]})
        self._remember(hard)
        if self.file is None or not records:
            return
        self.file.append(records)
        self._records += len(records)
        if self._records > 2 * len(hard.log) + 1000:
            self.rewrite(hard)

    def compact(self, raft: RaftCore, index: int, data: dict[str, Any]) -> Snapshot:
        """Snapshot `data` at the applied `index`: the snapshot file first, then raft.log rewritten
        from the previous snapshot (kept as the fallback), then older snapshots deleted."""
        previous, entries = raft.snap_index(), list(raft.hard.log)
        snap = raft.compact(index, data)
        self._write_snapshot(snap)
        self._rewrite(raft.hard, previous, entries, keep={previous, index})
        return snap

    def rewrite(self, hard: HardState) -> None:
        """raft.log as the state in memory, from its snapshot (the only snapshot kept)."""
        index = hard.snapshot["index"] if hard.snapshot else 0
        self._rewrite(hard, index, hard.log, keep={index})

    def _rewrite(self, hard: HardState, base: int, entries: list[LogEntry], keep: set[int]) -> None:
        if self.file is not None:
            self.file.rewrite([{"hard": [hard.term, hard.voted_for]}, {"from": base, "entries": entries}])
            self._records = 2
        self._remember(hard)
        dropped = False
        for index, path in self._snapshot_files():
            if index not in keep:
                path.unlink()
                dropped = True
        if dropped:
            fsync_dir(self.folder)

    def _write_snapshot(self, snap: Snapshot) -> None:
        write_record(self.folder / f"raft-snap-{snap['index']:020d}.json", snap)

    def _remember(self, hard: HardState) -> None:
        base = hard.snapshot["index"] if hard.snapshot else 0
        self._saved = (hard.term, hard.voted_for, base, [e["term"] for e in hard.log])

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


def _after(snap: Snapshot | None, base: int, entries: list[LogEntry]) -> list[LogEntry]:
    """The log entries after `snap` (all of them without one); none when the entry at its index
    has another term (the snapshot replaced a log that diverged there)."""
    if snap is None:
        return entries
    pos = snap["index"] - base
    if pos == 0 or (pos <= len(entries) and entries[pos - 1]["term"] == snap["term"]):
        return entries[pos:]
    return []
