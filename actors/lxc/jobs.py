"""Jobs for long container operations (held in a named actor, stored durably).

A replica that accepts an operation with `Prefer: respond-async` records a job here and hands
the operation to the `JobRunner` actor (`actors/lxc/runner.py`), which runs it and records the
result or error here when it finishes. The runner beats the job's heartbeat while it runs: a
running job whose heartbeat is older than `stale_after` seconds is reported `lost` (its runner
hung or died; the host command may or may not have finished), and a restarted runner marks the
jobs it can no longer finish `lost` at once (`mark_lost`). Records live in a
`rayfleet.durable.DurableMap`, so they survive the actor's restart; the newest `keep` are kept.

The runner hands over the job's output lines every `poll` (twice a second), which also
answers whether someone asked to cancel the job (from any replica): the lines are stored in a
second map, one entry per hand-over, so a stream of them can be resumed anywhere.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from rayfleet.durable import DurableMap, open_store

STREAM = "lxc/jobs"
OUTPUT_STREAM = "lxc/job-output"
STALE = "no heartbeat from the job's runner for {seconds:.0f} s; the host command may or may not have finished"
MAX_LINES = 2000  # per job; later lines are dropped
MAX_LINE = 4096
MAX_OUTPUT = 65_536  # characters per job (500 jobs keep at most 32 MiB of output)
PERSIST_BEAT = 5.0  # seconds between durable heartbeat writes


class JobBook:
    def __init__(self, dsn: str | None = None, keep: int = 500, stale_after: float = 30.0) -> None:
        store = open_store(dsn)
        self._jobs = DurableMap(store, STREAM)
        self._output = DurableMap(store, OUTPUT_STREAM)
        self._keep = keep
        self._stale_after = stale_after
        self._beats: dict[str, float] = {}
        self._chunks: dict[str, list[str]] = {}  # job id -> its output entries, in order
        for key, _ in sorted(self._output.items(), key=lambda kv: int(kv[0].rpartition(":")[2])):
            self._chunks.setdefault(key.rpartition(":")[0], []).append(key)

    def create(self, kind: str, target: dict[str, Any]) -> dict[str, Any]:
        now = time.time()
        job_id = uuid.uuid4().hex
        job: dict[str, Any] = {
            "id": job_id,
            "kind": kind,
            "target": target,
            "state": "running",
            "started": now,
            "finished": None,
            "heartbeat": now,
            "result": None,
            "error": None,
            "cancel_requested": False,
            "lines": 0,
            "chars": 0,
        }
        self._jobs.set(job_id, job)
        self._prune()
        return job

    def poll(self, job_id: str, lines: list[str]) -> bool:
        """The running replica's hand-over: new output lines, and a heartbeat. False when the job
        should stop (cancel requested, or the job is no longer running)."""
        job = self._jobs.get(job_id)
        if job is None or job["state"] != "running":
            return False
        now = time.time()
        self._beats[job_id] = now
        room = max(0, MAX_LINES - job.get("lines", 0))
        budget = MAX_OUTPUT - job.get("chars", 0)
        kept: list[str] = []
        for line in lines[:room]:
            line = line[:MAX_LINE]
            if len(line) > budget:
                break
            kept.append(line)
            budget -= len(line)
        if kept:
            key = f"{job_id}:{len(self._chunks.get(job_id, []))}"
            self._output.set(key, kept)
            self._chunks.setdefault(job_id, []).append(key)
        if kept or now - job["heartbeat"] > PERSIST_BEAT:
            job = {
                **job,
                "heartbeat": now,
                "lines": job.get("lines", 0) + len(kept),
                "chars": MAX_OUTPUT - budget if kept else job.get("chars", 0),
            }
            self._jobs.set(job_id, job)
        return not job.get("cancel_requested")

    def cancel(self, job_id: str) -> dict[str, Any] | None:
        """Ask for a running job to stop (its replica stops the host command at its next poll)."""
        job = self._jobs.get(job_id)
        if job is None:
            return None
        if job["state"] == "running" and not job.get("cancel_requested"):
            job = {**job, "cancel_requested": True}
            self._jobs.set(job_id, job)
        return self._as_seen(job)

    def output(self, job_id: str, after: int = 0) -> list[str]:
        """The job's output lines from number `after` on (0: all of them)."""
        lines: list[str] = []
        for key in self._chunks.get(job_id, []):
            lines += self._output.get(key, [])
        return lines[after:]

    def follow(self, job_id: str, after: int = 0) -> dict[str, Any] | None:
        """What a follower of the job has not seen yet: the job (without its lines) and the
        output lines from number `after` on."""
        job = self._jobs.get(job_id)
        if job is None:
            return None
        return {"job": self._as_seen(job), "lines": self.output(job_id, after)}

    def finish(
        self, job_id: str, result: Any = None, error: dict[str, Any] | None = None, cancelled: bool = False
    ) -> dict[str, Any] | None:
        job = self._jobs.get(job_id)
        if job is None:
            return None
        self._beats.pop(job_id, None)
        done = {
            **job,
            "state": "cancelled" if cancelled else "failed" if error is not None else "succeeded",
            "finished": time.time(),
            "result": result,
            "error": error,
        }
        self._jobs.set(job_id, done)
        return done

    def claim(self, job_id: str, runner: str) -> None:
        """The job runs in the runner's life `runner` (see `mark_lost`)."""
        job = self._jobs.get(job_id)
        if job is not None:
            self._jobs.set(job_id, {**job, "runner": runner})

    def mark_lost(self, reason: str, runner: str) -> list[str]:
        """Every running job claimed by another life of the runner than `runner` turns `lost`
        with `reason` (that life is over); their ids."""
        lost = []
        for job_id, job in list(self._jobs.items()):
            if job["state"] == "running" and job.get("runner") not in (None, runner):
                self._beats.pop(job_id, None)
                error = {"status": None, "error": reason}
                self._jobs.set(job_id, {**job, "state": "lost", "finished": time.time(), "error": error})
                lost.append(job_id)
        return lost

    def get(self, job_id: str) -> dict[str, Any] | None:
        """One job with its output lines (`progress`)."""
        job = self._jobs.get(job_id)
        return {**self._as_seen(job), "progress": self.output(job_id)} if job is not None else None

    def recent(self, limit: int = 50) -> list[dict[str, Any]]:
        jobs = sorted((job for _, job in self._jobs.items()), key=lambda j: j["started"], reverse=True)
        return [self._as_seen(job) for job in jobs[:limit]]

    def _as_seen(self, job: dict[str, Any]) -> dict[str, Any]:
        beat = max(job["heartbeat"], self._beats.get(job["id"], 0.0))
        seen = {**job, "heartbeat": beat}
        if job["state"] == "running" and time.time() - beat > self._stale_after:
            seen["state"] = "lost"
            seen["error"] = {"status": None, "error": STALE.format(seconds=time.time() - beat)}
        return seen

    def _prune(self) -> None:
        jobs = sorted(self._jobs.items(), key=lambda kv: kv[1]["started"], reverse=True)
        for key, job in jobs[self._keep :]:
            if job["state"] != "running":
                self._jobs.delete(key)
                for chunk in self._chunks.pop(key, []):
                    self._output.delete(chunk)
