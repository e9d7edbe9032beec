"""Fixtures shared by every tier, and the tier marks.

Tier 2 needs real servers on loopback. A test that needs a server the machine
lacks fails in CI (CI=true) and is skipped, with the reason, elsewhere.

Tiers are marked from what a test uses, never by hand: a test that uses a fixture of
FIXTURE_MARKS (directly or through other fixtures), or whose code calls one of
STARTER_MARKS (directly or through helpers under tests/), gets that entry's marks; every
test under tests/e2e is `e2e`. tests/test_tiers.py checks the tables against the code.
`make test-fast` runs `-m "not e2e and not realserver"`.
"""

from __future__ import annotations

import inspect
import os
import socket
import sys
import types
from collections.abc import Iterable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from rayfleet import state
from rayfleet.launcher import free_port  # noqa: F401 - re-exported for tests
from tests import netguard

ROOT = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent

# Property tests judge answers, never speed (no test asserts a wall-clock time): Hypothesis' own
# deadline (200 ms per example) and its "generation is slow" check fail on a loaded machine, not on a
# defect (test_canonical.py's did, at a load average of 15). A test's own @settings still wins.
settings.register_profile("rayfleet", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("rayfleet")
_TESTS_PREFIX = str(TESTS) + os.sep
DATA = TESTS / "data"

REAL = ("realserver",)
DATAPLANE = ("realserver", "dataplane")
BROWSER = ("realserver", "browser")

# Fixtures that start (or need) a real server: HAProxy, Squid, dnsmasq, Chromium, the SSH
# simulator, Redis, PostgreSQL; or a real toolchain or dataset. A bare name is defined once
# outside tests/e2e; a name defined in several places is qualified with its file under tests/.
# (Ray: tests/e2e by path; tests/actors/tasknet/test_node_actor_restart.py is marked e2e.)
FIXTURE_MARKS: dict[str, tuple[str, ...]] = {
    "redis_url": REAL,  # Redis on 127.0.0.1:6379
    "postgres_dsn": REAL,  # PostgreSQL on 127.0.0.1:5432
    "sim_env": REAL,  # pve-sim over real SSH (tests/deployments/lxc)
    "deployments/lxc/conftest.py::fresh_sim": REAL,
    "sims/pve/conftest.py::fresh_sim": REAL,
    "loaded_sim": REAL,
    "deployments/autoscale/conftest.py::sim": REAL,
    "deployments/autoscale/test_autoscale_page.py::sim": REAL,
    "deployments/lxc/test_lxc_fuzz.py::served": REAL,
    "deployments/lxc/test_lxc_ui.py::served": REAL,
    "deployments/lxc/test_lxc_cluster.py::cluster": REAL,  # a 3-node pve-sim cluster
    "deployments/lxc/test_lxc_cluster.py::api": REAL,
    "deployments/lxc/test_lxc_job_control.py::quick": REAL,
    "deployments/lxc/test_lxc_job_control.py::slow": REAL,
    "sims/pve/test_pve_cluster.py::cluster": REAL,
    "sims/pve/test_pve_cluster.py::on": REAL,
    "deployments/mitigation/conftest.py::origin": DATAPLANE,  # HAProxy origin; every fleet node is HAProxy
    "rayfleet/crs/test_local_rules.py::tiers": DATAPLANE,  # nginx + ModSecurity + CRS over an HAProxy origin
    "deployments/mitigation/test_tls.py::https_origin": DATAPLANE,  # an HAProxy origin speaking HTTPS
    "deployments/webfilter/conftest.py::wf": DATAPLANE,  # Squid and dnsmasq
    "deployments/webfilter/test_log_lifecycle.py::wf": DATAPLANE,  # Squid and dnsmasq, small log_rotate_bytes
    "deployments/webfilter/test_subscriptions.py::wf": DATAPLANE,
    "deployments/webfilter/test_ui.py::wf": DATAPLANE,
    "deployments/webfilter/test_waf_crs.py::crs": DATAPLANE,  # Squid, dnsmasq and the CRS tier's nginx
    "deployments/webfilter/test_error_bodies.py::wf_ray": DATAPLANE,
    "actors/webfilter/test_dataplane.py::plane": DATAPLANE,
    "svc": DATAPLANE,
    "tlswf": DATAPLANE,
    "deployments/webfilter/test_ui.py::chromium": BROWSER,  # the admin UI's headless Chromium
    "deployments/mitigation/test_dashboard.py::chromium": BROWSER,  # the fleet dashboard's
    "rayfleet/test_front.py::front": DATAPLANE,  # HAProxy in front of uvicorn
    # not servers, but as heavy and as external: out of the inner loop with them
    "real_pkg": REAL,  # the real ASN dataset (scripts/fetch-asn-data.sh, DuckDB build)
    "editors/test_vscode_extension.py::built": REAL,  # node/npm: type-check, build, package (~1 min)
}

# Helpers (functions, classes, attributes) whose call starts such a server, found by name in a
# test's code and in the code of the tests/ helpers it calls.
STARTER_MARKS: dict[str, tuple[str, ...]] = {
    "require_server": REAL,
    "SimEnv": REAL,
    "ThreadedSim": REAL,
    "ensure_demo_host": REAL,  # the demo pve-sim process, supervised
    "require_dataplane": DATAPLANE,
    "running_service": DATAPLANE,
    "static_origin": DATAPLANE,
    "static_origin_process": DATAPLANE,
    "haproxy_running": DATAPLANE,
    "MitigationFleet": DATAPLANE,
    "upstream_resolver": DATAPLANE,  # a dnsmasq in a network namespace (deployments/webfilter/netns.py)
    "delta_upstream": DATAPLANE,  # a dnsmasq on loopback, the upstream of test_dataplane.py's base + delta tests
    "require_chromium": BROWSER,
    "async_playwright": BROWSER,
    "sync_playwright": BROWSER,
}


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def require_server(name: str, host: str, port: int) -> None:
    """Fail (CI) or skip (elsewhere) unless something accepts TCP on host:port."""
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return
    except OSError as exc:
        message = f"{name} is not reachable on {host}:{port}: {exc}"
    if in_ci():
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture
def redis_url() -> str:
    require_server("redis", "127.0.0.1", 6379)
    return os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


@pytest.fixture
def postgres_dsn() -> str:
    require_server("postgresql", "127.0.0.1", 5432)
    return os.environ.get("TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")


@pytest.fixture(autouse=True)
def _no_machine_resolver(monkeypatch: pytest.MonkeyPatch) -> None:
    """No name lookup of a test reaches the machine's resolver (tests/netguard.py)."""
    monkeypatch.setattr(socket, "getaddrinfo", netguard.guarded_getaddrinfo)


@pytest.fixture(autouse=True)
def _isolated_local_state():
    """Every test starts with no in-process actor stand-ins."""
    state.reset_local_state()
    yield
    state.reset_local_state()


def is_e2e(item: pytest.Item) -> bool:
    return "tests/e2e/" in str(item.fspath).replace(os.sep, "/")


def fixture_key(name: str, func: object) -> str:
    """`name`, qualified as `<file under tests/>::name` (the form FIXTURE_MARKS uses for
    a name defined in several places); a plugin's fixture keeps its bare name."""
    filename = getattr(getattr(func, "__code__", None), "co_filename", "")
    if not filename.startswith(_TESTS_PREFIX):
        return name
    return f"{Path(filename).relative_to(TESTS).as_posix()}::{name}"


def fixture_marks(item: pytest.Item) -> set[str]:
    marks: set[str] = set()
    info = getattr(item, "_fixtureinfo", None)
    for name in getattr(item, "fixturenames", ()):
        defs = info.name2fixturedefs.get(name, ()) if info is not None else ()
        keys = {name} | {fixture_key(name, d.func) for d in defs[-1:]}
        for key in keys:
            marks.update(FIXTURE_MARKS.get(key, ()))
    return marks


def _code_names(code: types.CodeType) -> Iterable[str]:
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_names(const)


def _under_tests(obj: object) -> bool:
    code = getattr(obj, "__code__", None)
    if code is not None:
        filename = code.co_filename
    else:
        filename = getattr(sys.modules.get(getattr(obj, "__module__", "") or ""), "__file__", None) or ""
    return filename.startswith(_TESTS_PREFIX)


_STARTS: dict[types.CodeType, set[str]] = {}


def starter_marks(func: object, seen: set[int] | None = None) -> set[str]:
    """The marks of STARTER_MARKS names in `func`'s code, following the functions and
    classes of tests/ it names (not third-party or product code: that is what starts)."""
    top = seen is None
    seen = set() if seen is None else seen
    func = inspect.unwrap(func)  # type: ignore[arg-type]
    code = getattr(func, "__code__", None)
    if code is None or id(func) in seen or not _under_tests(func):
        return set()
    if top and code in _STARTS:
        return _STARTS[code]
    seen.add(id(func))
    marks: set[str] = set()
    scope = getattr(func, "__globals__", {})
    for name in set(_code_names(code)):
        marks.update(STARTER_MARKS.get(name, ()))
        target = scope.get(name)
        if isinstance(target, type) and _under_tests(target):
            for member in vars(target).values():
                marks |= starter_marks(member, seen)
        elif callable(target):
            marks |= starter_marks(target, seen)
    if top:  # a nested result may miss what a cycle back to a caller holds
        _STARTS[code] = marks
    return marks


def tier_marks(item: pytest.Item) -> set[str]:
    if is_e2e(item):
        return {"e2e"}
    marks = fixture_marks(item)
    function = getattr(item, "function", None)
    if function is not None:
        marks |= starter_marks(function)
    return marks


# Work units for pytest-xdist (the scheduler below): a test file is a unit (as with `--dist
# loadfile`), tier 3 one unit, handed out first when it is in the run. `make test` runs tier 3 in a
# process of its own after the other tiers (beside them, each full run failed a different
# timing-bound test and one hung). In tier 3, one Ray cluster at a time: first the tests that start
# a cluster of their own (TIER3_OWN in this order: the chaos run first, the GCS kill last; then the
# other e2e files that do), then the session cluster's tests, which start it once and stop it with
# the last of them (package scope). (xdist's `loadgroup` cannot group under pytest 9: it rewrites
# `item._nodeid`, which pytest 9 no longer reads.)
TIER3_OWN = (
    "tests/e2e/test_chaos.py",
    "tests/e2e/test_front.py",
    "tests/e2e/test_platform_down.py",
    "tests/actors/tasknet/test_node_actor_restart.py",
    "tests/e2e/test_tasknet_cross_cluster.py",
    "tests/e2e/test_head_restart.py",
)
TIER3 = "tier3"


def work_unit(path: str) -> str:
    """The xdist work unit of the tests in `path` (relative to the project root)."""
    return TIER3 if path in TIER3_OWN or path.startswith("tests/e2e/") else path


def _run_order(item: pytest.Item) -> tuple[int, int, int]:
    """Tier 3 first; in it TIER3_OWN in its order, the other tests that start their own cluster, then
    the session cluster's tests."""
    path = Path(str(item.fspath)).resolve().relative_to(ROOT).as_posix()
    if work_unit(path) != TIER3:
        return (1, 0, 0)
    if path in TIER3_OWN:
        return (0, 0, TIER3_OWN.index(path))
    return (0, 1 + ("cluster" in getattr(item, "fixturenames", ())), 0)


def pytest_xdist_make_scheduler(config, log):
    """Work units as `work_unit` says, handed out in collection order (`--no-loadscope-reorder`)."""
    from xdist.scheduler import LoadScopeScheduling

    class WorkUnits(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid.split("::", 1)[0])

    return WorkUnits(config, log)


def pytest_collection_modifyitems(config, items):
    """Mark each test's tier; tier 3 runs last (the expensive clusters start after the fast tiers have
    passed), in `_run_order`: the own-cluster tests, then the session cluster's."""
    for item in items:
        for mark in sorted(tier_marks(item)):
            item.add_marker(mark)
    items.sort(key=lambda item: (item.get_closest_marker("e2e") is not None, _run_order(item)))
