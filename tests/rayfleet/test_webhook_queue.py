"""rayfleet.webhook_queue on a real SQLite record: what is kept, dropped and given up (the deliveries
themselves are tested through the gateway's and the mitigation fleet's real receivers)."""

from __future__ import annotations

import hashlib
import hmac

from rayfleet.durable import SqliteStore
from rayfleet.webhook_queue import Delivery, DeliveryQueue, Outgoing, signature
from tests.conftest import free_port
from tests.polling import eventually


def test_the_signature_is_hmac_sha256_of_the_fields_and_the_body_joined_by_dots():
    expected = hmac.new(b"k", b"a.b.{}", hashlib.sha256).hexdigest()
    assert signature("k", "a", "b", body=b"{}") == expected
    assert signature("k", body=b"{}") == hmac.new(b"k", b"{}", hashlib.sha256).hexdigest()


def _queue(tmp_path, prepare, **kw) -> DeliveryQueue:
    return DeliveryQueue(lambda: SqliteStore(tmp_path / "q.sqlite3"), "test/hooks", prepare, **kw)


def _down(delivery: Delivery) -> Outgoing:
    return Outgoing(f"http://127.0.0.1:{PORT}/hook", b"{}", {})


PORT = free_port()  # nothing listens here


async def test_a_full_queue_counts_what_it_cannot_take_as_dead(tmp_path):
    queue = _queue(tmp_path, _down, max_queue=2, base_delay=60)
    assert queue.add([("a", {"id": str(i)}) for i in range(3)]) == 2
    assert queue.stats["dead"] == 1 and len(queue.queue) == 2
    await queue.close()
    assert len(_queue(tmp_path, _down).record().state["pending"]) == 2  # both recorded


async def test_an_endpoint_gone_makes_its_deliveries_dead_and_removes_them_from_the_record(tmp_path):
    queue = _queue(tmp_path, lambda delivery: None)
    queue.add([("gone", {"id": "e1"})])
    await eventually(lambda: queue.stats["dead"] == 1, what="the delivery given up")
    assert _queue(tmp_path, _down).record().state["pending"] == {}


async def test_dropped_deliveries_are_not_replayed(tmp_path):
    queue = _queue(tmp_path, _down, base_delay=0.05)
    queue.add([("a", {"id": "e1"}), ("a", {"id": "e2"})])
    await eventually(lambda: queue.stats["retried"] >= 1, what="a failed attempt")
    await queue.close()
    kept = _queue(tmp_path, _down, base_delay=60)
    assert kept.record().state["pending"] and kept.stats["restored"] == 2 and kept.seen("e1")
    kept.drop_all()
    await kept.close()
    assert _queue(tmp_path, _down).record().state["pending"] == {}
