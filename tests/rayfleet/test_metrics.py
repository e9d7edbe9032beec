from prometheus_client.parser import text_string_to_metric_families

from rayfleet import state
from rayfleet.metrics import Metrics
from rayfleet.metrics_hub import HUB_ACTOR_NAME, MetricsHub


def parse(body: bytes) -> dict:
    out = {}
    for fam in text_string_to_metric_families(body.decode()):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def two_replicas(component: str = "demo") -> tuple[Metrics, Metrics]:
    hub = state.actor(MetricsHub, HUB_ACTOR_NAME)
    return Metrics(component, hub=hub), Metrics(component, hub=hub)


async def test_counters_are_cluster_wide_and_monotonic_whichever_replica_renders():
    r1, r2 = two_replicas()
    c1 = r1.counter("demo_requests_total", "Requests", ("status",))
    c2 = r2.counter("demo_requests_total", "Requests", ("status",))
    seen = []
    for i in range(10):
        (c1 if i % 2 else c2).labels(status="200").inc()
        body = await (r1 if i % 3 else r2).render()
        seen.append(parse(body)[("demo_requests_total", (("status", "200"),))])
    assert seen == sorted(seen), "a counter went down between scrapes"
    # a replica's batch reaches the hub on its next flush (periodic or before its own render)
    await r1.flush()
    await r2.flush()
    assert parse(await r1.render())[("demo_requests_total", (("status", "200"),))] == 10


async def test_gauges_set_and_histograms_accumulate():
    r1, r2 = two_replicas()
    g = r1.gauge("demo_open", "Open", ("endpoint",))
    g.labels(endpoint="a").set(1)
    r2.gauge("demo_open", "Open", ("endpoint",)).labels(endpoint="a").set(0)
    h1 = r1.histogram("demo_latency_seconds", "Latency", buckets=(0.1, 1.0))
    h2 = r2.histogram("demo_latency_seconds", "Latency", buckets=(0.1, 1.0))
    h1.observe(0.05)
    h2.observe(0.5)
    h2.observe(5)
    await r1.flush()
    values = parse(await r2.render())
    assert values[("demo_open", (("endpoint", "a"),))] == 0
    assert values[("demo_latency_seconds_bucket", (("le", "0.1"),))] == 1
    assert values[("demo_latency_seconds_bucket", (("le", "1.0"),))] == 2
    assert values[("demo_latency_seconds_bucket", (("le", "+Inf"),))] == 3
    assert values[("demo_latency_seconds_count", ())] == 3
    assert abs(values[("demo_latency_seconds_sum", ())] - 5.55) < 1e-9


async def test_components_are_rendered_separately():
    hub = state.actor(MetricsHub, HUB_ACTOR_NAME)
    a, b = Metrics("a", hub=hub), Metrics("b", hub=hub)
    a.counter("a_total", "A").inc()
    b.counter("b_total", "B").inc(3)
    assert b"a_total" in await a.render() and b"b_total" not in await a.render()


async def test_counters_refuse_to_go_down_and_labels_are_checked():
    m = Metrics("x", hub=state.actor(MetricsHub, HUB_ACTOR_NAME))
    c = m.counter("x_total", "X", ("k",))
    for bad in (lambda: c.labels(k="1").inc(-1), lambda: c.labels(j="1"), lambda: c.inc()):
        try:
            bad()
        except ValueError:
            continue
        raise AssertionError("expected ValueError")


class FlakyHub(MetricsHub):
    def __init__(self):
        super().__init__()
        self.fail = True

    def push(self, *args):
        if self.fail:
            self.fail = False
            raise ConnectionError("hub restarting")
        return super().push(*args)


async def test_a_failed_flush_keeps_the_batch():
    hub = state.actor(FlakyHub, "flaky-hub")
    m = Metrics("f", hub=hub)
    m.counter("f_total", "F").inc(2)
    try:
        await m.flush()
    except ConnectionError:
        pass
    m.counter("f_total", "F").inc(1)
    assert parse(await m.render())[("f_total", ())] == 3
