"""Response models: what each route answers, and the error bodies (spec §7) for the OpenAPI document.

`Output` is the spec's result envelope R when the text is the API's own. `Result` is R for
host text: `{"output": ...}`, or the command's JSON when its stdout starts with `{` or `[`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Out(BaseModel):
    model_config = ConfigDict(extra="allow")


class Health(BaseModel):
    status: str = Field(examples=["ok"])
    children: list[dict[str, Any]] | None = Field(
        default=None,
        description="supervised host processes (name, state, pid, restarts, last_exit), when configured",
    )


class Output(BaseModel):
    output: str = Field(description="the command's standard output (stripped)")


Result = Output | dict[str, Any] | list[Any]
JsonObject = dict[str, Any]
JsonList = list[dict[str, Any]]


class HostEntry(BaseModel):
    region: str
    az: str
    host: str
    port: int
    addresses: list[str] | None = None
    reachable: bool
    node: str | None = None
    error: str | None = None


class TemplateEntry(BaseModel):
    volid: str = Field(examples=["local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"])
    size: str


class SecurityGroup(BaseModel):
    group: str
    comment: str
    rules: list[dict[str, Any]]


class Created(BaseModel):
    output: str
    instance_ids: list[str]


class JobAccepted(BaseModel):
    """A long operation accepted as a job (`Prefer: respond-async`); follow it at `url` (also `Location`)."""

    job_id: str
    kind: str
    state: str = "running"
    url: str


JOB_ACCEPTED: dict[int | str, dict[str, Any]] = {
    202: {"model": JobAccepted, "description": "with `Prefer: respond-async`: a job, at `Location`"}
}


class Cloned(BaseModel):
    output: str
    instance_id: str


class InstanceStatus(BaseModel):
    state: str = Field(description="`pct status`: running, stopped")
    loadavg: str | None = Field(default=None, description="running containers only")
    memory: dict[str, int] | None = Field(
        default=None, description="/proc/meminfo fields in kB, keys suffixed _kb (running containers only)"
    )
    disk: str | None = None
    swap: str | None = None
    error: str | None = Field(default=None, description="why this container's figures could not be read")


class BulkResult(BaseModel):
    outcome: str = Field(
        description="started, stopped, rebooted, destroyed, scaled; already running, already stopped, "
        "not rebooted: <state>; failed"
    )
    status: str | None = Field(
        description="the container's state afterwards (null when the action failed, and for scale, which does "
        "not change it)"
    )
    error: str | None = Field(description="the host's words when this container's action failed")


class BulkDone(Output):
    results: dict[str, BulkResult] = Field(description="per container id")


class UpdateResult(BaseModel):
    outcome: str = Field(description="upgraded; failed (the host's words in `error`); unreachable (never ran)")
    error: str | None = Field(description="why the node was not upgraded")


class UpdateDone(Output):
    results: dict[str, UpdateResult] = Field(
        description="per host: `region/az` for a single-host zone, `region/az@node` for each node of a cluster"
    )


class BackupDone(BaseModel):
    output: str
    archive: str | None = Field(description="the archive vzdump wrote, as it reported it")
    downloaded_to: str | None = Field(default=None, description="local copy when `download` was true")


class ScaleCheck(BaseModel):
    instance_id: str
    status: str | None
    usage: dict[str, float]
    current: dict[str, int]
    thresholds: dict[str, float]
    recommendations: list[str]


class NetCheck(BaseModel):
    instance_id: str
    protocol: str
    port: int
    open: bool
    output: str


class Info(BaseModel):
    instance_id: str
    ip_addresses: list[str]
    hostname: str
    dns_servers: list[str]
    host_node: str


class HealthCheck(BaseModel):
    instance_id: str
    healthy: bool
    checks: dict[str, Any] = Field(description="running, disk_percent, dns")
    actions: list[str]


class Resources(Out):
    instance_id: str
    status: str | None
    free: str | None = Field(default=None, description="`free -m` inside a running container")


class Listening(BaseModel):
    protocol: str
    address: str
    port: int


class Report(Out):
    instance_id: str
    node: str
    config: dict[str, Any]
    status: dict[str, Any]
    snapshots: list[dict[str, Any]]
    listening: list[Listening] | None = None
    scale_check: ScaleCheck | None = None


class Discovered(BaseModel):
    instance_id: str
    name: str | None
    status: str | None
    listening: list[Listening] | None = None
    error: str | None = Field(default=None, description="a cluster zone: the container's node did not answer")


class SecurityScan(BaseModel):
    instance_id: str
    scan_type: str
    listening: list[Listening]
    findings: list[str]
    pending_updates: list[str] | None = None
    os: str | None = None


# ------------------------------------------------------------------ error bodies (spec §7)
class ErrorBody(BaseModel):
    """Handler validation failed (and a parameter the host refused)."""

    error: str


class Problem(BaseModel):
    """A framework-style HTTP exception: key, path hook, 403, 405, 409, 413."""

    code: int
    name: str
    description: str


class NotFoundBody(BaseModel):
    """Unknown route, or an object the host says does not exist; also the unhandled-exception 500."""

    error: str
    message: str


class CommandFailedBody(BaseModel):
    """The host command ran and exited non-zero (124: timed out)."""

    error: str = Field(examples=["Command execution failed"])
    details: str = Field(description="the command's stderr")
    output: str = Field(description="the command's stdout, if any")
    return_code: int


def _doc(model: Any, description: str) -> dict[str, Any]:
    return {"model": model, "description": description}


ERRORS: dict[int | str, dict[str, Any]] = {
    400: _doc(ErrorBody | Problem, "handler validation {error}; non-numeric {instance_id} path segment {code,...}"),
    401: _doc(Problem, "missing or invalid X-API-Key"),
    404: _doc(NotFoundBody, "unknown route, or the container/group/snapshot/volume does not exist on the host"),
    409: _doc(Problem, "the container is busy, running/not running, or the object already exists"),
    413: _doc(Problem, "request body larger than api.max_body_bytes"),
    500: _doc(CommandFailedBody | NotFoundBody, "host command failed {error,details,output,return_code}"),
    503: _doc(
        Problem,
        "the host did not answer over SSH (refused or timed out; the command never ran): a single-host zone's "
        "host, a cluster's node holding the container, its entry for its own commands, or every node; or the "
        "cluster has no quorum (too many nodes down): every write to its configuration (start, migration, "
        "clone, config and firewall edits, snapshots, backups, restores) is refused, the description says so",
    ),
}
"""Error answers every protected route may give."""

OPEN_ERRORS: dict[int | str, dict[str, Any]] = {500: ERRORS[500]}
EXEC_ERRORS: dict[int | str, dict[str, Any]] = {403: _doc(Problem, "host command execution is disabled")}
