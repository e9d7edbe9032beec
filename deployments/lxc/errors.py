"""The API's error shapes (spec §7), built in one place.

| situation                                   | status | body                                          |
|---------------------------------------------|--------|-----------------------------------------------|
| host command exited non-zero (or timed out) | 500    | {error, details (stderr), output, return_code} |
| the host says the object does not exist     | 404    | {error, message}                               |
| the host refuses: object busy/running/exists| 409    | {code, name, description}                      |
| the host refuses a parameter (PVE "400 ...")| 400    | {error}                                        |
| handler validation (body, query, ids list)  | 400    | {error}                                        |
| body over api.max_body_bytes                | 413    | {code, name, description}                      |
| missing/invalid API key                     | 401    | {code, name, description}                      |
| non-numeric {instance_id} in the path       | 400    | {code, name, description}                      |
| the host did not answer: a single-host zone's, a cluster node (the container's, the entry for its own commands, or every node) | 503 | {code, name, description} |
| the cluster has no quorum ("cluster not ready - no quorum?": start, migrate, clone; "unable to open file '/etc/pve/...' - Permission denied": every config write; "cfs-lock '...' error: no quorum!": pvesh's firewall writes) | 503 | {code, name, description: NO_QUORUM + the host's line} |
| unknown route / unhandled exception         | 404/500| {error, message}                               |
| any other framework HTTP exception          | status | {code, name, description}                      |
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from http import HTTPStatus

from fastapi.responses import JSONResponse


class BadRequest(Exception):
    """Handler validation failed: 400 {"error": message}."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class HTTPProblem(Exception):
    """A framework-style HTTP exception: {code, name, description}."""

    def __init__(self, status: int, description: str) -> None:
        super().__init__(description)
        self.status = status
        self.description = description


