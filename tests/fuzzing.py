"""Schema-driven fuzzing of an app through its own OpenAPI document (schemathesis).

Every operation of the document gets `max_examples` generated requests, sent through
the app in-process; a response fails the run when it is a 5xx or breaks the
document (undocumented status code, wrong content type, body not matching its schema).
Bounded by examples and by a deadline per operation, so it fits in the suite's time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@dataclass
class FuzzReport:
    """What a fuzz run did: operations exercised, requests sent, failures by operation."""

    operations: list[str] = field(default_factory=list)
    requests: int = 0
    failures: dict[str, str] = field(default_factory=dict)


def describe(exc: BaseException) -> str:
    """The failure and, for a group, each failure in it (the first 2,000 characters of each)."""
    parts = [f"{type(exc).__name__}: {str(exc)[:2000]}"]
    if isinstance(exc, BaseExceptionGroup):
        parts += [describe(inner) for inner in exc.exceptions]
    return "\n".join(parts)


# what the fuzzer checks is the answer, not its speed: schemathesis' 10 s read timeout was reached on a
# loaded machine (load 12) by `GET /api/domain-blacklist/hits` (an analytics query and a proxy-actor call)
REQUEST_TIMEOUT_S = 60


def fuzz_asgi(
    app: Any,
    openapi_path: str,
    *,
    headers: dict[str, str] | None = None,
    max_examples: int = 25,
    skip: Iterable[str] = (),
) -> FuzzReport:
    """Fuzz every operation of `app`'s OpenAPI (except `skip`, as "METHOD /path") in-process."""
    schema = schemathesis.openapi.from_asgi(openapi_path, app)
    report = FuzzReport()
    skipped = set(skip)
    for result in schema.get_all_operations():
        operation = result.ok()
        label = f"{operation.method.upper()} {operation.path}"
        if label in skipped:
            continue
        report.operations.append(label)

        @given(case=operation.as_strategy())
        @settings(
            max_examples=max_examples,
            deadline=None,
            derandomize=True,
            database=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        def exercise(case: Any) -> None:
            report.requests += 1
            case.call_and_validate(headers=headers, checks=CHECKS, timeout=REQUEST_TIMEOUT_S)

        try:
            exercise()
        except (Exception, BaseExceptionGroup) as exc:  # keep going: one report lists every broken operation
            report.failures[label] = describe(exc)
    return report
