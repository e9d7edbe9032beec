"""The JobBook keeps job records durably: a new instance on the same store sees them."""

from __future__ import annotations

from actors.lxc.jobs import JobBook


def test_jobs_survive_a_restart_and_stale_ones_show_lost(tmp_path):
    dsn = f"sqlite:///{tmp_path}/jobs.sqlite3"
    book = JobBook(dsn)
    done = book.create("backup", {"instance_id": "100"})
    book.finish(done["id"], {"archive": "/var/lib/vz/dump/x.tar.zst"})
    running = book.create("migrate", {"instance_id": "101"})

    again = JobBook(dsn, stale_after=3600)
    assert again.get(done["id"])["state"] == "succeeded"
    assert again.get(done["id"])["result"] == {"archive": "/var/lib/vz/dump/x.tar.zst"}
    assert again.get(running["id"])["state"] == "running"
    assert JobBook(dsn, stale_after=-1).get(running["id"])["state"] == "lost"  # nobody beats its heartbeat


def test_only_the_newest_finished_jobs_are_kept(tmp_path):
    book = JobBook(f"sqlite:///{tmp_path}/jobs.sqlite3", keep=3)
    ids = []
    for n in range(5):
        job = book.create("backup", {"instance_id": str(100 + n)})
        book.finish(job["id"], None, {"status": 500, "error": "x"})
        ids.append(job["id"])
    kept = [j["id"] for j in book.recent(10)]
    assert len(kept) <= 4 and ids[-1] in kept and ids[0] not in kept
