"""Jobs for long container operations (held in a named actor, stored durably).

A replica that accepts an operation with `Prefer: respond-async` records a job here, runs the
operation in its own event loop (holding the container's lease until the host command ends)
and records the result or error here when it finishes. It beats the job's heartbeat while it
runs: a running job whose heartbeat is older than `stale_after` seconds is reported `lost`
(its replica died; the host command may or may not have finished). Records live in a
`rayfleet.durable.DurableMap`, so they survive the actor's restart; the newest `keep` are kept.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from rayfleet.durable import DurableMap, open_store

STREAM = "lxc/jobs"


class JobBook:
    def __init__(self, dsn: str | None = None, keep: int = 500, stale_after: float = 30.0) -> None:
        self._jobs = DurableMap(open_store(dsn), STREAM)
        self._keep = keep
        self._stale_after = stale_after

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
        }
        self._jobs.set(job_id, job)
        self._prune()
        return job

    def beat(self, job_id: str) -> bool:
        job = self._jobs.get(job_id)
        if job is None or job["state"] != "running":
            return False
        self._jobs.set(job_id, {**job, "heartbeat": time.time()})
        return True

    def finish(self, job_id: str, result: Any = None, error: dict[str, Any] | None = None) -> dict[str, Any] | None:
        job = self._jobs.get(job_id)
        if job is None:
            return None
        done = {
            **job,
            "state": "failed" if error is not None else "succeeded",
            "finished": time.time(),
            "result": result,
            "error": error,
        }
        self._jobs.set(job_id, done)
        return done

    def get(self, job_id: str) -> dict[str, Any] | None:
        job = self._jobs.get(job_id)
        return self._as_seen(job) if job is not None else None

    def recent(self, limit: int = 50) -> list[dict[str, Any]]:
        jobs = sorted((job for _, job in self._jobs.items()), key=lambda j: j["started"], reverse=True)
        return [self._as_seen(job) for job in jobs[:limit]]

    def _as_seen(self, job: dict[str, Any]) -> dict[str, Any]:
        if job["state"] == "running" and time.time() - job["heartbeat"] > self._stale_after:
            return {**job, "state": "lost"}
        return dict(job)

    def _prune(self) -> None:
        jobs = sorted(self._jobs.items(), key=lambda kv: kv[1]["started"], reverse=True)
        for key, job in jobs[self._keep :]:
            if job["state"] != "running":
                self._jobs.delete(key)
