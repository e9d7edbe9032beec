"""The configuration of a host reached over SSH, shared by every component that has one.

Fields, path expansion and the host-key rule are the same wherever a component
talks to hosts over `rayfleet.ssh` (the container API's zones, the autoscaler's
nodes); a component subclasses `SSHHostConfig` to add its own fields and checks.
"""

from __future__ import annotations

import ipaddress
import os
import re

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rayfleet.paths import resolve

__all__ = ["SSHHostConfig", "expand_path", "host_address"]

_LABEL = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand_path(value: str) -> str:
    """`${NAME}` / `${NAME:-default}` expanded from the environment, then made absolute
    against the project folder (`RAYFLEET_HOME`), so replicas find demo files wherever they run."""
    expanded = _ENV_REF.sub(lambda m: os.environ.get(m.group(1)) or (m.group(2) or ""), value)
    return str(resolve(expanded))


def host_address(value: str) -> str:
    """`value` if it is an IP address (IPv6 with an optional `%zone`) or a host name: dot-separated
    labels of 1 to 63 letters, digits and hyphens (not first or last), 253 characters at most, an
    internationalised name in its ASCII `xn--` form. Else ValueError saying so (the key is named
    by pydantic's location)."""
    try:
        ipaddress.ip_address(value)
        return value
    except ValueError:
        pass
    name = value[:-1] if value.endswith(".") else value
    if name and len(name) <= 253 and all(_LABEL.match(label) for label in name.split(".")):
        return value
    shown = value[:80].encode("unicode_escape").decode("ascii")
    raise ValueError(
        f"'{shown}' is neither an IP address nor a host name (labels of 1 to 63 letters, digits or "
        "hyphens, 253 characters in all; an internationalised name in its xn-- form)"
    )


class SSHHostConfig(BaseModel):
    """A host reached over SSH with a pinned host key (`known_hosts`) unless checking is off."""

    model_config = ConfigDict(extra="forbid")

    host: str
    port: int = 22
    port_env: str | None = Field(default=None, description="environment variable overriding `port`")
    user: str = "root"
    key_file: str | None = None
    known_hosts: str | None = Field(default=None, description="OpenSSH known_hosts file holding the host key")
    host_key_checking: bool = Field(default=True, description="false disables host key checks (logged loudly)")
    max_sessions: int = Field(default=8, ge=1, le=64, description="concurrent commands on the pooled connection")
    connect_timeout: float = Field(default=15.0, gt=0)
    unreachable_backoff: float = Field(
        default=30.0,
        ge=0,
        le=3600,
        description="seconds a host whose connection timed out is not tried again (its requests answer "
        "at once as unreachable); 0 tries every time",
    )

    @field_validator("host")
    @classmethod
    def _address(cls, value: str) -> str:
        return host_address(value)

    @field_validator("key_file", "known_hosts")
    @classmethod
    def _paths(cls, value: str | None) -> str | None:
        return expand_path(value) if value else value

    @model_validator(mode="after")
    def _pinned(self) -> SSHHostConfig:
        if self.host_key_checking and not self.known_hosts:
            raise ValueError("host_key_checking is on: set known_hosts (a file with the host's key)")
        return self

    def effective_port(self) -> int:
        """`port`, or the number in the environment variable `port_env` when it is set."""
        if self.port_env and os.environ.get(self.port_env, "").isdigit():
            return int(os.environ[self.port_env])
        return self.port