class NotFound(Exception):
    """A container, group, snapshot, volume... that does not exist: 404 {"error", "message"}."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# What Proxmox tools print when the object a request names is missing, busy, or a parameter is refused.
# Only these exact phrasings are mapped; any other non-zero exit stays the spec's 500.
_NOT_FOUND = re.compile(
    r"Configuration file '[^'\n]*' does not exist"
    r"|\b(?:storage|volume|snapshot|disk|archive|security group) '[^'\n]*' does not exist"
    r"|no such (?:security group|cluster node) '[^'\n]*'"
    r"|no rule at position \d+|unable to find VM '[^'\n]*'"
)
_CONFLICT = re.compile(
    r"CT \d+ already (?:running|exists)|CT \d+ not running|CT is locked|CT (?:\d+ )?is running"
    r"|container is running|snapshot name '[^'\n]*' already used|security group '[^'\n]*' already exists"
    r"|[Ss]ecurity group '[^'\n]*' is (?:not empty|used by)|protection mode enabled|cannot start a template"
    r"|convert a CT to template if the CT is running|can't migrate running container without"
    r'|Failed to exec "docker(?:-compose)?": No such file or directory'
)
_REFUSED = re.compile(
    r"^400 Parameter verification failed|unable to parse volume ID|does not support (?:container directories|vzdump)"
    r"|^target is local node|unable to shrink disk size",
    re.MULTILINE,
)


# The cluster lost quorum (too many nodes down): PVE refuses what changes it (start, migrate, clone) until
# a majority of its nodes is back, and pmxcfs makes /etc/pve read-only, so every config write (pct set,
# resize, snapshots, rollback, destroy, template, restore over a container, vzdump's backup lock, which
# vzdump reports as `ERROR: Backup of VM N failed - unable to open file ...`) fails to open its temporary
# file, and every cfs lock (pvesh's firewall writes) fails: PVE::Cluster's cfs_lock retries until its
# timeout, then says `no quorum!` (`error with cfs lock '<id>': no quorum!` in older versions). Nothing was done.
_UNAVAILABLE = re.compile(
    r"cluster not ready - no quorum\?"
    r"|unable to open file '/etc/pve/[^'\n]*' - Permission denied$"
    r"|cfs-lock '[^'\n]*' error: no quorum!$|error with cfs lock '[^'\n]*': no quorum!$",
    re.MULTILINE,
)
NO_QUORUM = "the cluster has no quorum (half or more of its nodes are down), so the host refused the change"


def classify(details: str) -> int:
    """The status a failed host command answers with: 404, 409, 400 or 503 for the phrasings above, else 500."""
    if _UNAVAILABLE.search(details):
        return 503
    if _NOT_FOUND.search(details):
        return 404
    if _CONFLICT.search(details):
        return 409
    if _REFUSED.search(details):
        return 400
    return 500


def describe(exc: CommandFailed) -> str:
    """A failed command's message. For a quorum refusal: that the cluster has no quorum, then the host's
    refusing lines alone (not cfs_lock's retries nor vzdump's log, which a job keeps in its output)."""
    if isinstance(exc, NoQuorum):
        return f"{NO_QUORUM}: {exc.details.strip()}"
    if exc.status == 503:
        lines = [line.strip() for line in exc.details.splitlines() if _UNAVAILABLE.search(line)]
        if lines:
            return f"{NO_QUORUM}: " + "\n".join(lines)
    return exc.details.strip()


class CommandFailed(Exception):
    """A host command exited non-zero; carries what the error body needs.

    `status` is the answer's status: given, or classified from `details` (see `classify`).
    """

    def __init__(self, details: str, output: str, return_code: int, status: int | None = None) -> None:
        super().__init__(details)
        self.details = details
        self.output = output
        self.return_code = return_code
        self.status = status if status is not None else classify(details)


class NodeDown(CommandFailed):
    """A zone's host (its single host, or a node of its cluster) did not answer (its SSH connection
    was refused or timed out): the command never ran. 503 {code, name, description} naming it."""

    def __init__(self, description: str) -> None:
        super().__init__(description, "", 255, status=503)


class NoQuorum(CommandFailed):
    """A refusal whose words do not name quorum (PVE's `Could not reserve ID N, already taken`), made while
    the cluster says it has none: 503, described as a quorum refusal."""

    def __init__(self, refused: CommandFailed) -> None:
        super().__init__(refused.details, refused.output, refused.return_code, status=503)


def combined_status(failures: list[CommandFailed]) -> int:
    """One status for several failures (bulk actions): 500 if any really failed, else the most severe."""
    statuses = {f.status for f in failures}
    for status in (500, 503, 409, 404, 400):
        if status in statuses:
            return status
    return 500


def combined_failure(failed: list[tuple[str, CommandFailed]], done: str) -> CommandFailed:
    """One error for a bulk action's failures, each line prefixed with its item (container id, host)."""
    details = "\n".join(f"{item}: {r.details.strip()}" for item, r in failed)
    return CommandFailed(details, done, failed[0][1].return_code, combined_status([r for _, r in failed]))


def bad_request(message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=400)


def _phrase(status: int) -> str:
    return HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else "Error"


def problem(status: int, description: str, headers: Mapping[str, str] | None = None) -> JSONResponse:
    return JSONResponse(
        {"code": status, "name": _phrase(status), "description": description}, status_code=status, headers=headers
    )


def bad_instance_id() -> JSONResponse:
    return problem(400, "instance_id must consist of digits only.")


def not_found(path: str) -> JSONResponse:
    return missing(f"The requested URL {path[:200]} was not found on the server.")


def missing(message: str) -> JSONResponse:
    return message_error(404, message)


def too_large(limit: int) -> JSONResponse:
    return problem(413, f"The request body is larger than the limit of {limit} bytes (api.max_body_bytes).")


INTERNAL_MESSAGE = "The server encountered an unexpected condition; see the server log."


def message_error(status: int, message: str, headers: Mapping[str, str] | None = None) -> JSONResponse:
    """{error: <status phrase>, message}: unknown routes, missing objects, the unhandled-exception 500."""
    return JSONResponse({"error": _phrase(status), "message": message}, status_code=status, headers=headers)


def from_command(exc: CommandFailed) -> JSONResponse:
    """The answer for a failed host command: the spec's 500 body, or 404/409/400 when the host named the cause."""
    first = describe(exc)
    if exc.status == 404:
        return missing(first[:500])
    if exc.status in (409, 503):
        return problem(exc.status, first[:500])
    if exc.status == 400:
        return bad_request(f"the host refused the request: {first[:500]}")
    return command_failed(exc.details, exc.output, exc.return_code)


def command_failed(details: str, output: str, return_code: int) -> JSONResponse:
    body: dict[str, str | int] = {
        "error": "Command execution failed",
        "details": details,
        "output": output,
        "return_code": return_code,
    }
    return JSONResponse(body, status_code=500)
