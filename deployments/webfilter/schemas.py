"""Request bodies and response models of the web filter API."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool

SQLITE_MAX_INT = 2**63 - 1
RowId = Annotated[int, Field(ge=1, le=SQLITE_MAX_INT)]  # a list entry's id (SQLite INTEGER range)


class ErrorBody(BaseModel):
    """Every error: `{status: "error", detail}`; a 500 adds `code: "internal_error"`."""

    status: Literal["error"]
    detail: str
    code: str | None = None


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LoginBody(Body):
    username: str = Field(..., min_length=1, max_length=100)
    password: str = Field(..., min_length=1, max_length=256)


class RefreshBody(Body):
    refresh_token: str = Field(..., min_length=1, max_length=4096)


class LogoutBody(Body):
    refresh_token: str | None = Field(None, max_length=4096)


class ChangePasswordBody(Body):
    current_password: str = Field(..., min_length=1, max_length=256)
    new_password: str = Field(..., min_length=1, max_length=256)


class IpBody(Body):
    ip: str = Field(..., min_length=1, max_length=100)
    description: str = Field("", max_length=500)


class DomainBody(Body):
    domain: str = Field(..., min_length=1, max_length=300)
    description: str = Field("", max_length=500)


class EgressBody(Body):
    entry: str = Field(..., min_length=1, max_length=300)
    description: str = Field("", max_length=500)


class IdsBody(Body):
    ids: list[RowId] = Field(..., min_length=1, max_length=100_000)


class ImportBody(Body):
    url: str | None = Field(None, max_length=2000)
    content: str | None = Field(None, max_length=50_000_000)
    description: str = Field("", max_length=500)


class UnifiedImportBody(ImportBody):
    type: Literal["ip", "domain"]


class SubscriptionBody(Body):
    url: str = Field(..., min_length=1, max_length=2000)
    type: Literal["ip", "domain"] = "domain"
    interval_seconds: int = Field(86400, ge=1, le=30 * 86400)
    description: str = Field("", max_length=500)


class GeoImportBody(Body):
    countries: list[str] = Field(..., min_length=1, max_length=20)


class WafToggleBody(Body):
    category: str = Field(..., min_length=1, max_length=100)
    enabled: StrictBool  # "no", "off", 0 are refused (422), never read as a boolean


class TestRuleBody(Body):
    regex: str = Field(..., min_length=1, max_length=1024)
    hours: int = Field(24, ge=1, le=168)


class RestoreBody(Body):
    config: dict[str, Any]


class AlertBody(BaseModel):
    model_config = ConfigDict(extra="allow")
    category: str = Field("WAF", max_length=100)
    message: str = Field("", max_length=2000)
    client_ip: str | None = Field(None, max_length=100)
    url: str | None = Field(None, max_length=4000)


TEST_MESSAGE = "rayfleet web filter test notification"


class NotifyBody(Body):
    message: str = Field(TEST_MESSAGE, max_length=1000)


class DnsDetectBody(Body):
    addresses: list[str] = Field(..., min_length=1, max_length=16)
    port: int = Field(53, ge=1, le=65535)


class Tokens(BaseModel):
    status: str
    access_token: str
    refresh_token: str
    token_type: str
    expires_in: int


class Envelope(BaseModel):
    """`{status: success, data}` (collections add `meta` and the deprecated top-level fields)."""

    model_config = ConfigDict(extra="allow")
    status: str
    data: Any = None


class Flat(BaseModel):
    model_config = ConfigDict(extra="allow")
    status: str
