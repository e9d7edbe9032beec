"""Request and response bodies of the autoscale API."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

MIN_ID, MAX_ID = 100, 999_999
# ASCII digits only (str.isdigit and int() also take Arabic-Indic, full-width and superscript
# digits), and few enough that int() never meets its 4,300-digit limit
ID_TEXT = re.compile(r"[0-9]{1,12}", re.ASCII)


def normalise_id(value: Any) -> str:
    """A container id as ASCII digits (100-999999), sent as a JSON integer or a string of digits;
    a float (101.0), a bool, a sign, an exponent or any other digit script is refused."""
    message = f"container id must be ASCII digits in {MIN_ID}-{MAX_ID}"
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(message)
    if isinstance(value, int):
        number = value
    else:
        text = value.strip()
        if not ID_TEXT.fullmatch(text):
            raise ValueError(message)
        number = int(text)
    if not MIN_ID <= number <= MAX_ID:
        raise ValueError(message)
    return str(number)


class Target(BaseModel):
    """The container: `lxc_id`, `vm_id` or `container_id` (one is enough; all must agree)."""

    model_config = ConfigDict(extra="ignore")

    lxc_id: int | str | None = None
    vm_id: int | str | None = None
    container_id: int | str | None = None

    @field_validator("lxc_id", "vm_id", "container_id", mode="before")
    @classmethod
    def _strict_id(cls, value: Any) -> str | None:
        """Checked before pydantic's lax int would turn 101.0 into 101."""
        return None if value is None else normalise_id(value)

    @model_validator(mode="after")
    def _one_id(self) -> Target:
        given = {normalise_id(v) for v in (self.lxc_id, self.vm_id, self.container_id) if v is not None}
        if not given:
            raise ValueError("lxc_id (or vm_id / container_id) is required")
        if len(given) > 1:
            raise ValueError("lxc_id, vm_id and container_id disagree")
        return self

    @property
    def vmid(self) -> str:
        return normalise_id(next(v for v in (self.lxc_id, self.vm_id, self.container_id) if v is not None))


class CoresBody(Target):
    model_config = ConfigDict(json_schema_extra={"examples": [{"lxc_id": 101, "cores": 2}]})

    cores: int = Field(ge=1, le=128)


class RamBody(Target):
    model_config = ConfigDict(json_schema_extra={"examples": [{"lxc_id": 103, "memory": 2048}]})

    memory: int = Field(ge=64, le=1_048_576, description="MB")


class StorageBody(Target):
    model_config = ConfigDict(json_schema_extra={"examples": [{"vm_id": "105", "disk_size": 1}]})

    disk_size: int = Field(ge=1, le=1024, description="GiB added to the root disk")


class Envelope(BaseModel):
    status: str
    message: str
    data: Any = None


class ConfigData(BaseModel):
    lxc_id: str
    vm_id: str
    host: str
    cores: int | None
    memory_mb: int | None


class StatusData(BaseModel):
    lxc_id: str
    vm_id: str
    host: str
    status: str


class ScaleData(BaseModel):
    lxc_id: str
    vm_id: str
    host: str
    resource: str
    value: int | str


class ConfigEnvelope(Envelope):
    data: ConfigData


class StatusEnvelope(Envelope):
    data: StatusData


class ScaleEnvelope(Envelope):
    data: ScaleData


class Check(BaseModel):
    ok: bool
    detail: str


class HealthBody(BaseModel):
    status: str
    checks: dict[str, Check]
    children: list[dict[str, Any]] | None = Field(
        default=None,
        description="supervised host processes (name, state, pid, restarts, last_exit), when configured",
    )


class DecisionRow(BaseModel):
    t: float
    host: str
    vmid: str
    resource: str
    action: str = Field(description="set, hold, flag or skip")
    outcome: str = Field(description="applied, failed, dry_run, held, refused_capacity, flagged or skipped")
    current: int
    target: int
    reason: str
    inputs: dict[str, Any]
    applied: bool
    dry_run: bool
    error: str | None


class DecisionsData(BaseModel):
    decisions: list[DecisionRow]
    kept: int = Field(description="decisions the scaler holds now")
    capacity_kept: int = Field(description="the most it holds (scaler.decisions_kept)")


class DecisionsEnvelope(Envelope):
    data: DecisionsData


class TimelinePoint(BaseModel):
    t: float
    cores: int
    cpu_cores_used: float
    cpu_pct: float
    memory_mb: float
    memory_used_mb: float


class Timeline(BaseModel):
    vmid: str
    host: str
    tier: str
    samples: list[TimelinePoint]
    decisions: list[DecisionRow]


class TimelinesData(BaseModel):
    containers: list[Timeline]


class TimelinesEnvelope(Envelope):
    data: TimelinesData
