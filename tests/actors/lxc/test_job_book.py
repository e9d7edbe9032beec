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


def test_output_and_a_cancel_request_survive_a_restart(tmp_path):
    dsn = f"sqlite:///{tmp_path}/jobs.sqlite3"
    book = JobBook(dsn)
    job = book.create("backup", {"instance_id": "100"})
    assert book.poll(job["id"], ["$ vzdump 100", "INFO: starting new backup job"]) is True
    assert book.poll(job["id"], []) is True
    assert book.poll(job["id"], ["INFO: Starting Backup of VM 100 (lxc)"]) is True
    assert book.cancel(job["id"])["cancel_requested"] is True

    again = JobBook(dsn, stale_after=3600)  # a new actor on the same store (the old one died)
    seen = again.get(job["id"])
    assert seen["progress"] == [
        "$ vzdump 100",
        "INFO: starting new backup job",
        "INFO: Starting Backup of VM 100 (lxc)",
    ]
    assert again.follow(job["id"], 2)["lines"] == ["INFO: Starting Backup of VM 100 (lxc)"]
    assert again.poll(job["id"], []) is False  # the running replica is told to stop
    done = again.finish(job["id"], None, {"status": None, "error": "cancelled"}, cancelled=True)
    assert done["state"] == "cancelled"
    assert again.poll(job["id"], ["late"]) is False and again.output(job["id"]) == seen["progress"]
    assert again.cancel(job["id"])["state"] == "cancelled"  # nothing left to cancel


def test_output_is_capped_per_job(tmp_path):
    from actors.lxc.jobs import MAX_LINE, MAX_LINES, MAX_OUTPUT

    book = JobBook(f"sqlite:///{tmp_path}/jobs.sqlite3")
    job = book.create("px-update", {})
    book.poll(job["id"], ["x" * (MAX_LINE + 10)] + ["y"] * (MAX_LINES + 5))
    lines = book.output(job["id"])
    assert len(lines) == MAX_LINES and len(lines[0]) == MAX_LINE
    wordy = book.create("px-update", {})
    for _ in range(40):  # 40 hand-overs of 4 KiB lines: more than the job's budget
        book.poll(wordy["id"], ["z" * MAX_LINE])
    kept = book.output(wordy["id"])
    assert sum(map(len, kept)) <= MAX_OUTPUT and len(kept) == MAX_OUTPUT // MAX_LINE


def test_a_restarted_runner_marks_the_jobs_it_cannot_finish_lost_with_the_reason(tmp_path):
    book = JobBook(f"sqlite:///{tmp_path}/jobs.sqlite3", stale_after=3600)
    done = book.create("backup", {"instance_id": "100"})
    book.finish(done["id"], {"archive": "x"})
    running = book.create("backup", {"instance_id": "101"})
    book.claim(running["id"], "first life")
    mine = book.create("backup", {"instance_id": "102"})
    book.claim(mine["id"], "second life")
    unclaimed = book.create("backup", {"instance_id": "103"})  # on its way to the runner
    assert book.mark_lost("the runner died", "second life") == [running["id"]]
    assert book.get(mine["id"])["state"] == book.get(unclaimed["id"])["state"] == "running"
    lost = book.get(running["id"])
    assert lost["state"] == "lost" and lost["error"] == {"status": None, "error": "the runner died"}
    assert lost["finished"] is not None and book.get(done["id"])["state"] == "succeeded"
    assert book.poll(running["id"], ["late"]) is False  # a late hand-over changes nothing
    assert book.mark_lost("again", "second life") == []


def test_a_job_without_heartbeat_is_lost_and_says_why(tmp_path):
    dsn = f"sqlite:///{tmp_path}/jobs.sqlite3"
    job = JobBook(dsn).create("backup", {"instance_id": "100"})
    seen = JobBook(dsn, stale_after=-1).get(job["id"])
    assert seen["state"] == "lost" and "no heartbeat from the job's runner" in seen["error"]["error"]
